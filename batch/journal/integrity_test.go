package journal

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// TestIntegrityCheckFindings: a journal whose index no longer matches its
// table (its definition rewritten behind SQLite's back) has findings,
// each of them returned; a sound one has none.
func TestIntegrityCheckFindings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	admit(t, j, 2, "R-1", "aaa")
	admit(t, j, 3, "R-2", "bbb")
	if problems, err := j.IntegrityCheck(); err != nil || len(problems) != 0 {
		t.Fatalf("sound journal: %v, %v; want no findings", problems, err)
	}
	j.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE x(a)`, `CREATE INDEX xi ON x(a)`, `INSERT INTO x VALUES (1), (2), (3)`,
		`PRAGMA writable_schema=ON`, `UPDATE sqlite_master SET sql='CREATE INDEX xi ON x(a DESC)' WHERE name='xi'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	j, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	problems, err := j.IntegrityCheck()
	if err != nil || len(problems) < 2 {
		t.Errorf("index out of order: %q, %v; want its findings", problems, err)
	}
}
