package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// loopRow is one manifest row of the archivist's loop.
type loopRow struct{ sourceID, participant, date, path string }

func writeLoopManifest(t *testing.T, path string, rows []loopRow) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"source_id", "participant_id", "referral_date", "consent", "path", "sha256"})
	for _, r := range rows {
		w.Write([]string{r.sourceID, r.participant, r.date, "yes", r.path, ""})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestArchivistLoop plays the loop an archivist runs: a first run refuses
// a bad date, a path outside the root and a missing file (exit 4, and
// stderr says so even with --quiet); the archivist fixes the line, passes
// --root and adds the file; the same command again re-admits exactly those
// rows, and every row ends done, once each in the report, exit 0. Editing
// the path of a done row afterwards is refused (exit 2) naming the line.
func TestArchivistLoop(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	batchDir := filepath.Join(base, "batch")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(batchDir, "docs"), filepath.Join(base, "docs"), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// Tiny referrals: the loop is about admission and reruns, not reading.
	good, date, far := tinyLoopRow(t, batchDir, "R-0001", 740), tinyLoopRow(t, batchDir, "R-0003", 741), tinyLoopRow(t, base, "R-0004", 742)
	copyFile(t, filepath.Join(base, far.path), filepath.Join(outside, filepath.Base(far.path)))
	missing := loopRow{"R-0005", "P-100743", "2024-03-14", "docs/R-0005.pdf"}
	// Absolute paths: --root then only decides what is inside.
	abs := func(r loopRow, dir string) loopRow {
		r.path = filepath.Join(dir, filepath.Base(r.path))
		return r
	}
	good, date, missing = abs(good, filepath.Join(batchDir, "docs")), abs(date, filepath.Join(batchDir, "docs")), abs(missing, filepath.Join(batchDir, "docs"))
	far = abs(far, outside)
	rightDate := date.date
	date.date = strings.Replace(date.date, "-", "/", 1) // 2021/02-21: not YYYY-MM-DD

	manifest := filepath.Join(batchDir, "manifest.csv")
	writeLoopManifest(t, manifest, []loopRow{good, date, far, missing})
	out := filepath.Join(base, "out")
	args := append(runArgs(out, "--quiet"), manifest)

	r := refbatch(t, nil, args...)
	if r.code != exitNeedsPerson {
		t.Fatalf("first run: exit %d, want 4 (rows need a person)\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "3 rows need a person") || !strings.Contains(r.stderr, filepath.Join(out, "report.html")) {
		t.Errorf("first run with --quiet: stderr does not count the rows for a person and name the report:\n%s", r.stderr)
	}
	want := map[string]string{good.sourceID: "done/", date.sourceID: "rejected/bad_date", far.sourceID: "rejected/path_outside_root", missing.sourceID: "rejected/missing_file"}
	assertLoopReport(t, out, want)

	// The same command, nothing fixed: the same verdicts, no new work.
	if r := refbatch(t, nil, args...); r.code != exitNeedsPerson {
		t.Fatalf("unchanged rerun: exit %d, want 4\n%s", r.code, r.stderr)
	}
	assertLoopReport(t, out, want)

	// Fix each: the date on its line, the root, the file.
	date.date = rightDate
	writeLoopManifest(t, manifest, []loopRow{good, date, far, missing})
	writeFile(t, filepath.Dir(missing.path), filepath.Base(missing.path), tinyReferral(743, missing.participant, missing.date))
	args = append(runArgs(out, "--quiet", "--root", base), manifest)
	r = refbatch(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("rerun after the fixes: exit %d, want 0\n%s", r.code, r.stderr)
	}
	for id := range want {
		want[id] = "done/"
	}
	rep := assertLoopReport(t, out, want)
	for _, row := range rep.Rows {
		if row.SourceID == date.sourceID && len(row.History) == 0 {
			t.Errorf("%s: the earlier rejection is not in the row's history", row.SourceID)
		}
	}

	// A done row whose path changes is refused, naming the line; the
	// journal is left as it was. (A corrected participant_id or
	// referral_date is an amendment: TestAmendDoneRow.)
	changed := date
	changed.path = filepath.Join(batchDir, "docs", "elsewhere.pdf")
	writeLoopManifest(t, manifest, []loopRow{good, changed, far, missing})
	r = refbatch(t, nil, args...)
	if r.code != 2 || !strings.Contains(r.stderr, "line 3") || !strings.Contains(r.stderr, "path") {
		t.Fatalf("done row edited: exit %d, want 2 naming line 3 and path\n%s", r.code, r.stderr)
	}
	assertLoopReport(t, out, want)
}

// assertLoopReport checks that report.json holds each source_id once, in
// the wanted state/reason.
func assertLoopReport(t *testing.T, out string, want map[string]string) *report.Report {
	t.Helper()
	rep := readReport(t, out)
	seen := map[string]int{}
	for _, row := range rep.Rows {
		seen[row.SourceID]++
		if got := string(row.State) + "/" + string(row.Reason); got != want[row.SourceID] {
			t.Errorf("%s: %s, want %s", row.SourceID, got, want[row.SourceID])
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("%s appears %d times in report.json, want once", id, seen[id])
		}
	}
	return rep
}

// TestEditedReviewRowIsAmended: a row in review because its participant
// ID was mistyped is amended once the line is corrected: its artifact is
// validated again against the corrected ID, with no second reading, and
// it ends done; verify accepts its state through the amended event. A
// second rerun does nothing more.
func TestEditedReviewRowIsAmended(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	docs := filepath.Join(base, "docs")
	if err := os.MkdirAll(docs, 0o700); err != nil {
		t.Fatal(err)
	}
	r1 := tinyLoopRow(t, base, "R-0001", 750)
	rightID := r1.participant
	r1.participant = "P-000000"
	manifest := filepath.Join(base, "manifest.csv")
	writeLoopManifest(t, manifest, []loopRow{r1})
	out := filepath.Join(base, "out")
	args := append(runArgs(out, "--quiet"), manifest)

	if r := refbatch(t, nil, args...); r.code != exitNeedsPerson {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	assertLoopReport(t, out, map[string]string{r1.sourceID: "review/id_not_found"})

	r1.participant = rightID
	writeLoopManifest(t, manifest, []loopRow{r1})
	for i := range 2 {
		if r := refbatch(t, nil, args...); r.code != 0 {
			t.Fatalf("rerun %d after the fix: exit %d\n%s", i+1, r.code, r.stderr)
		}
		rep := assertLoopReport(t, out, map[string]string{r1.sourceID: "done/"})
		h := rep.Rows[0].History
		if len(h) != 1 || h[0].State != outcome.Review || h[0].Reason != outcome.IDNotFound || h[0].Event != string(journal.EventAmended) {
			t.Errorf("rerun %d: history %+v, want the earlier review id_not_found (amended)", i+1, h)
		}
		if rep.Rows[0].Attempts != 1 {
			t.Errorf("rerun %d: attempts %d, want 1 (not read again)", i+1, rep.Rows[0].Attempts)
		}
	}
	names, _ := os.ReadDir(filepath.Join(out, "artifacts"))
	if len(names) != 1 {
		t.Errorf("artifacts: %d files, want the one reading", len(names))
	}
	if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 {
		t.Errorf("verify: exit %d, want 0 (the amendment explains the state)\n%s%s", r.code, r.stdout, r.stderr)
	}
}
