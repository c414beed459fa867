package journal

import (
	"errors"
	"sync"
	"testing"
)

func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`UPDATE d SET a=?, b=? WHERE id=?`, `UPDATE d SET a=$1, b=$2 WHERE id=$3`},
		{`SELECT '?' || ? FROM t WHERE x='it''s?' AND y=?`, `SELECT '?' || $1 FROM t WHERE x='it''s?' AND y=$2`},
	}
	for _, tt := range tests {
		if got := rebind(tt.in); got != tt.want {
			t.Errorf("rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPostgresOpen: machines opening one empty database at once make one
// schema; a read-only journal refuses to write, and refuses a database
// that holds no journal.
func TestPostgresOpen(t *testing.T) {
	url := postgresSchema(t)
	if _, err := OpenReadOnly(url); !errors.Is(err, ErrNotJournal) {
		t.Errorf("OpenReadOnly(empty schema) = %v, want ErrNotJournal", err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j, err := Open(url)
			if err != nil {
				t.Error(err)
				return
			}
			j.Close()
		}()
	}
	wg.Wait()
	r, err := OpenReadOnly(url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	root, err := r.Root()
	if err != nil || root.Events != 1 {
		t.Errorf("Root() = %+v, %v; want the one event of the schema's creation", root, err)
	}
	if err := r.SetMeta("k", "v"); err == nil {
		t.Error("a read-only journal wrote")
	}
}
