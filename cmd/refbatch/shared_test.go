package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/batchtest/finished"
	"github.com/refbatch/refbatch/batch/journal/journaltest"
)

// TestSharedJournal builds a batch shaped as the sample on a PostgreSQL
// journal, without OCR (finishedBatch, the real write path with the
// stand-in engine: the journal is the point, and TestSampleRunAndRerun
// reads the sample itself), and reads it back with every command that
// takes --journal: status, report, review, show and verify (with the
// pinned root). The custody log is the same as
// on SQLite: the custody topic's encoding recomputes its root independently, and
// a rewrite of the journal behind the log is found by verify --root as it
// is on SQLite. The refusals: a --journal that is no URL, another --out
// than the batch's, a journal with no batch.
func TestSharedJournal(t *testing.T) {
	url := journaltest.Postgres(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	manifest, _ := finishedBatchWith(t, filepath.Join(dir, "in"), out, sharedRows(t, filepath.Join(dir, "in")),
		func(o *batch.Options) { o.Journal = url })
	// What a run of the binary on the journal prints once the batch is
	// finished: the rerun reads nothing.
	r := refbatch(t, nil, append(append([]string{"run", "--plaintext", "--journal", url, "--out", out}, fastFlags...), manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	expectRows(t, readReport(t, out), sharedExpected(t))
	rep := readReport(t, out)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if root, n := independentRoot(t, db); rep.Custody == nil || root != rep.Custody.Root || n != rep.Custody.Events {
		t.Fatalf("independent root %s after %d events, report %+v", root, n, rep.Custody)
	}

	// Given the URL alone, each command finds the output folder the
	// journal recorded. Another folder, it would not.
	st := refbatch(t, nil, "status", "--journal", url, "--json")
	var status struct{ Out, Journal, State string }
	if st.code != 0 || json.Unmarshal([]byte(st.stdout), &status) != nil || status.Out != out || status.State != "complete" ||
		!strings.HasPrefix(status.Journal, "postgres://") {
		t.Errorf("status --journal: exit %d, %+v\n%s", st.code, status, st.stderr)
	}
	os.Remove(filepath.Join(out, "report.json"))
	if r := refbatch(t, nil, "report", "--journal", url); r.code != 0 || !strings.Contains(r.stdout, filepath.Join(out, "report.json")) {
		t.Errorf("report --journal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	readReport(t, out)
	if r := refbatch(t, nil, "review", "--journal", url); r.code != 0 || !strings.Contains(r.stdout, "no document is in review") {
		t.Errorf("review --journal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := refbatch(t, nil, "show", "--journal", url, rep.Rows[0].SourceID); r.code != 0 || r.stdout == "" {
		t.Errorf("show --journal: exit %d\n%s", r.code, r.stderr)
	}
	root := rep.Custody.Root
	if r := refbatch(t, nil, "verify", "--journal", url, "--sources", "--root", root); r.code != 0 {
		t.Errorf("verify --journal --root: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	refusals := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"another output folder", append(append([]string{"run", "--plaintext", "--journal", url, "--out", filepath.Join(dir, "other")}, fastFlags...), manifest),
			"this batch's output folder is " + out},
		{"a file for a journal", []string{"status", "--journal", filepath.Join(out, "report.json")}, "--journal takes a postgres:// URL"},
		{"a journal with no batch", []string{"join", "--journal", journaltest.Postgres(t)}, "no batch"},
		{"status of a journal with no batch", []string{"status", "--journal", journaltest.Postgres(t)}, "no batch"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			r := refbatch(t, nil, tc.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.stderr) || !strings.Contains(r.stderr, "refbatch: hint:") {
				t.Errorf("exit %d, want %d with %q\n%s", r.code, exitUsage, tc.stderr, r.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); err == nil {
		t.Error("the refused run made its output folder")
	}

	// A rewrite behind the custody log: a done row set back to review,
	// as on SQLite (TestCustodyRoot).
	if _, err := db.Exec(`UPDATE documents SET state='review', reason='low_confidence' WHERE source_id=$1`, rep.Rows[0].SourceID); err != nil {
		t.Fatal(err)
	}
	r = refbatch(t, nil, "verify", "--journal", url, "--root", root)
	if r.code != 1 || !strings.Contains(r.stdout, "journal_rewritten") || !strings.Contains(r.stdout, rep.Rows[0].SourceID) {
		t.Errorf("verify of a rewritten journal: exit %d, want 1 naming %s\n%s%s", r.code, rep.Rows[0].SourceID, r.stdout, r.stderr)
	}
}

// sharedIDs are the sample's source_ids TestSharedJournal's batch is made
// of (sampleRows): all but R-0013 and R-0016, whose rejections
// (malformed_pdf, hash_mismatch) a batch sampleRows writes does not
// reproduce.
var sharedIDs = []string{"R-0001", "R-0002", "R-0003", "R-0004", "R-0005", "R-0006", "R-0007", "R-0008", "R-0009", "R-0010",
	"R-0011", "R-0012", "R-0014", "R-0015", "R-0017", "R-0018", "R-0019"}

func sharedRows(t *testing.T, dir string) []finished.Row {
	t.Helper()
	return sampleRows(t, dir, sharedIDs...)
}

// sharedExpected is the sample's expected.csv for sharedIDs' rows.
func sharedExpected(t *testing.T) []map[string]string {
	t.Helper()
	var want []map[string]string
	for _, row := range readCSV(t, filepath.Join(sampleDir(t), "expected.csv")) {
		if slices.Contains(sharedIDs, row["source_id"]) {
			want = append(want, row)
		}
	}
	return want
}
