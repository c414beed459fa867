package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// Handwriting figures: a note written on a referral is read, or the
// document goes to review handwriting; a signature alone sends nothing to
// review. A corpus marks a page's note in its truth (handwriting_text,
// also part of text, with the hand that wrote it) and its signature
// (signature); a document with a note is a coverage document (kept out of
// the text figures and the calibration).

// NoteReadRecall is the share of its note's words a document must read
// for the note to count as read.
const NoteReadRecall = 0.8

// TruthHand is what a corpus says of a page's handwritten note.
type TruthHand struct {
	Hand      string `json:"hand"`
	Ink       string `json:"ink"`
	Placement string `json:"placement"`
}

// TruthSignature is what a corpus says of a page's signature.
type TruthSignature struct {
	Label string `json:"label"`
}

// TruthMark is what a corpus says of a mark that is no note: its kind
// (signature, stamp or mark), the family that drew it, and whether that
// family was held out from calibration.
type TruthMark struct {
	Kind   string `json:"kind"`
	Family string `json:"family"`
	Held   bool   `json:"held_out"`
}

// FamilyScore is how the documents marked by one family ended: how many
// it marks (with no note), and those of them in review handwriting.
type FamilyScore struct {
	Family    string   `json:"family"`
	Kind      string   `json:"kind"`
	Held      bool     `json:"held_out"`
	Documents int      `json:"documents"`
	Alarms    int      `json:"alarms"`
	AlarmIDs  []string `json:"alarm_ids"`
}

// NoteScore is one document with a handwritten note: its hand, the share
// of the note's words it read, and how it ended.
type NoteScore struct {
	SourceID string  `json:"source_id"`
	Hand     string  `json:"hand"`
	Ink      string  `json:"ink"`
	Words    Recall  `json:"words"`
	Got      Outcome `json:"got"`
}

// Handwriting holds the handwriting figures of a run.
type Handwriting struct {
	// Notes are the documents with a note. Unflagged of them ended done
	// reading under NoteReadRecall of it: a note published as read that
	// was not, the failure the figures are for.
	Notes        []NoteScore `json:"notes"`
	Unflagged    int         `json:"unflagged"`
	UnflaggedIDs []string    `json:"unflagged_ids"`
	// Signed are the documents signed by hand with no note; FalseAlarms
	// of them ended review handwriting.
	Signed        int      `json:"signed"`
	FalseAlarms   int      `json:"false_alarms"`
	FalseAlarmIDs []string `json:"false_alarm_ids"`
	OtherAlarms   int      `json:"other_alarms"` // documents with no note nor signature in review handwriting
	OtherAlarmIDs []string `json:"other_alarm_ids"`
	// Families are the mark families of the documents without a note,
	// in the order they first appear; Held and HeldAlarms count the
	// documents all of whose marks are of held-out families, the figure
	// that stands for a letter nobody here drew.
	Families   []FamilyScore `json:"families,omitempty"`
	Held       int           `json:"held_out_documents"`
	HeldAlarms int           `json:"held_out_alarms"`
}

// scoreFamilies adds document id, with no note and marked by marks, to
// h's family figures.
func (h *Handwriting) scoreFamilies(id string, marks []TruthMark, flagged bool) {
	if len(marks) == 0 {
		return
	}
	held := true
	seen := map[string]bool{}
	for _, m := range marks {
		held = held && m.Held
		if seen[m.Family] {
			continue // a second mark of one family on the document
		}
		seen[m.Family] = true
		i := slices.IndexFunc(h.Families, func(f FamilyScore) bool { return f.Family == m.Family })
		if i < 0 {
			h.Families = append(h.Families, FamilyScore{Family: m.Family, Kind: m.Kind, Held: m.Held, AlarmIDs: []string{}})
			i = len(h.Families) - 1
		}
		f := &h.Families[i]
		f.Documents++
		if flagged {
			f.Alarms++
			f.AlarmIDs = append(f.AlarmIDs, id)
		}
	}
	if held {
		h.Held++
		if flagged {
			h.HeldAlarms++
		}
	}
}

// handNote returns the document's note and its hand, when its truth has one.
func handNote(t *Truth) (note string, hand TruthHand) {
	var parts []string
	for _, p := range t.Pages {
		if s := strings.TrimSpace(p.HandwritingText); s != "" {
			parts = append(parts, s)
			if p.Handwriting != nil {
				hand = *p.Handwriting
			}
		}
	}
	return strings.Join(parts, "\n"), hand
}

// scoreHandwriting gathers the handwriting figures; nil when no document
// has a note or a signature.
func scoreHandwriting(in Input, docs []DocScore) *Handwriting {
	h := &Handwriting{Notes: []NoteScore{}, UnflaggedIDs: []string{}, FalseAlarmIDs: []string{}, OtherAlarmIDs: []string{}}
	any := false
	for _, d := range docs {
		t := in.Truth[d.SourceID]
		if t == nil {
			continue
		}
		flagged := d.Got == Outcome{State: outcome.Review, Reason: outcome.Handwriting}
		note, hand := handNote(t)
		signed := false
		var marks []TruthMark
		for _, p := range t.Pages {
			signed = signed || p.Signature != nil || len(p.Marks) > 0
			marks = append(marks, p.Marks...)
		}
		switch {
		case note != "":
			any = true
			n := NoteScore{SourceID: d.SourceID, Hand: hand.Hand, Ink: hand.Ink, Got: d.Got}
			if d.NoteWords != nil {
				n.Words = *d.NoteWords
			}
			h.Notes = append(h.Notes, n)
			if d.Got.State == outcome.Done && n.Words.Rate < NoteReadRecall {
				h.Unflagged++
				h.UnflaggedIDs = append(h.UnflaggedIDs, d.SourceID)
			}
		case signed:
			any = true
			h.scoreFamilies(d.SourceID, marks, flagged)
			h.Signed++
			if flagged {
				h.FalseAlarms++
				h.FalseAlarmIDs = append(h.FalseAlarmIDs, d.SourceID)
			}
		case flagged:
			h.OtherAlarms++
			h.OtherAlarmIDs = append(h.OtherAlarmIDs, d.SourceID)
		}
	}
	if !any && h.OtherAlarms == 0 {
		return nil
	}
	return h
}

// checkHandwriting adds the regressions of the handwriting figures.
func checkHandwriting(h *Handwriting, t Thresholds, add func(figure, format string, args ...any)) {
	if t.NotesUnflaggedMax != nil {
		switch {
		case h == nil || len(h.Notes) == 0:
			add("notes_unflagged", "notes_unflagged not measured (no readable document has a handwritten note in its truth) but thresholds.json gates it")
		case h.Unflagged > *t.NotesUnflaggedMax:
			add("notes_unflagged", "documents done reading under %.0f%% of their handwritten note %d > threshold %d (%s)",
				100*NoteReadRecall, h.Unflagged, *t.NotesUnflaggedMax, idList(h.UnflaggedIDs))
		}
	}
	if limit := t.HandwritingFalseAlarmsMax; limit != nil && h != nil && h.FalseAlarms+h.OtherAlarms > *limit {
		add("handwriting_false_alarms", "documents without a handwritten note in review %s %d > threshold %d (%s)",
			outcome.Handwriting, h.FalseAlarms+h.OtherAlarms, *limit, idList(append(h.FalseAlarmIDs, h.OtherAlarmIDs...)))
	}
}

// writeHandwriting prints the handwriting figures: a line per note.
func (r *Report) writeHandwriting(w io.Writer) {
	h := r.Handwriting
	if h == nil {
		return
	}
	fmt.Fprintf(w, "handwriting\t%d documents with a note: %d done reading under %.0f%% of it; %d signed without a note: %d in review %s; %d others in review %s\n",
		len(h.Notes), h.Unflagged, 100*NoteReadRecall, h.Signed, h.FalseAlarms, outcome.Handwriting, h.OtherAlarms, outcome.Handwriting)
	for _, n := range h.Notes {
		got := string(n.Got.State)
		if n.Got.Reason != "" {
			got += " " + string(n.Got.Reason)
		}
		fmt.Fprintf(w, "  %s\t%s, %s ink: %d of %d words read (%.0f%%), %s\n", n.SourceID, n.Hand, n.Ink, n.Words.Found, n.Words.Of, 100*n.Words.Rate, got)
	}
	if len(h.FalseAlarmIDs)+len(h.OtherAlarmIDs) > 0 {
		fmt.Fprintf(w, "  false alarms\t%s\n", strings.Join(append(h.FalseAlarmIDs, h.OtherAlarmIDs...), " "))
	}
	for _, f := range h.Families {
		set := "calibration"
		if f.Held {
			set = "held out"
		}
		fmt.Fprintf(w, "  %s %s\t%s: %d of %d documents in review %s %s\n", f.Kind, f.Family, set, f.Alarms, f.Documents, outcome.Handwriting, strings.Join(f.AlarmIDs, " "))
	}
	if h.Held > 0 {
		fmt.Fprintf(w, "  held out\t%d of %d documents marked by held-out families only in review %s (%.1f%%)\n", h.HeldAlarms, h.Held, outcome.Handwriting, 100*float64(h.HeldAlarms)/float64(h.Held))
	}
}
