package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultsCheck: refbench defaults fails when the default reads
// slower than 0.9 of the limit by CPU on any corpus, whatever --cascade
// does, and prints both ratios.
func TestDefaultsCheck(t *testing.T) {
	corpus := func(name string, def, cascade float64) *defaultsResult {
		return &defaultsResult{Corpus: defaultsCorpus{Name: name}, Limit: &limitResult{Pages: 10, PagesPerMinute: 100, WallPagesPerMinute: 90},
			Runs: map[string]*defaultsRun{
				"default": {runResult: &runResult{Pages: 10}, VsLimit: def},
				"cascade": {runResult: &runResult{Pages: 10}, VsLimit: cascade},
			}}
	}
	tests := []struct {
		name    string
		results []*defaultsResult
		want    bool
	}{
		{"every corpus at 0.9 or more", []*defaultsResult{corpus("bench", 1.1, 1.2), corpus("eval", 0.9, 0.6)}, true},
		{"one corpus under", []*defaultsResult{corpus("bench", 1.1, 1.2), corpus("eval", 0.89, 1.3)}, false},
		{"a corpus without a default run", []*defaultsResult{{Corpus: defaultsCorpus{Name: "real"}, Runs: map[string]*defaultsRun{}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if got := writeDefaultsTable(&b, tt.results, 0.9); got != tt.want {
				t.Errorf("check = %t, want %t:\n%s", got, tt.want, b.String())
			}
			if !strings.Contains(b.String(), "want >= 0.90") {
				t.Errorf("the table does not state the check:\n%s", b.String())
			}
		})
	}
}

// TestDefaultsCorpora: the real corpus gets a manifest of its PDFs, its
// IDs unchecked; absent, it is skipped with a note, not an error.
func TestDefaultsCorpora(t *testing.T) {
	real := t.TempDir()
	for _, n := range []string{"a.pdf", "b.pdf", "notes.txt"} {
		os.WriteFile(filepath.Join(real, n), []byte("%PDF-1.4\n"), 0o600)
	}
	got, notes, err := defaultsCorpora(defaultsOptions{Real: real, Out: t.TempDir()})
	if err != nil || len(got) != 1 || len(notes) != 0 {
		t.Fatalf("corpora %+v, notes %v, err %v", got, notes, err)
	}
	records, err := readCSVFile(got[0].Manifest)
	if err != nil || len(records) != 3 || records[1][4] != "a.pdf" || !strings.Contains(strings.Join(got[0].Flags, " "), "--no-id-check") {
		t.Errorf("real corpus manifest %v (%v), flags %v", records, err, got[0].Flags)
	}
	got, notes, err = defaultsCorpora(defaultsOptions{Real: filepath.Join(real, "absent"), Out: t.TempDir()})
	if err != nil || len(got) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "skipped") {
		t.Errorf("absent real corpus: corpora %+v, notes %v, err %v", got, notes, err)
	}
}

// TestReadRows: the limit reads the pages of the rows the default run
// read (done or review), not those rejected at admission.
func TestReadRows(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "manifest.csv")
	os.WriteFile(m, []byte("source_id,path\nR-1,docs/1.pdf\nR-2,docs/2.pdf\nR-3,docs/3.pdf\n"), 0o600)
	rep := filepath.Join(dir, "report.json")
	os.WriteFile(rep, []byte(`{"rows":[{"manifest_line":2,"state":"done","pages":2},{"manifest_line":3,"state":"rejected","pages":0},{"manifest_line":4,"state":"review","pages":1}]}`), 0o600)
	c, pages, err := readRows(defaultsCorpus{Dir: dir, Manifest: m}, rep)
	if err != nil || pages != 3 || len(c.rows) != 2 || c.rows[1].path != filepath.Join(dir, "docs/3.pdf") {
		t.Errorf("rows %+v, pages %d, err %v", c, pages, err)
	}
}
