package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file plans the documents of --marks: signed referral letters,
// some stamped on arrival, some ticked, circled, underlined or crossed
// through in a margin, and none with a handwritten note. None of these
// marks is a note: each letter is to end done. Capital-letter notes
// (--caps-notes) are planned here too, in hands of their own.
//
// The marks come from several independent families for each kind, each
// drawn by a model of its own (strokes, a handwriting font written as a
// name, a stamp's layout). A family is either for calibration or held
// out: whatever the handwriting step learns on the calibration families
// is measured on the held-out ones, which stand for a letter nobody here
// drew. The drawing is in marksdraw.go, marksstamp.go and markspage.go.

// kindMarks is the truth's scan.kind of a --marks letter, kindCapsNote
// that of a --caps-notes one.
const (
	kindMarks    = "marks"
	kindCapsNote = "caps_note"
)

// The kinds of mark, as the truth records them and as refbatch names
// the regions it finds.
const (
	markSignature = "signature"
	markStamp     = "stamp"
	markMargin    = "mark"
)

// markFamily is one way of drawing one kind of mark.
type markFamily struct {
	Name string
	Kind string
	// Held is set for a family held out from calibration.
	Held bool
	What string // for --help and the corpus's README
}

// markFamilies are every family of mark, calibration ones first within
// each kind.
var markFamilies = []markFamily{
	{"scribble", markSignature, false, "a curve wandering right with loops back and a flourish, 0.8 to 3.5 in wide"},
	{"script_name", markSignature, false, "the signer's name in one of three script fonts of the note hands, 0.9 to 2.8 in, sometimes underlined"},
	{"garland", markSignature, true, "one to four pen strokes of loops on a wandering baseline with tall loops, gaps between them, a dot or an underline, up to 4 in wide and 1 in tall"},
	{"initials", markSignature, true, "one to three capitals in a font no note uses, large, with dots and sometimes a short stroke under them, 0.4 to 1.3 in"},
	{"name_flourish", markSignature, true, "a surname in a font no note uses, with a long underline flourish back under it, up to 4 in"},
	{"framed", markStamp, false, "a rectangular stamp, heavy and thin frame, a word and a date"},
	{"bare_caps", markStamp, false, "one to three lines of capitals and a date with no frame"},
	{"round", markStamp, true, "two concentric circles, a word and a date across the middle, a bar above and below"},
	{"ruled_box", markStamp, true, "a single frame of three or four lines (the clinic, a word, a date in a ruled band, a reference)"},
	{"tick", markMargin, false, "a tick in a margin beside a line of print"},
	{"circle", markMargin, false, "a loop drawn round a word or two of print"},
	{"margin_initials", markMargin, true, "two or three small letters in a margin in a font no note uses"},
	{"underline", markMargin, true, "a wavering stroke under a phrase of print"},
	{"crossout", markMargin, true, "a stroke or a zigzag through a word of print"},
}

// marksDoc is the plan of one --marks or --caps-notes letter.
type marksDoc struct {
	Kind      string
	DPI       int
	Signature string // a signature family
	SignOff   string // how the letter is signed off (signOffs)
	Stamp     string // a stamp family, or empty
	Margin    string // a margin-mark family, or empty
	Ink       string // the signature's pen: blue or black
	Hand      int    // --caps-notes: index in capsHands
	Note      int    // --caps-notes: index in handNotes
}

// signOffs are the ways a letter is signed: a valediction above the
// signature and the printed name below it; the signature over the
// printed name; after a "Signed:" label; on a rule with the name under
// it; beside the printed name; or bare.
var signOffs = []string{"valediction", "over_name", "signed_label", "rule_name", "beside_name", "bare"}

// capsHands write notes in block capitals: Humor Sans as the note hands
// have it, and a hand that none of the calibration uses.
var capsHands = []hand{
	{"comic_caps", "fonts-comic-neue", "Comic Neue", "/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf", 16, 2, true},
	{"learn_caps", "fonts-bwht", "Because We Learn", "/usr/share/fonts/opentype/bwht/BecauseWeLearn-Regular.otf", 18, -1, true},
}

// markFonts are the handwriting fonts of the held-out families: none of
// the note hands (hands) is one of them.
var markFonts = []hand{
	{"kaushan", "fonts-kaushanscript", "Kaushan Script", "/usr/share/fonts/opentype/kaushanscript/KaushanScript-Regular.otf", 30, 0, false},
	{"rufscript", "fonts-rufscript", "Rufscript", "/usr/share/fonts/truetype/rufscript/Rufscript010.ttf", 28, 0, false},
	{"havana", "fonts-havana", "Havana", "/usr/share/fonts/opentype/havana/Havana-Regular.otf", 34, 0, false},
	{"ecolier", "fonts-ecolier-court", "Ecolier_court", "/usr/share/fonts/truetype/ecolier-court/Ecolier-court.ttf", 30, 0, false},
}

// markPackages lists the font packages --marks and --caps-notes need
// beyond the note hands'.
func markPackages() []string {
	var out []string
	for _, h := range slices.Concat(capsHands, markFonts) {
		if !slices.Contains(out, h.Package) {
			out = append(out, h.Package)
		}
	}
	return out
}

// checkMarkFonts makes sure every font of --marks and --caps-notes is
// installed, before any document is drawn.
func checkMarkFonts() error {
	for _, h := range slices.Concat(hands, capsHands, markFonts) {
		if _, err := handFont(h); err != nil {
			return fmt.Errorf("%w (--marks and --caps-notes need %s too)", err, strings.Join(markPackages(), " "))
		}
	}
	return nil
}

// selectFamilies returns the families --mark-families names: "all",
// "calibration", "held-out", or a comma-separated list of names.
func selectFamilies(spec string) ([]markFamily, error) {
	switch spec {
	case "", "all":
		return markFamilies, nil
	case "calibration", "held-out":
		held := spec == "held-out"
		return slices.DeleteFunc(slices.Clone(markFamilies), func(f markFamily) bool { return f.Held != held }), nil
	}
	var out []markFamily
	for _, name := range strings.Split(spec, ",") {
		i := slices.IndexFunc(markFamilies, func(f markFamily) bool { return f.Name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("--mark-families: no family %q (all, calibration, held-out, or names among %s)", name, familyNames())
		}
		out = append(out, markFamilies[i])
	}
	return out, nil
}

func familyNames() string {
	var names []string
	for _, f := range markFamilies {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// marksStream is the random stream of these documents' identities, far
// from every other.
const marksStream = 7 << 40

// The sequences marksPlan deals.
const (
	dealSigFamily = iota + 200
	dealStampFamily
	dealMarginFamily
	dealSignOff
	dealMarksDPI
	dealStamped
	dealMarked
	dealCapsHand
	dealCapsNote
)

// marksPlan plans o.Marks signed letters and o.CapsNotes capital notes,
// to follow every other row, numbered on from last. Every letter is
// signed, with a family dealt from the selected signature families; half
// are stamped and two in five marked in a margin, when families of those
// kinds are selected.
func marksPlan(o options, last int, used map[string]bool) []entry {
	r := rng(o.Seed, marksStream)
	d := dealer{o.Seed}
	of := func(kind string) []string {
		var out []string
		for _, f := range o.MarkFamilies {
			if f.Kind == kind {
				out = append(out, f.Name)
			}
		}
		return out
	}
	sigs, stamps, margins := of(markSignature), of(markStamp), of(markMargin)
	if len(sigs) == 0 {
		sigs = []string{"scribble"}
	}
	dpis := handDPIs
	if o.HandDPIs != nil {
		dpis = o.HandDPIs
	}
	var es []entry
	add := func(m marksDoc, state, reason, notes string) {
		i := len(es)
		s := spec{
			SourceID:      fmt.Sprintf("R-%04d", last+1+i),
			ParticipantID: participantID(r, used),
			ReferralDate:  referralDate(r),
			Consent:       true,
			Pages:         1,
			Stream:        marksStream + 1 + uint64(i),
			Marks:         &m,
		}
		es = append(es, entry{Spec: s, Render: true, Variant: varHand, State: state, Reason: reason, Notes: notes, Coverage: true})
	}
	for i := range o.Marks {
		m := marksDoc{
			Kind:      kindMarks,
			DPI:       dpis[d.deal(dealMarksDPI, i, len(dpis))],
			Signature: sigs[d.deal(dealSigFamily, i, len(sigs))],
			SignOff:   signOffs[d.deal(dealSignOff, i, len(signOffs))],
			Ink:       []string{"blue", "black"}[i%2],
		}
		notes := "Signed (" + m.Signature + ")"
		if len(stamps) > 0 && d.deal(dealStamped, i, 2) == 0 {
			m.Stamp = stamps[d.deal(dealStampFamily, i, len(stamps))]
			notes += ", stamped (" + m.Stamp + ")"
		}
		if len(margins) > 0 && d.deal(dealMarked, i, 5) < 2 {
			m.Margin = margins[d.deal(dealMarginFamily, i, len(margins))]
			notes += ", marked (" + m.Margin + ")"
		}
		add(m, string(outcome.Done), "", notes+", no note")
	}
	for i := range o.CapsNotes {
		m := marksDoc{
			Kind:      kindCapsNote,
			DPI:       dpis[d.deal(dealMarksDPI+10, i, len(dpis))],
			Signature: sigs[d.deal(dealSigFamily+10, i, len(sigs))],
			SignOff:   signOffs[d.deal(dealSignOff+10, i, len(signOffs))],
			Ink:       []string{"blue", "black"}[i%2],
			Hand:      d.deal(dealCapsHand, i, len(capsHands)),
			Note:      d.deal(dealCapsNote, i, len(handNotes)),
		}
		add(m, string(outcome.Done)+"|"+string(outcome.Review), "|"+reasonHandwriting, "Handwritten note in capitals, signed")
	}
	return es
}
