package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestUnreadNoteGoesToReview: a one-page referral from the evaluation
// corpus with a handwritten note (dkg's hand, in the bottom margin) that
// Tesseract cannot read ends review handwriting, never in band high, in
// report.json and in review's list, and every place that shows the row
// names the note's page: report.json, report.csv, report.html, review's
// list and --json, the desk's queue and document, and the
// rows_need_person notice (the page only). Read at 150 dpi to keep it
// cheap.
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
	events := filepath.Join(dir, "events.jsonl")
	run := []string{"run", "--plaintext", "--out", out, "--root", root, "--workers", "1", "--page-timeout", "120s", "--quiet", "--dpi", "150",
		"--notify-cmd", "cat >> " + events + "; echo >> " + events, manifest}
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
	checkNotePage(t, out, events, rep.Rows[0].Detail, listed[0].Detail)
}

// checkNotePage checks that the detail of R-0081, in review handwriting
// with its note on page 1, is the same sentence everywhere a person or a
// receiver meets the row, and that the notice holds the page alone.
func checkNotePage(t *testing.T, out, events, reportDetail, listDetail string) {
	t.Helper()
	const want = "a handwritten note on page 1 was not transcribed: read it in the scan"
	if reportDetail != want || listDetail != want {
		t.Errorf("detail: report.json %q, review --json %q; want %q", reportDetail, listDetail, want)
	}
	for _, name := range []string{"report.csv", "report.html"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not name the note's page (%q)", name, want)
		}
	}
	if r := refbatch(t, nil, "review", "--out", out); r.code != 0 || !strings.Contains(r.stdout, "    "+want+"\n") {
		t.Errorf("review: exit %d, want the detail under the row:\n%s%s", r.code, r.stdout, r.stderr)
	}
	q, err := review.DeskQueue(layout.Place{Out: out})
	if err != nil || len(q) != 1 || q[0].Detail != want {
		t.Errorf("desk queue %+v (%v), want R-0081 with detail %q", q, err, want)
	}
	d, err := review.DeskDocument(context.Background(), layout.Place{Out: out}, "R-0081", nil)
	if err != nil {
		t.Errorf("desk document: %v", err)
	} else if d.Detail != want {
		t.Errorf("desk document detail %q, want %q", d.Detail, want)
	}
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	var need map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		var ev struct {
			Type string
			Data map[string]any
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "rows_need_person" {
			need = ev.Data
		}
	}
	pages, _ := json.Marshal(need["handwriting_pages"])
	if string(pages) != `{"1":1}` {
		t.Errorf("rows_need_person's handwriting_pages %s, want {\"1\":1}; data %v", pages, need)
	}
	if strings.Contains(string(b), "R-0081") || strings.Contains(string(b), "transcribed") {
		t.Errorf("a notice names the document or carries the detail's words:\n%s", b)
	}
}
