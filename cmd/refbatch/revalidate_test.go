package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/export"
	"github.com/refbatch/refbatch/batch/journal"
)

// journalFigures are the pages the batch in out recognised, over all its
// runs, and its events of the kinds given.
func journalFigures(t *testing.T, out string, kinds ...journal.EventKind) (pages, events int) {
	t.Helper()
	j, err := journal.OpenReadOnly(filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	tm, err := j.Timings()
	if err != nil {
		t.Fatal(err)
	}
	err = j.Events(func(journal.Event) error { events++; return nil }, kinds...)
	if err != nil {
		t.Fatal(err)
	}
	return tm.Pages, events
}

// tinyLoopRow writes a tiny referral into base's docs folder and returns
// its row, the path relative to base: these tests are about validating
// a reading again, not about reading, so their documents cost next to no
// OCR.
func tinyLoopRow(t *testing.T, base, sourceID string, seed int) loopRow {
	t.Helper()
	id, date := fmt.Sprintf("P-%06d", 100000+seed), "2024-03-14"
	rel := filepath.Join("docs", sourceID+".pdf")
	writeFile(t, base, rel, tinyReferral(seed, id, date))
	return loopRow{sourceID, id, date, rel}
}

// TestRevalidateNoIDCheck (issue 32, acceptance 2): five documents whose
// manifest rows carry IDs their text lacks go to review id_not_found;
// the same run with --no-id-check validates them again from their
// artifacts: all five done, no page recognised in that run, five
// revalidated events, and verify exits 0. A third run does nothing more.
func TestRevalidateNoIDCheck(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	var rows []loopRow
	for i, id := range []string{"R-0001", "R-0002", "R-0003", "R-0004", "R-0005"} {
		r := tinyLoopRow(t, base, id, 700+i)
		r.participant = "P-000000" // no scan carries it
		rows = append(rows, r)
	}
	manifest := filepath.Join(base, "manifest.csv")
	writeLoopManifest(t, manifest, rows)
	out := filepath.Join(base, "out")
	want := map[string]string{}
	for _, r := range rows {
		want[r.sourceID] = "review/id_not_found"
	}
	if r := refbatch(t, nil, append(runArgs(out, "--quiet"), manifest)...); r.code != exitNeedsPerson ||
		!strings.Contains(r.stderr, "5 rows need a person: 5 in review id_not_found") {
		t.Fatalf("first run: exit %d, want 4 naming 5 id_not_found\n%s", r.code, r.stderr)
	}
	assertLoopReport(t, out, want)
	pages, _ := journalFigures(t, out)

	r := refbatch(t, nil, append(runArgs(out, "--quiet", "--no-id-check"), manifest)...)
	if r.code != 0 || !strings.Contains(r.stdout, "validated again: 5 documents in review") || !strings.Contains(r.stdout, "5 moved") {
		t.Fatalf("run --no-id-check: exit %d, want 0 saying 5 moved\n%s%s", r.code, r.stdout, r.stderr)
	}
	for id := range want {
		want[id] = "done/"
	}
	rep := assertLoopReport(t, out, want)
	for _, row := range rep.Rows {
		if len(row.History) == 0 || row.History[len(row.History)-1].Event != string(journal.EventRevalidated) {
			t.Errorf("%s: history %+v, want the earlier review, revalidated", row.SourceID, row.History)
		}
	}
	after, events := journalFigures(t, out, journal.EventRevalidated)
	if after != pages || events != 5 {
		t.Errorf("run --no-id-check: %d pages recognised (journal: %d then %d), %d revalidated events; want 0 pages, 5 events", after-pages, pages, after, events)
	}
	t.Logf("run --no-id-check: %d pages recognised, %d revalidated events, %s", after-pages, events, r.elapsed)
	if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 {
		t.Errorf("verify: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	names, _ := os.ReadDir(filepath.Join(out, "artifacts"))
	if len(names) != 5 {
		t.Errorf("artifacts: %d files, want the 5 first readings, no other", len(names))
	}
	if r := refbatch(t, nil, append(runArgs(out, "--quiet", "--no-id-check"), manifest)...); r.code != 0 || strings.Contains(r.stdout, "validated again") {
		t.Errorf("third run: exit %d, want 0 validating nothing again\n%s", r.code, r.stdout)
	}
}

// TestAmendDoneRow (issue 32, acceptance 3): a done row's participant ID
// corrected to one its text contains (the same ID in lower case, which
// validation compares without case) stays done through an amended event,
// with no page recognised; corrected to one its text lacks, it goes to
// review id_not_found; verify exits 0 after each. The event holds the
// fields and salted digests, never the values.
func TestAmendDoneRow(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	r1 := tinyLoopRow(t, base, "R-0002", 710)
	manifest := filepath.Join(base, "manifest.csv")
	writeLoopManifest(t, manifest, []loopRow{r1})
	out := filepath.Join(base, "out")
	args := append(runArgs(out, "--quiet"), manifest)
	if r := refbatch(t, nil, args...); r.code != 0 {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	pages, _ := journalFigures(t, out)

	for i, step := range []struct {
		participant, want string
		code, events      int
	}{
		{strings.ToLower(r1.participant), "done/", 0, 1},
		{"P-000000", "review/id_not_found", exitNeedsPerson, 2},
	} {
		r1.participant = step.participant
		writeLoopManifest(t, manifest, []loopRow{r1})
		r := refbatch(t, []string{"USER=alice"}, args...)
		if r.code != step.code || !strings.Contains(r.stdout, "amended: 1 row") {
			t.Fatalf("amendment %d: exit %d, want %d saying 1 row amended\n%s%s", i+1, r.code, step.code, r.stdout, r.stderr)
		}
		assertLoopReport(t, out, map[string]string{r1.sourceID: step.want})
		after, events := journalFigures(t, out, journal.EventAmended)
		if after != pages || events != step.events {
			t.Errorf("amendment %d: %d pages recognised, %d amended events; want 0 and %d", i+1, after-pages, events, step.events)
		}
		t.Logf("amendment %d: %s, %d pages recognised, %d amended events, %s", i+1, step.want, after-pages, events, r.elapsed)
		if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 {
			t.Errorf("amendment %d: verify exit %d, want 0\n%s%s", i+1, r.code, r.stdout, r.stderr)
		}
	}
	j, err := journal.OpenReadOnly(filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	rvs, err := j.Revalidations()
	if err != nil || len(rvs) != 2 {
		t.Fatalf("revalidations %+v, %v; want the 2 amendments", rvs, err)
	}
	a := rvs[1]
	if a.User != "alice" || a.Host == "" || len(a.Fields) != 1 || a.Fields[0] != "participant_id" ||
		a.Before["participant_id"] == "" || a.After["participant_id"] == a.Before["participant_id"] {
		t.Errorf("amended event %+v, want alice's, naming participant_id with two digests", a)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "journal.db")); strings.Contains(string(b), "P-000000") {
		t.Error("the journal holds the participant ID in the clear")
	}

	// A person accepts it after the failed ID check; the bag's
	// provenance.json carries that decision and both amendments.
	if r := refbatch(t, []string{"USER=bob"}, "review", "accept", "--out", out, "--note", "ID checked on paper", r1.sourceID); r.code != 0 {
		t.Fatalf("accept: exit %d\n%s", r.code, r.stderr)
	}
	bag := filepath.Join(base, "bag")
	if r := refbatch(t, nil, "export", "--out", out, "--to", bag, "--format", "txt", "--bag"); r.code != 0 {
		t.Fatalf("export --bag: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(bag, "data", r1.sourceID, "provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var prov export.Provenance
	if err := json.Unmarshal(b, &prov); err != nil {
		t.Fatal(err)
	}
	if prov.State != "done" || len(prov.Decisions) != 1 || prov.Decisions[0].Action != "accept" || prov.Decisions[0].User != "bob" ||
		prov.Decisions[0].FromReason != "id_not_found" || len(prov.Amendments) != 2 || prov.Amendments[1].Event != "amended" {
		t.Errorf("provenance.json %s, want done with bob's accept of id_not_found and the 2 amendments", b)
	}
}

// TestRetryTakesValidation: `review retry` takes run's validation flags
// (--no-id-check here), prints the settings it records complete (page
// policy and validation), and the next reading is judged by them.
func TestRetryTakesValidation(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	r1 := tinyLoopRow(t, base, "R-0003", 720)
	r1.participant = "P-000000"
	manifest := filepath.Join(base, "manifest.csv")
	writeLoopManifest(t, manifest, []loopRow{r1})
	out := filepath.Join(base, "out")
	args := append(runArgs(out, "--quiet"), manifest)
	if r := refbatch(t, nil, args...); r.code != exitNeedsPerson {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	r := refbatch(t, nil, "review", "retry", "--out", out, "--no-id-check", r1.sourceID)
	if r.code != 0 || !strings.Contains(r.stdout, `"no_id_check":true`) || !strings.Contains(r.stdout, `"high_confidence":94.3`) ||
		!strings.Contains(r.stdout, `"dpi":72`) {
		t.Fatalf("review retry --no-id-check: exit %d, want the complete settings printed\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := refbatch(t, nil, args...); r.code != 0 {
		t.Fatalf("run after the retry: exit %d, want 0 (read again without the ID check)\n%s", r.code, r.stderr)
	}
	rep := assertLoopReport(t, out, map[string]string{r1.sourceID: "done/"})
	if rep.Rows[0].Attempts != 2 {
		t.Errorf("attempts %d, want 2", rep.Rows[0].Attempts)
	}
}
