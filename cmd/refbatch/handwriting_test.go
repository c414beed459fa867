package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestUnreadNoteGoesToReview: a one-page referral from the evaluation
// corpus with a handwritten note (dkg's hand, in the bottom margin) that
// Tesseract cannot read ends review handwriting, never in band high, in
// report.json and in review's list. Read at 150 dpi to keep it cheap.
func TestUnreadNoteGoesToReview(t *testing.T) {
	t.Parallel()
	root := filepath.Join(repoRoot(t), "testdata", "eval")
	b, err := os.ReadFile(filepath.Join(root, "manifest.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	var row string
	for _, l := range lines {
		if strings.HasPrefix(l, "R-0081,") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("R-0081 (a handwritten note) is not in testdata/eval/manifest.csv")
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(manifest, []byte(lines[0]+row), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	run := []string{"run", "--plaintext", "--out", out, "--root", root, "--workers", "1", "--page-timeout", "120s", "--quiet", "--dpi", "150", manifest}
	if r := refbatch(t, nil, run...); r.code != runNeedsPerson {
		t.Fatalf("run: exit %d, want %d\n%s", r.code, runNeedsPerson, r.stderr)
	}
	rep := readReport(t, out)
	if len(rep.Rows) != 1 || rep.Rows[0].State != outcome.Review || rep.Rows[0].Reason != outcome.Handwriting || rep.Rows[0].Band == outcome.BandHigh {
		t.Fatalf("report.json rows %+v, want R-0081 review handwriting, not band high", rep.Rows)
	}
	r := refbatch(t, nil, "review", "--out", out, "--json")
	var listed []review.ReviewItem
	if err := json.Unmarshal([]byte(r.stdout), &listed); r.code != 0 || err != nil {
		t.Fatalf("review --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if len(listed) != 1 || listed[0].SourceID != "R-0081" || listed[0].Reason != outcome.Handwriting {
		t.Fatalf("review lists %+v, want R-0081 handwriting", listed)
	}
}
