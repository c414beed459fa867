package journal

import (
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestDecisionErrorMessages: a refused decision tells the person what the
// document is now, its reason when it has one, and the earlier decision
// that took it out of review when there was one.
func TestDecisionErrorMessages(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&ChangedError{SourceID: "R-1", State: outcome.Review, Reason: outcome.LowConfidence},
			"R-1 changed since it was shown: it is now review low_confidence"},
		{&ChangedError{SourceID: "R-1", State: outcome.Done},
			"R-1 changed since it was shown: it is now done"},
		{&NotInReviewError{SourceID: "R-2", State: outcome.Rejected, Reason: outcome.UnparseablePDF},
			"R-2 is rejected unparseable_pdf, not in review: only a document in review can be decided"},
		{&NotInReviewError{SourceID: "R-2", State: outcome.Done, Earlier: &Decision{Action: Accept, User: "alice", Host: "desk1", At: at}},
			"R-2 is done (accept by alice on desk1 at 2026-12-07T10:30:00Z), not in review: only a document in review can be decided"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
