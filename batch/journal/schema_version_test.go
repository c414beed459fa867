package journal

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRefusesOtherSchemaVersions: a journal of a schema version this
// build does not know (a newer build's, or none) is refused by Open with
// both versions named, and keeps the version it had: relabelling a newer
// journal as this build's would let this build write rows it does not
// understand.
func TestOpenRefusesOtherSchemaVersions(t *testing.T) {
	for _, v := range []string{fmt.Sprint(schemaVersion + 1), "0"} {
		path := filepath.Join(t.TempDir(), "journal.db")
		j, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`UPDATE meta SET value=? WHERE key='schema_version'`, v); err != nil {
			t.Fatal(err)
		}
		db.Close()
		want := fmt.Sprintf("journal schema version %s, this refbatch reads 1 to %d", v, schemaVersion)
		if j, err := Open(path); err == nil || !strings.Contains(err.Error(), want) {
			if err == nil {
				j.Close()
			}
			t.Errorf("version %s: Open = %v; want …%s…", v, err, want)
		}
		db, err = sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&got); err != nil || got != v {
			t.Errorf("version %s: after Open the journal says %q, %v", v, got, err)
		}
		db.Close()
	}
}
