package journal

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOpenRefusesOtherFiles: Open never adds its tables to a file that is
// not a refbatch journal, and leaves it byte for byte as it was.
func TestOpenRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", "file:"+other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE patients (name TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	text := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(text, []byte("these are someone's notes, not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{other, text} {
		before, _ := os.ReadFile(path)
		j, err := Open(path)
		if err == nil {
			j.Close()
		}
		if !errors.Is(err, ErrNotJournal) {
			t.Errorf("Open(%s) = %v; want ErrNotJournal", filepath.Base(path), err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("Open(%s) changed the file", filepath.Base(path))
		}
	}
	// An empty file is a journal not yet created.
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := Open(empty)
	if err != nil {
		t.Fatalf("Open(empty file) = %v", err)
	}
	j.Close()
}

// TestOpenReadOnlyCreatesNothing: reading a cleanly closed journal leaves
// its folder as it was (no -wal or -shm file appears).
func TestOpenReadOnlyCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	admit(t, j, 2, "R-1", "aa")
	j.Close()
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	list := func() []string {
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	before := list()
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.DocumentBySource("R-1"); err != nil || !ok {
		t.Errorf("DocumentBySource = %v, %v", ok, err)
	}
	r.Close()
	if after := list(); !slices.Equal(before, after) {
		t.Errorf("OpenReadOnly made files: before %v, after %v", before, after)
	}
}
