package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestClassifyDiskFull: SQLite's "database or disk is full", ENOSPC and
// EDQUOT are a full disk, for the run to stop cleanly; SQLite's other
// errors are not.
func TestClassifyDiskFull(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{`CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)`, `INSERT INTO t VALUES (1, x'00')`} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	_, constraint := db.Exec(`INSERT INTO t VALUES (1, x'00')`)
	if _, err := db.Exec(`PRAGMA max_page_count = 3`); err != nil {
		t.Fatal(err)
	}
	_, full := db.Exec(`INSERT INTO t VALUES (2, ?)`, strings.Repeat("x", 1<<16))
	if constraint == nil || full == nil {
		t.Fatalf("the scratch database gave %v and %v; want a constraint error and a full one", constraint, full)
	}
	for _, c := range []struct {
		name string
		err  error
		full bool
	}{
		{"SQLITE_FULL", full, true},
		{"SQLITE_CONSTRAINT", constraint, false},
		{"ENOSPC", fmt.Errorf("write: %w", syscall.ENOSPC), true},
		{"EDQUOT", fmt.Errorf("write: %w", syscall.EDQUOT), true},
		{"another error", errors.New("no"), false},
	} {
		err := classify(c.err)
		if errors.Is(err, ErrDiskFull) != c.full || !errors.Is(err, c.err) {
			t.Errorf("%s: classify = %v; want a full disk: %t, wrapping the error", c.name, err, c.full)
		}
	}
}
