package journal

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
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

// downgrade turns the journal at path back into schema version 1, as an
// earlier build wrote it.
func downgrade(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		`DROP TABLE admitters`, `ALTER TABLE runs DROP COLUMN heartbeat_at`,
		`DROP TABLE deliveries`, `DROP TABLE outbox`,
		`DROP INDEX events_document`, `DROP TABLE events`,
		`ALTER TABLE documents DROP COLUMN attempts_base`, `ALTER TABLE documents DROP COLUMN retry_policy`,
		`ALTER TABLE documents DROP COLUMN content_sha256`, `ALTER TABLE documents DROP COLUMN artifact_size`,
		`ALTER TABLE rows DROP COLUMN admit_key`, `ALTER TABLE rows DROP COLUMN fields`,
		`UPDATE meta SET value='1' WHERE key='schema_version'`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestSchemaVersion1: a journal an earlier build wrote reads, read-only
// and unchanged, as one without events, and Open migrates it keeping
// everything it held.
func TestSchemaVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	admit(t, j, 2, "R-1", "aa")
	j.Close()
	downgrade(t, path)
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	before, _ := os.ReadFile(path)

	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly(version 1) = %v", err)
	}
	n := 0
	if err := r.Events(func(Event) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("Events on version 1 = %d, %v; want none", n, err)
	}
	if _, ok, err := r.DocumentBySource("R-1"); err != nil || !ok {
		t.Errorf("DocumentBySource = %v, %v", ok, err)
	}
	if _, ok, err := r.Row("m.csv", 2); err != nil || !ok {
		t.Errorf("Row = %v, %v", ok, err)
	}
	if err := r.Documents(func(Doc) error { return nil }); err != nil {
		t.Errorf("Documents = %v", err)
	}
	r.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("OpenReadOnly changed a version 1 journal")
	}

	j, err = Open(path)
	if err != nil {
		t.Fatalf("Open(version 1) = %v", err)
	}
	defer j.Close()
	if v, _ := j.Meta("schema_version"); v != fmt.Sprint(schemaVersion) {
		t.Errorf("schema_version after Open = %q, want %d", v, schemaVersion)
	}
	if _, ok, err := j.DocumentBySource("R-1"); err != nil || !ok {
		t.Errorf("after migration DocumentBySource = %v, %v", ok, err)
	}
	err = j.tx(func(tx *sql.Tx) error {
		return j.appendEvent(tx, Event{Kind: EventDecision, SourceID: "R-1", DocID: 1, Data: []byte(`{"action":"accept"}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	j.Events(func(e Event) error { got = append(got, e); return nil }, HistoryKinds...)
	if len(got) != 1 || got[0].Kind != EventDecision || got[0].DocID != 1 || got[0].At.IsZero() {
		t.Errorf("events after migration = %+v", got)
	}
	// Migration sealed the journal: its custody log covers every row it
	// held, and the event appended since.
	c, err := j.CheckChain()
	if err != nil || c.Legacy || len(c.Problems) != 0 || c.Root.Events != 2 {
		t.Errorf("CheckChain after migration = %+v, %v", c, err)
	}
}
