package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCascadeOffByDefault (issue 29): the cascade read 11 pt letters
// twice, slower than one reading at --dpi, so it is off unless --cascade
// turns it on. A default run at a resolution above --first-dpi reads its
// page once, at --dpi, and records cascade false; --cascade is recorded
// true; --no-cascade is still accepted; --first-dpi without --cascade,
// and both switches at once, are usage errors. Only the default run reads
// a page (one page, at 210 dpi); the others' only row is rejected at
// admission.
func TestCascadeOffByDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := filepath.Join(dir, "one.csv")
	os.WriteFile(one, []byte("source_id,participant_id,referral_date,consent,path\n"+
		"R-0010,P-775859,2020-07-20,yes,docs/R-0010.pdf\n"), 0o600)
	missing := filepath.Join(dir, "missing.csv")
	os.WriteFile(missing, []byte("source_id,participant_id,referral_date,consent,path\nR-1,P-1,2020-01-01,yes,nope.pdf\n"), 0o600)
	args := func(out string, extra ...string) []string {
		return append([]string{"run", "--plaintext", "--quiet", "--no-id-check", "--page-timeout", "60s", "--out", filepath.Join(dir, out)}, extra...)
	}

	t.Run("default reads once", func(t *testing.T) {
		t.Parallel()
		r := refbatch(t, nil, append(args("default", "--dpi", "210", "--root", sampleDir(t)), one)...)
		if r.code != 0 && r.code != exitNeedsPerson {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
		if got := readReport(t, filepath.Join(dir, "default")).Run.Settings["cascade"]; got != "false" {
			t.Errorf("report records cascade %q, want false", got)
		}
		arts, _ := filepath.Glob(filepath.Join(dir, "default", "artifacts", "*.json"))
		if len(arts) != 1 {
			t.Fatalf("%d artifacts, want 1", len(arts))
		}
		b, err := os.ReadFile(arts[0])
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			Pages []struct {
				DPI        int  `json:"dpi"`
				FirstDPI   int  `json:"first_dpi"`
				SecondPass bool `json:"second_pass"`
			} `json:"pages"`
		}
		if err := json.Unmarshal(b, &a); err != nil || len(a.Pages) != 1 {
			t.Fatalf("artifact: %v, %d pages", err, len(a.Pages))
		}
		if p := a.Pages[0]; p.DPI != 210 || p.FirstDPI != 0 || p.SecondPass {
			t.Errorf("page read at %d dpi, first at %d, second pass %t; want once, at 210", p.DPI, p.FirstDPI, p.SecondPass)
		}
	})

	tests := []struct {
		name, out string
		flags     []string
		code      int
		cascade   string // recorded, when the run ran
		stderr    string
	}{
		{"--cascade turns it on", "on", []string{"--cascade", "--first-dpi", "150"}, exitNeedsPerson, "true", ""},
		{"--no-cascade is accepted", "off", []string{"--no-cascade"}, exitNeedsPerson, "false", ""},
		{"--first-dpi without --cascade", "bad1", []string{"--first-dpi", "150"}, exitUsage, "", "--first-dpi is the resolution of the cascade's first reading"},
		{"both switches", "bad2", []string{"--cascade", "--no-cascade"}, exitUsage, "", "--cascade and --no-cascade both given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := refbatch(t, nil, append(args(tc.out, tc.flags...), missing)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d, want %d; stderr (want %q):\n%s", r.code, tc.code, tc.stderr, r.stderr)
			}
			if tc.cascade == "" {
				return
			}
			if got := readReport(t, filepath.Join(dir, tc.out)).Run.Settings["cascade"]; got != tc.cascade {
				t.Errorf("report records cascade %q, want %s", got, tc.cascade)
			}
		})
	}
}
