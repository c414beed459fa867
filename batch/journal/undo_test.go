package journal

import (
	"errors"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestUndoDecision: an accept or a reject undone puts the document back
// in review for its reason, as one more decision the custody log holds;
// a retry, a second undo, and a document no one decided are refused.
func TestUndoDecision(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		for i, s := range []string{"R-1", "R-2", "R-3", "R-4"} {
			toReview(t, j, i+2, s)
		}
		by := Decision{User: "alice", Host: "desk", Note: "clicked too fast"}
		for s, a := range map[string]Action{"R-1": Accept, "R-2": Reject, "R-3": Retry} {
			d := by
			d.Action = a
			if _, err := j.Decide(s, d, `{"dpi":400}`); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []string{"R-1", "R-2"} {
			got, err := j.UndoDecision(s, by)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			doc, _, _ := j.DocumentBySource(s)
			if doc.State != outcome.Review || doc.Reason != outcome.LowConfidence || got.Action != Undo || got.FromState == outcome.Review {
				t.Errorf("%s undone: %s %s, recorded %+v", s, doc.State, doc.Reason, got)
			}
			if last, ok, _ := j.LatestDecision(doc.ID); !ok || last.Action != Undo {
				t.Errorf("%s: latest decision %+v", s, last)
			}
		}
		for _, s := range []string{"R-1", "R-3", "R-4"} {
			var nu *NotUndoableError
			if _, err := j.UndoDecision(s, by); !errors.As(err, &nu) {
				t.Errorf("%s: %v, want a *NotUndoableError", s, err)
			}
		}
		if _, err := j.UndoDecision("R-9", by); !errors.Is(err, ErrNoDocument) {
			t.Errorf("no document: %v", err)
		}
		chainClean(t, j)
	})
}
