package eval

import (
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestScoreHandwriting: a note read under 80% and done is unflagged; one
// in review handwriting is not; a signed document in review handwriting
// is a false alarm; the gates count both.
func TestScoreHandwriting(t *testing.T) {
	t.Parallel()
	note := func(id string) *Truth {
		return &Truth{SourceID: id, Pages: []TruthPage{{Text: "Body text\nAllergic to penicillin", HandwritingText: "Allergic to penicillin", Handwriting: &TruthHand{Hand: "dkg", Ink: "blue"}}}}
	}
	in := Input{Truth: map[string]*Truth{
		"N-1": note("N-1"), "N-2": note("N-2"), "N-3": note("N-3"),
		"S-1": {SourceID: "S-1", Pages: []TruthPage{{Text: "Signed:", Signature: &TruthSignature{Label: "signed"}}}},
		"C-1": {SourceID: "C-1", Pages: []TruthPage{{Text: "Body"}}},
	}}
	done, hand := Outcome{State: outcome.Done}, Outcome{State: outcome.Review, Reason: outcome.Handwriting}
	docs := []DocScore{
		{SourceID: "N-1", Got: done, NoteWords: &Recall{Found: 3, Of: 3, Rate: 1}},
		{SourceID: "N-2", Got: done, NoteWords: &Recall{Found: 1, Of: 3, Rate: 1.0 / 3}},
		{SourceID: "N-3", Got: hand, NoteWords: &Recall{Of: 3}},
		{SourceID: "S-1", Got: hand},
		{SourceID: "C-1", Got: done},
	}
	h := scoreHandwriting(in, docs)
	if h == nil || len(h.Notes) != 3 || h.Unflagged != 1 || h.UnflaggedIDs[0] != "N-2" || h.Signed != 1 || h.FalseAlarms != 1 || h.OtherAlarms != 0 {
		t.Fatalf("scored %+v", h)
	}
	zero := 0
	var got []string
	checkHandwriting(h, Thresholds{NotesUnflaggedMax: &zero, HandwritingFalseAlarmsMax: &zero}, func(figure, _ string, _ ...any) { got = append(got, figure) })
	if len(got) != 2 || got[0] != "notes_unflagged" || got[1] != "handwriting_false_alarms" {
		t.Errorf("regressions %v", got)
	}
	if faintRecall("Body text\nAllergic to penicillin", "Body text\nAllergic to penicillin", "Allergic to penicillin").Rate != 1 {
		t.Error("a note read whole does not recall 1")
	}
}
