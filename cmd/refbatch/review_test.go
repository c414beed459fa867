package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/batchtest/finished"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/review"
)

// runNeedsPerson is run's exit code when it finished with rows in review
// or rejected.
const runNeedsPerson = exitNeedsPerson

// TestReviewDecisions starts from three documents in review
// low_confidence, as a reading at too low a resolution leaves them (built
// without OCR, batchtest/finished), then decides: the first is sent
// back for another reading at 400 DPI, which the next run does (done); the
// second is accepted with a note; the third rejected. The report and
// verify show each decision and who made it; a second decision on a
// decided row is refused, and listing writes nothing.
func TestReviewDecisions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Three documents in review, without OCR: read at 60 DPI, their words
	// are doubted (batchtest:conf=70, which real OCR reads as a line of
	// text). A retry reads R-0001 again with real OCR, which finds its ID
	// and date.
	var rows []finished.Row
	for i, id := range []string{"R-0001", "R-0002", "R-0003"} {
		r := finished.Good(id, fmt.Sprintf("P-%06d", 310001+i), "2024-03-14")
		r.Lines = append(r.Lines, "batchtest:conf=70")
		rows = append(rows, r)
	}
	out := filepath.Join(dir, "out")
	manifest, _ := finishedBatchWith(t, dir, out, rows, func(o *batch.Options) {
		o.DPI, o.PageTimeout = 60, 120*time.Second
	})
	run := []string{"run", "--plaintext", "--out", out, "--page-timeout", "120s", "--quiet", "--dpi", "60", manifest}
	if r := refbatch(t, nil, run...); r.code != runNeedsPerson {
		t.Fatalf("run at 60 DPI: exit %d, want %d\n%s", r.code, runNeedsPerson, r.stderr)
	}

	// The list: every row needing a person, with what to look at; it
	// writes nothing.
	before := folderState(t, out)
	r := refbatch(t, nil, "review", "--out", out, "--json")
	if r.code != 0 {
		t.Fatalf("review: exit %d\n%s", r.code, r.stderr)
	}
	var listed []review.ReviewItem
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatalf("review --json: %v\n%s", err, r.stdout)
	}
	if len(listed) != 3 || listed[0].SourceID != "R-0001" || listed[0].ManifestLine != 2 || listed[0].Reason == "" || listed[0].Pages == 0 {
		t.Fatalf("review lists %+v, want R-0001..R-0003 with line, reason and pages", listed)
	}
	if r := refbatch(t, nil, "review", "--out", out); r.code != 0 || !strings.Contains(r.stdout, "R-0003") || !strings.Contains(r.stdout, "3 in review") {
		t.Fatalf("review: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := folderState(t, out); after != before {
		t.Errorf("listing the review lane changed the folder:\n%s\nto\n%s", before, after)
	}

	env := []string{"USER=alice"}
	for _, c := range [][]string{
		{"review", "retry", "--out", out, "--dpi", "400", "--note", "read again sharper", "R-0001"},
		{"review", "accept", "--out", out, "--note", "checked against the paper file", "R-0002"},
		{"review", "reject", "--out", out, "--note", "not a referral", "R-0003"},
	} {
		if r := refbatch(t, env, c...); r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(c, " "), r.code, r.stderr)
		}
	}
	// Decided once: a second decision is refused, naming the row's state
	// and the first decision.
	r = refbatch(t, env, "review", "accept", "--out", out, "R-0002")
	if r.code != 2 || !strings.Contains(r.stderr, "R-0002 is done") || !strings.Contains(r.stderr, "accept by alice") {
		t.Fatalf("second accept: exit %d, want 2 naming R-0002, its state and the first decision\n%s", r.code, r.stderr)
	}
	if r := refbatch(t, env, "review", "reject", "--out", out, "R-9999"); r.code != 2 || !strings.Contains(r.stderr, "R-9999") {
		t.Fatalf("a decision about no document: exit %d, want 2 naming it\n%s", r.code, r.stderr)
	}
	if r := refbatch(t, env, "review", "retry", "--out", out, "--dpi", "0", "R-0001"); r.code != 2 {
		t.Fatalf("retry --dpi 0: exit %d, want 2\n%s", r.code, r.stderr)
	}
	// A retry's language must be installed, as a run's must.
	if r := refbatch(t, env, "review", "retry", "--out", out, "--lang", "eng+zzz", "R-0001"); r.code != 2 ||
		!strings.Contains(r.stderr, "refbatch: error: no Tesseract data for zzz in ") {
		t.Fatalf("retry --lang eng+zzz: exit %d, want 2 naming zzz\n%s", r.code, r.stderr)
	}

	// The next run reads R-0001 again, at 400 DPI, though its own flags
	// say 60; the other rows are untouched.
	// R-0003 stays rejected, rejected_by_person: a person decided, so
	// nothing is left to do and the run exits 0.
	if r := refbatch(t, nil, run...); r.code != 0 {
		t.Fatalf("run after the decisions: exit %d, want 0\n%s", r.code, r.stderr)
	}
	rep := readReport(t, out)
	want := map[string][2]string{"R-0001": {"done", "retry"}, "R-0002": {"done", "accept"}, "R-0003": {"rejected", "reject"}}
	for _, row := range rep.Rows {
		w := want[row.SourceID]
		if string(row.State) != w[0] || row.Decision == nil || row.Decision.Action != w[1] || row.Decision.User != "alice" || row.Decision.Host == "" {
			t.Errorf("%s: %s decision %+v, want %s after %s by alice", row.SourceID, row.State, row.Decision, w[0], w[1])
		}
		if row.SourceID == "R-0003" && row.Reason != "rejected_by_person" {
			t.Errorf("R-0003 rejected %s, want rejected_by_person", row.Reason)
		}
	}
	art := readArtifact(t, out, "R-0001")
	if art.Provenance.Attempt != 2 || art.Provenance.DPI != 400 {
		t.Errorf("R-0001 read again as attempt %d at %d DPI, want attempt 2 at 400", art.Provenance.Attempt, art.Provenance.DPI)
	}
	for _, p := range art.Pages {
		if p.DPI != 400 {
			t.Errorf("R-0001 page %d read at %d DPI after the retry, want 400", p.Index, p.DPI)
		}
	}
	// The artifact the retry superseded stays, beside the new one.
	if old, _ := filepath.Glob(filepath.Join(out, "artifacts", "R-0001_*_a1.json")); len(old) != 1 {
		t.Errorf("the superseded artifact of R-0001 is gone: %v", old)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "decided by a person") || !strings.Contains(string(html), "alice") {
		t.Error("report.html does not mark the decisions or name who made them")
	}
	r = refbatch(t, nil, "verify", "--out", out)
	if r.code != 0 || !strings.Contains(r.stdout, "decisions checked 3") {
		t.Fatalf("verify: exit %d, want 0 counting 3 decisions\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// readArtifact reads a plaintext document's artifact, found through the
// report.
func readArtifact(t *testing.T, out, sourceID string) layout.Artifact {
	t.Helper()
	for _, row := range readReport(t, out).Rows {
		if row.SourceID != sourceID || row.Artifact == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, row.Artifact))
		if err != nil {
			t.Fatal(err)
		}
		var a layout.Artifact
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	t.Fatalf("no artifact for %s in the report", sourceID)
	return layout.Artifact{}
}

// folderState lists a folder's files with their sizes and times, to show
// that a command wrote nothing.
func folderState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s\n", path, fi.Size(), fi.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
