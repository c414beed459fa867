package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecoveryRecorded (issue 30): recovery adds only what is new and
// credible, and each page read again records what it added and dropped
// (recovery: added, dropped_repeat, dropped_low_confidence, replaced). One document
// of the evaluation corpus with a light office note on its first page
// (two pages at 200 dpi) is read: its first page is read again and
// records the words added, as recovered_words does; its second, clean,
// is not. --no-recovery and --cover-confidence are recorded in the
// run's settings (the other runs' only row is rejected at admission), and
// a cover confidence over 100 is a usage error.
func TestRecoveryRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	evalDir := filepath.Join(repoRoot(t), "testdata", "eval")
	one := filepath.Join(dir, "one.csv")
	os.WriteFile(one, []byte("source_id,participant_id,referral_date,consent,path\n"+
		"R-0072,P-008067,2022-11-07,yes,docs/R-0072.pdf\n"), 0o600)
	missing := filepath.Join(dir, "missing.csv")
	os.WriteFile(missing, []byte("source_id,participant_id,referral_date,consent,path\nR-1,P-1,2020-01-01,yes,nope.pdf\n"), 0o600)
	args := func(out string, extra ...string) []string {
		return append([]string{"run", "--plaintext", "--quiet", "--page-timeout", "120s", "--out", filepath.Join(dir, out)}, extra...)
	}

	t.Run("a page read again records what recovery did", func(t *testing.T) {
		t.Parallel()
		r := refbatch(t, nil, append(args("read", "--dpi", "200", "--root", evalDir), one)...)
		if r.code != 0 && r.code != exitNeedsPerson {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
		arts, _ := filepath.Glob(filepath.Join(dir, "read", "artifacts", "*.json"))
		if len(arts) != 1 {
			t.Fatalf("%d artifacts, want 1", len(arts))
		}
		b, err := os.ReadFile(arts[0])
		if err != nil {
			t.Fatal(err)
		}
		type counts struct {
			Added                int `json:"added"`
			DroppedRepeat        int `json:"dropped_repeat"`
			DroppedLowConfidence int `json:"dropped_low_confidence"`
		}
		var a struct {
			Pages []struct {
				Recovered int     `json:"recovered_words"`
				Recovery  *counts `json:"recovery"`
			} `json:"pages"`
		}
		if err := json.Unmarshal(b, &a); err != nil || len(a.Pages) != 2 {
			t.Fatalf("artifact: %v, %d pages", err, len(a.Pages))
		}
		p := a.Pages[0]
		if p.Recovery == nil || p.Recovery.Added == 0 || p.Recovery.Added != p.Recovered {
			t.Errorf("page 1 (a light note): recovery %+v, recovered_words %d; want words added, as many as recovered", p.Recovery, p.Recovered)
		}
		if p := a.Pages[1]; p.Recovery != nil || p.Recovered != 0 {
			t.Errorf("page 2 (clean): recovery %+v, recovered_words %d; want none", p.Recovery, p.Recovered)
		}
	})

	t.Run("settings are recorded", func(t *testing.T) {
		t.Parallel()
		r := refbatch(t, nil, append(args("set", "--no-recovery", "--cover-confidence", "55"), missing)...)
		if r.code != exitNeedsPerson {
			t.Fatalf("exit %d, want %d\nstderr: %s", r.code, exitNeedsPerson, r.stderr)
		}
		s := readReport(t, filepath.Join(dir, "set")).Run.Settings
		if s["recovery"] != "false" || s["cover_confidence"] != "55" {
			t.Errorf("report records recovery %q, cover_confidence %q; want false, 55", s["recovery"], s["cover_confidence"])
		}
	})

	t.Run("a cover confidence over 100", func(t *testing.T) {
		t.Parallel()
		r := refbatch(t, nil, append(args("bad", "--cover-confidence", "101"), missing)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--cover-confidence 101") {
			t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitUsage, r.stderr)
		}
	})
}
