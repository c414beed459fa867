package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/standing"
)

// sampleLines writes a manifest of the sample's header and the lines of
// the source_ids given, in that order.
func sampleLines(t *testing.T, path string, ids ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sampleDir(t), "manifest.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	out := lines[0]
	for _, id := range ids {
		found := false
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, id+",") {
				out, found = out+l, true
				break
			}
		}
		if !found {
			t.Fatalf("%s is not in the sample manifest", id)
		}
	}
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestExitFourClears: exit 4 counts only what a person still has to do.
// A batch with a no_consent row, a document in review and a malformed
// PDF exits 4 naming the review row's and the malformed row's kinds, not
// the no_consent one; once the malformed row is dismissed, the run still
// exits 4 naming only the row in review; once a person rejects that one,
// it exits 0, and status --check and the run_finished notice count the
// same nothing.
func TestExitFourClears(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.csv")
	sampleLines(t, manifest, "R-0001", "R-0013", "R-0015")
	out := filepath.Join(dir, "out")
	// 60 DPI, the page steps off, one worker: R-0001 is read, cheaply,
	// into review.
	run := append([]string{"run", "--plaintext", "--out", out, "--root", sampleDir(t), "--page-timeout", "120s", "--quiet", "--dpi", "60", "--workers", "1"},
		append(noPageSteps, manifest)...)
	r := refbatch(t, nil, run...)
	if r.code != exitNeedsPerson || !strings.Contains(r.stderr, "2 rows need a person: 1 in review ") ||
		!strings.Contains(r.stderr, "1 rejected malformed_pdf") || strings.Contains(r.stderr, "no_consent") {
		t.Fatalf("first run: exit %d, want 4 naming the review row and malformed_pdf, not no_consent\n%s", r.code, r.stderr)
	}
	reason := readReport(t, out).Rows[0].Reason

	env := []string{"USER=alice"}
	if r := refbatch(t, env, "review", "dismiss", "--out", out, "--note", "the sender resends it", "R-0013"); r.code != 0 ||
		!strings.Contains(r.stdout, "dismiss R-0013: was rejected malformed_pdf") {
		t.Fatalf("dismiss: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, c := range [][]string{{"R-0013"}, {"R-0001"}, {"R-9999"}} {
		if r := refbatch(t, env, append([]string{"review", "dismiss", "--out", out}, c...)...); r.code != 2 || !strings.Contains(r.stderr, c[0]) {
			t.Errorf("dismiss %s (dismissed already, in review, unknown): exit %d, want 2 naming it\n%s", c[0], r.code, r.stderr)
		}
	}
	r = refbatch(t, nil, run...)
	if r.code != exitNeedsPerson || !strings.Contains(r.stderr, "1 row needs a person: 1 in review "+string(reason)) {
		t.Fatalf("run after the dismissal: exit %d, want 4 naming the row in review (%s) only\n%s", r.code, reason, r.stderr)
	}

	if r := refbatch(t, env, "review", "reject", "--out", out, "--note", "not a referral", "R-0001"); r.code != 0 {
		t.Fatalf("reject: exit %d\n%s", r.code, r.stderr)
	}
	if r := refbatch(t, nil, run...); r.code != 0 {
		t.Fatalf("run after the decisions: exit %d, want 0 (nothing is open)\n%s", r.code, r.stderr)
	}
	rep := readReport(t, out)
	if rep.Summary.NeedPerson != 0 {
		t.Errorf("report.json need_person %d, want 0", rep.Summary.NeedPerson)
	}
	for _, row := range rep.Rows {
		if row.SourceID == "R-0013" && (row.Decision == nil || row.Decision.Action != "dismiss" || row.Decision.User != "alice") {
			t.Errorf("R-0013's decision %+v, want the dismissal by alice", row.Decision)
		}
	}
	r = refbatch(t, nil, "status", "--out", out, "--check", "--json")
	var h standing.Health
	if err := json.Unmarshal([]byte(r.stdout), &h); r.code != 0 || err != nil || h.NeedPerson != 0 {
		t.Errorf("status --check: exit %d, %+v (%v), want 0 needing a person\n%s", r.code, h, err, r.stderr)
	}
	if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 {
		t.Errorf("verify: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
}
