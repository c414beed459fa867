package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestDismissedAndWithdrawnApart: a rejected row a person dismissed is
// listed apart in report.html, not among the rejections to fix, and the
// summary says it was dismissed and gives its reason no advice; a row
// withdrawn from the manifest is in no count but its own and listed
// apart.
func TestDismissedAndWithdrawnApart(t *testing.T) {
	at := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	r := &Report{Run: Run{Manifest: "m.csv"}, Rows: []Row{
		{ManifestLine: 2, SourceID: "R-1", State: "done", Pages: 1, MeanConfidence: 96, Band: "high", Attempts: 1},
		{ManifestLine: 3, SourceID: "R-2", State: "rejected", Reason: "encrypted",
			Decision: &Decision{Action: "dismiss", User: "alice", Host: "desk", At: at, Note: "the sender will resend it"}},
		{ManifestLine: 4, SourceID: "R-3", State: "review", Reason: "id_not_found", Pages: 1, Withdrawn: true},
	}}
	r.Summary = Summarize(r.Rows)
	if s := r.Summary; s.Rows != 2 || s.Withdrawn != 1 || s.NeedPerson != 0 || s.States["review"] != 0 {
		t.Errorf("summary: rows %d, withdrawn %d, need person %d, review %d", s.Rows, s.Withdrawn, s.NeedPerson, s.States["review"])
	}
	var html, text bytes.Buffer
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	for _, want := range []string{"Rejected, dismissed (1)", "Every rejected row was dismissed by a person", "Withdrawn (1)", "withdrawn: no longer in the manifest"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(page, explanations["encrypted"].fix) {
		t.Error("report.html gives a dismissed row its fix")
	}
	sum := text.String()
	if !strings.Contains(sum, "encrypted 1 (dismissed)") || strings.Contains(sum, Explain("encrypted")) || !strings.Contains(sum, "withdrawn    1") {
		t.Errorf("summary:\n%s", sum)
	}
}
