package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymlinkLoop: a manifest path that is a symlink loop, or that runs
// through a folder that is one, is rejected unreadable with the detail
// "the path is a symlink loop", not missing_file (the file is not missing:
// it cannot be reached). No OCR: both rows are rejected at admission.
func TestSymlinkLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, target := range map[string]string{"a.pdf": "b.pdf", "b.pdf": "a.pdf", "docs": "docs"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	manifest := filepath.Join(dir, "m.csv")
	body := hdr5 + "R-1,P-1,2024-01-02,yes,a.pdf\nR-2,P-2,2024-01-02,yes,docs/R-2.pdf\n"
	if err := os.WriteFile(manifest, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	r := refbatch(t, nil, "run", "--plaintext", "--out", out, "--workers", "1", manifest)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d, want %d\n%s", r.code, exitNeedsPerson, r.stderr)
	}
	for _, line := range []string{"line=2 source_id=R-1 reason=unreadable", "line=3 source_id=R-2 reason=unreadable"} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr lacks %q\n%s", line, r.stderr)
		}
	}
	if n := strings.Count(r.stderr, `detail="the path is a symlink loop"`); n != 2 {
		t.Errorf("%d rows say the path is a symlink loop, want 2\n%s", n, r.stderr)
	}
	for _, row := range readReport(t, out).Rows {
		if row.State != "rejected" || row.Reason != "unreadable" {
			t.Errorf("row %s: %s %s, want rejected unreadable", row.SourceID, row.State, row.Reason)
		}
	}
}
