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
