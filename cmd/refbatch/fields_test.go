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
	t.Parallel()
	// Tiny referrals: what is tested is which printed field the manifest
	// contradicts, not how a scan is read.
	dir := t.TempDir()
	dayOff, wrongID := tinyRow(t, dir, "D-1", 1), tinyRow(t, dir, "D-2", 2)
	d, err := time.Parse(time.DateOnly, dayOff[2])
	if err != nil {
		t.Fatal(err)
	}
	dayOff[2] = d.AddDate(0, 0, 1).Format(time.DateOnly)
	wrongID[1] = "P-000001"
	manifest := writeRows(t, dir, [][4]string{dayOff, wrongID})
	out := filepath.Join(dir, "out")
	r := refbatch(t, nil, append(runArgs(out), manifest)...)
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
