package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestDateNotFound: a document whose participant ID is right but whose
// referral date in the manifest is one day off goes to review
// date_not_found, not id_not_found, and the report says which field
// failed; one whose ID is wrong still goes to id_not_found.
func TestDateNotFound(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(sampleDir(t), "manifest.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	dayOff := strings.Split(lines[1], ",")
	d, err := time.Parse(time.DateOnly, dayOff[2])
	if err != nil {
		t.Fatal(err)
	}
	dayOff[2] = d.AddDate(0, 0, 1).Format(time.DateOnly)
	wrongID := strings.Split(lines[2], ",")
	wrongID[1] = "P-000001"
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.csv")
	body := strings.Join([]string{lines[0], strings.Join(dayOff, ","), strings.Join(wrongID, ",")}, "\n") + "\n"
	if err := os.WriteFile(manifest, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	r := refbatch(t, nil, append(runArgs(out, "--root", sampleDir(t)), manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("exit %d, want 4\n%s", r.code, r.stderr)
	}
	want := map[string]outcome.Reason{dayOff[0]: outcome.DateNotFound, wrongID[0]: outcome.IDNotFound}
	for _, row := range readReport(t, out).Rows {
		if row.State != outcome.Review || row.Reason != want[row.SourceID] {
			t.Errorf("%s: %s %s, want review %s", row.SourceID, row.State, row.Reason, want[row.SourceID])
		}
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "referral date is not") {
		t.Error("report.html does not say that the date is what failed")
	}
}
