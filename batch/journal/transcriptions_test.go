package journal

import (
	"errors"
	"testing"
)

// TestSinceAndTranscribe: a decision or a transcription carrying the
// document's version as shown is refused once the document changed
// (here, by a transcription), and a transcription names the new artifact,
// keeps the old one in its event and is counted.
func TestSinceAndTranscribe(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		st := toReview(t, j, 2, "R-1")
		version := func() int64 {
			var v int64
			if err := j.DocumentEvents(st.DocID, func(e Event) error { v = e.ID; return nil }); err != nil {
				t.Fatal(err)
			}
			return v
		}
		shown := version()
		tr := Transcription{User: "alice", Host: "desk", Page: 0, Box: [4]int{1, 2, 3, 4}, Artifact: "artifacts/R-1_a1.json",
			ArtifactSHA256: "sum-R-1", NewArtifact: "artifacts/R-1_a1_t1.json", NewArtifactSHA256: "sum-t1", Since: shown}
		if err := j.Transcribe("R-1", tr); err != nil {
			t.Fatal(err)
		}
		var ch *ChangedError
		if err := j.Transcribe("R-1", tr); !errors.As(err, &ch) {
			t.Fatalf("a second transcription from the same view: %v, want a *ChangedError", err)
		}
		if _, err := j.Decide("R-1", Decision{Action: Accept, User: "alice", Host: "desk", Since: shown}, ""); !errors.As(err, &ch) || ch.Latest != version() {
			t.Fatalf("a decision from the view before the transcription: %v, want a *ChangedError", err)
		}
		doc, _, err := j.DocumentBySource("R-1")
		if err != nil || doc.Artifact != tr.NewArtifact || doc.ArtifactSHA256 != tr.NewArtifactSHA256 {
			t.Fatalf("document %+v (%v), want the new artifact", doc, err)
		}
		kept, err := j.EventArtifacts()
		if err != nil || len(kept) != 1 || kept[0].Artifact != tr.Artifact || kept[0].Kind != EventTranscription {
			t.Fatalf("the events' artifacts %+v (%v), want the old one in the transcription event", kept, err)
		}
		if n, err := j.Transcriptions(); err != nil || n != (TranscriptionCount{Made: 1}) {
			t.Fatalf("transcriptions %+v (%v), want 1", n, err)
		}
		// Withdrawn: one more artifact version, the one before kept in
		// the withdrawal's event, counted apart.
		w := TranscriptionWithdrawal{User: "alice", Host: "desk", Withdraws: tr.NewArtifact, Artifact: tr.NewArtifact, ArtifactSHA256: tr.NewArtifactSHA256,
			NewArtifact: "artifacts/R-1_a1_t2.json", NewArtifactSHA256: "sum-t2", Since: version()}
		if err := j.WithdrawTranscription("R-1", w); err != nil {
			t.Fatal(err)
		}
		if err := j.WithdrawTranscription("R-1", w); !errors.As(err, &ch) {
			t.Fatalf("a second withdrawal from the same view: %v, want a *ChangedError", err)
		}
		kept, err = j.EventArtifacts()
		if err != nil || len(kept) != 2 || kept[1].Artifact != w.Artifact || kept[1].Kind != EventTranscriptionWithdrawn {
			t.Fatalf("the events' artifacts %+v (%v), want the transcription's in the withdrawal event", kept, err)
		}
		if n, err := j.Transcriptions(); err != nil || n != (TranscriptionCount{Made: 1, Withdrawn: 1}) {
			t.Fatalf("transcriptions %+v (%v), want 1, 1 withdrawn", n, err)
		}
		var counted TranscriptionCount
		if err := j.ReportRows("", func(r ReportRow) error { counted = r.Transcriptions; return nil }); err != nil || counted != (TranscriptionCount{Made: 1, Withdrawn: 1}) {
			t.Fatalf("the row's transcriptions %+v (%v), want 1, 1 withdrawn", counted, err)
		}
		if _, err := j.Decide("R-1", Decision{Action: Accept, User: "alice", Host: "desk", Since: version()}, ""); err != nil {
			t.Fatalf("a decision from the current view: %v", err)
		}
	})
}
