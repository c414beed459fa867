package journal

import (
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestDismissalsLatest: a row's dismissal for a reason is the latest a
// person made for that reason, whichever came after it; a row with a
// document is looked up by its document.
func TestDismissalsLatest(t *testing.T) {
	ds := dismissals{
		rows: map[string][]Decision{rowKey("m.csv", 2): {
			{FromReason: outcome.NotPDF, Note: "first"},
			{FromReason: outcome.Conflict, Note: "conflict"},
			{FromReason: outcome.NotPDF, Note: "second"},
			{FromReason: outcome.MissingFile, Note: "missing"},
		}},
		docs: map[int64][]Decision{7: {{FromReason: outcome.Conflict, Note: "doc"}}},
	}
	for _, c := range []struct {
		line   int
		doc    int64
		reason outcome.Reason
		want   string
	}{
		{2, 0, outcome.NotPDF, "second"},
		{2, 0, outcome.Conflict, "conflict"},
		{2, 0, outcome.MissingFile, "missing"},
		{2, 0, outcome.Encrypted, ""},
		{3, 0, outcome.NotPDF, ""},
		{2, 7, outcome.Conflict, "doc"},
		{2, 7, outcome.NotPDF, ""},
	} {
		got := ""
		if d := ds.latest("m.csv", c.line, c.doc, c.reason); d != nil {
			got = d.Note
		}
		if got != c.want || ds.has("m.csv", c.line, c.doc, c.reason) != (c.want != "") {
			t.Errorf("line %d doc %d %s: latest %q; want %q", c.line, c.doc, c.reason, got, c.want)
		}
	}
}

// TestLineTrackerNow: an event's line follows only the moves recorded
// after it, of its own manifest.
func TestLineTrackerNow(t *testing.T) {
	tr := lineTracker{moves: []moveEvent{
		{id: 3, manifest: "m.csv", to: map[int]int{2: 5}},
		{id: 6, manifest: "other.csv", to: map[int]int{5: 7}},
		{id: 8, manifest: "m.csv", to: map[int]int{5: 9, 9: -1}},
	}}
	for _, c := range []struct {
		id         int64
		line, want int
	}{
		{1, 2, 9},  // moved twice since
		{3, 2, 2},  // recorded with the first move: the row there then
		{5, 2, 2},  // another row at line 2 since the first move
		{5, 5, 9},  // the row moved to 5, then to 9
		{7, 9, -1}, // withdrawn since
		{8, 5, 5},  // recorded with the last move
		{9, 5, 5},
	} {
		if got := tr.now(c.id, "m.csv", c.line); got != c.want {
			t.Errorf("event %d at line %d: now at %d; want %d", c.id, c.line, got, c.want)
		}
	}
}
