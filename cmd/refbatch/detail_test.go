package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBombDetailEverywhere (issue 32, acceptance 4): the real corpus's
// decompression bomb (hugemono.pdf, 1.2 gigapixels at 300 dpi) is refused
// at admission with its detail, and report.json, report.csv, report.html
// and `review` each show that detail and advice that does not say to
// raise --max-page-pixels; the merely large enormous.pdf is still told
// it may. Only admission runs. Skips without the corpus.
func TestBombDetailEverywhere(t *testing.T) {
	t.Parallel()
	dir := corpusDir(t)
	tmp := t.TempDir()
	manifest := filepath.Join(tmp, "manifest.csv")
	rows := "source_id,participant_id,referral_date,consent,path\nhugemono,P-123456,2024-01-01,yes,hugemono.pdf\nenormous,P-123456,2024-01-01,yes,enormous.pdf\n"
	if err := os.WriteFile(manifest, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	if r := refbatch(t, nil, "run", "--plaintext", "--quiet", "--out", out, "--root", dir, "--dpi", "100", manifest); r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	const bombDetail, raise = "8400×8400 pt", "Rerun with a larger --max-page-pixels"
	details := map[string]string{}
	for _, row := range readReport(t, out).Rows {
		details[row.SourceID] = row.Detail
		switch row.SourceID {
		case "hugemono":
			if !strings.Contains(row.Detail, bombDetail) || !strings.Contains(row.Advice, "decompression bomb") || strings.Contains(row.Advice, raise) {
				t.Errorf("report.json: hugemono detail %q advice %q, want the page size and bomb advice", row.Detail, row.Advice)
			}
		case "enormous":
			if !strings.Contains(row.Detail, "9000×9000 px") || !strings.Contains(row.Advice, raise) {
				t.Errorf("report.json: enormous detail %q advice %q, want the image size and the larger cap", row.Detail, row.Advice)
			}
		}
	}
	for _, name := range []string{"report.csv", "report.html"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.Contains(s, bombDetail) || !strings.Contains(s, "gigapixels") {
			t.Errorf("%s lacks hugemono's detail or its advice", name)
		}
	}
	r := refbatch(t, nil, "review", "--out", out)
	if r.code != 0 || !strings.Contains(r.stdout, bombDetail) || !strings.Contains(r.stdout, "gigapixels") || !strings.Contains(r.stdout, "2 rejected rows need a person") {
		t.Errorf("review: exit %d, want hugemono's detail and advice\n%s%s", r.code, r.stdout, r.stderr)
	}
	for id, d := range details {
		if strings.Contains(d, dir) || strings.Contains(d, ".pdf") || strings.Contains(d, "P-123456") {
			t.Errorf("%s: detail %q names a path or the participant", id, d)
		}
	}
}
