package journal

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// folderSums is each file of dir with the SHA-256 of its bytes: what a
// read must leave as it found it.
func folderSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sums[e.Name()] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	return sums
}

// TestOpenReadOnlyHotWAL: a journal whose write-ahead log still holds
// committed transactions and no connection (a killed run: its -shm file
// stale, or missing in a copy) is read whole, log included, and its
// folder is left byte for byte as it was. A journal a connection of this
// process holds is read as it stands now.
func TestOpenReadOnlyHotWAL(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	path := filepath.Join(src, "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	admit(t, j, 2, "R-1", "aa")
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no write-ahead log with content: %v", err)
	}
	// Live, in this process: read as usual.
	if !walInUse(path) {
		t.Error("walInUse = false while this process holds the journal")
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.DocumentBySource("R-1"); err != nil || !ok {
		t.Errorf("live: DocumentBySource = %v, %v", ok, err)
	}
	r.Close()

	for _, tc := range []struct {
		name  string
		files []string
	}{
		{"stale shm", []string{"journal.db", "journal.db-wal", "journal.db-shm"}},
		{"no shm", []string{"journal.db", "journal.db-wal"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range tc.files {
				b, err := os.ReadFile(filepath.Join(src, n))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, n), b, 0o400); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, 0o500); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(dir, 0o700)
			before := folderSums(t, dir)
			if walInUse(filepath.Join(dir, "journal.db")) {
				t.Error("walInUse = true on a copy no connection holds")
			}
			r, err := OpenReadOnly(filepath.Join(dir, "journal.db"))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok, err := r.DocumentBySource("R-1"); err != nil || !ok {
				t.Errorf("DocumentBySource = %v, %v: the log's transactions are not read", ok, err)
			}
			if problems, err := r.IntegrityCheck(); err != nil || len(problems) > 0 {
				t.Errorf("IntegrityCheck = %v, %v", problems, err)
			}
			if err := r.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
			after := folderSums(t, dir)
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Errorf("the folder changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}
