package journal

import (
	"fmt"
	"strings"
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

// TestEventArtifactSizes: an event's artifact_size is read as a size of
// zero bytes or more; a negative one, or one that is not a number, is an
// error naming the event rather than a size.
func TestEventArtifactSizes(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		d := admit(t, j, 2, "R-1", "aaa")
		finishDoc(t, j, d, Result{State: outcome.Review, Reason: outcome.LowConfidence, Artifact: "artifacts/R-1_a1.json", ArtifactSHA256: "s1", ArtifactSize: 1234})
		err := j.Transcribe("R-1", Transcription{User: "u", Host: "h", Artifact: "artifacts/R-1_a1.json", ArtifactSHA256: "s1",
			NewArtifact: "artifacts/R-1_a1_t1.json", NewArtifactSHA256: "s2", NewArtifactSize: 300})
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		var data string
		if err := j.db.QueryRow(`SELECT id, data FROM events WHERE kind = 'transcription'`).Scan(&id, &data); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			size string
			ok   bool
		}{{"0", true}, {"-1", false}, {`"x"`, false}} {
			if _, err := j.db.Exec(`UPDATE events SET data=? WHERE id=?`, strings.Replace(data, `"artifact_size":1234`, `"artifact_size":`+tc.size, 1), id); err != nil {
				t.Fatal(err)
			}
			kept, err := j.EventArtifacts()
			if tc.ok && (err != nil || len(kept) != 1 || kept[0].Size != 0) {
				t.Errorf("artifact_size %s: EventArtifacts = %+v, %v; want the artifact with size 0", tc.size, kept, err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("event %d records artifact_size", id))) {
				t.Errorf("artifact_size %s: EventArtifacts = %+v, %v; want an error naming event %d", tc.size, kept, err, id)
			}
		}
	})
}
