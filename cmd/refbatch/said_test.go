package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/batchtest"
	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestIDNotFoundSaysWhatThePageSays is issue 48's fourth acceptance: a
// letter that prints another ID than the manifest's and one that prints
// none both go to review id_not_found, with different details. The
// journal's and the report's count and name no ID; `review`, reading the
// text as the desk does, names the ID the letter prints.
func TestIDNotFoundSaysWhatThePageSays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wrong := tinyRow(t, dir, "W-1", 1) // prints P-100001
	wrong[1] = "P-000000"
	none := [4]string{"N-1", "P-000000", "2024-03-14", writeFile(t, dir, "N-1.pdf",
		batchtest.Referral("Referral number 2 to the clinic", "Participant: see the enclosed form", "Referral date: 2024-03-14"))}
	manifest := writeRows(t, dir, [][4]string{wrong, none})
	out := filepath.Join(dir, "out")
	if r := refbatch(t, nil, append(runArgs(out), manifest)...); r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	detail := map[string]string{}
	for _, row := range readReport(t, out).Rows {
		if row.Reason != outcome.IDNotFound {
			t.Errorf("%s: %s %s, want review id_not_found", row.SourceID, row.State, row.Reason)
		}
		detail[row.SourceID] = row.Detail
	}
	if !strings.Contains(detail["W-1"], "prints 1 other ID shaped like the manifest's (A-999999)") ||
		!strings.Contains(detail["N-1"], "prints no ID shaped like the manifest's") || strings.Contains(detail["W-1"], "100001") {
		t.Errorf("the report's details: %q", detail)
	}
	r := refbatch(t, nil, "review", "--out", out, "--json")
	var items []review.ReviewItem
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil {
		t.Fatalf("review --json: %v\n%s", err, r.stdout)
	}
	said := map[string]string{}
	for _, it := range items {
		said[it.SourceID] = it.Detail
	}
	if said["W-1"] != "the letter says P-100001 (page 1), the manifest P-000000" ||
		said["N-1"] != "the letter prints no ID shaped like the manifest's (A-999999); the manifest says P-000000: check the paper file" {
		t.Errorf("review's details: %q", said)
	}
	// A retry leaves the lane; review says it waits for the next run.
	if r := refbatch(t, nil, "review", "retry", "--out", out, "N-1"); r.code != exitOK {
		t.Fatalf("review retry: exit %d\n%s", r.code, r.stderr)
	}
	if r := refbatch(t, nil, "review", "--out", out); !strings.Contains(r.stdout, "1 document sent back to be read again (retry) waits for the next refbatch run of its manifest") {
		t.Errorf("review after a retry:\n%s", r.stdout)
	}
}
