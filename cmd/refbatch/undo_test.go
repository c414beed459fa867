package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestReviewUndo: an accept taken back with review undo puts the document
// in review again, shown by review --json, the report and verify; the
// undo is one more decision, and a second one is refused.
func TestReviewUndo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	row := tinyRow(t, dir, "U-1", 1)
	row[1] = "P-000000"
	manifest := writeRows(t, dir, [][4]string{row})
	out := filepath.Join(dir, "out")
	if r := refbatch(t, nil, append(runArgs(out), manifest)...); r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if r := refbatch(t, nil, "review", "accept", "--out", out, "--note", "looks right", "U-1"); r.code != exitOK {
		t.Fatalf("accept: exit %d\n%s", r.code, r.stderr)
	}
	r := refbatch(t, nil, "review", "undo", "--out", out, "--note", "clicked too fast", "U-1")
	if r.code != exitOK || !strings.Contains(r.stdout, "undo U-1: was done, in review again") {
		t.Fatalf("undo: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var items []review.ReviewItem
	if err := json.Unmarshal([]byte(refbatch(t, nil, "review", "--out", out, "--json").stdout), &items); err != nil ||
		len(items) != 1 || items[0].Reason != outcome.IDNotFound || items[0].Decision == nil || items[0].Decision.Action != "undo" {
		t.Errorf("review --json after the undo: %+v (%v)", items, err)
	}
	if r := refbatch(t, nil, "report", "--out", out); r.code != exitOK {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	if rows := readReport(t, out).Rows; len(rows) != 1 || rows[0].State != outcome.Review || rows[0].Decision == nil || rows[0].Decision.Action != "undo" {
		t.Errorf("report rows: %+v", rows)
	}
	if v := refbatch(t, nil, "verify", "--out", out); v.code != exitOK || !strings.Contains(v.stdout, "decisions checked 2") {
		t.Errorf("verify: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	if r := refbatch(t, nil, "review", "undo", "--out", out, "U-1"); r.code != exitUsage || !strings.Contains(r.stderr, "nothing to undo") {
		t.Errorf("a second undo: exit %d\n%s", r.code, r.stderr)
	}
}
