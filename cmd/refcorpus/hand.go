package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"golang.org/x/image/font/opentype"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file plans the documents of --handwriting, --signatures and
// --columns: referral letters written on by hand, signed, or laid out in
// two columns other than the --coverage ones. A clinician or the
// referrals office adds a note of two or three lines in the free space of
// the last page or in a margin, in one of six handwriting fonts from
// Debian's font packages, each word with its own slant, size and
// baseline, in blue or black ink. A signature is a short isolated
// scribble, with or without a label beside it; it is not a note and has
// no text to read. The drawing is in handdraw.go and columns.go.

// Kinds of these documents, as the truth records them under scan.kind.
const (
	kindHandNote  = "handwritten_note"
	kindSignature = "signature"
	kindColumns   = "column_layout"
)

// varHand marks the truth of a --handwriting, --signatures or --columns
// document.
const varHand = "handwriting"

// reasonHandwriting is the review reason a note that was not read
// credibly is to end with.
const reasonHandwriting = string(outcome.Handwriting)

// handStream is the random stream of these documents' identities; the
// i-th document's content is drawn from handStream+1+i. It is far from
// every other stream, and the hands, inks, placements and layouts are
// dealt by sequences of their own, so the flags change nothing that was
// there without them.
const handStream = 6 << 40

// handDPIs are the resolutions the handwritten documents are scanned at,
// dealt in turn whatever --dpi-set says.
var handDPIs = []int{200, 300}

// hand is one handwriting: a font from a Debian package and the size
// that makes its letters about as tall as the others'.
type hand struct {
	Name    string
	Package string
	Family  string // for fc-list when the file is not where Debian puts it
	Path    string
	Pt      float64
	Slant   float64 // the writer's usual slant in degrees, positive leaning right
	// Caps is set for a hand that writes every letter as a capital; its
	// notes' truth is in capitals.
	Caps bool
}

// hands are six handwritings that look like different people's: print
// capitals, a lively script, a felt-tip cursive, an informal hand, a
// schoolteacher's and a comic's.
var hands = []hand{
	{"dkg", "fonts-dkg-handwriting", "DkgHandwriting", "/usr/share/fonts/truetype/fifthhorseman/dkg.ttf", 16, 4, false},
	{"dancing_script", "fonts-dancingscript", "Dancing Script", "/usr/share/fonts/opentype/dancingscript/DancingScript-Regular.otf", 19, 2, false},
	{"kristi", "fonts-kristi", "Kristi", "/usr/share/fonts/truetype/kristi/Kristi.ttf", 26, 0, false},
	{"breip", "fonts-breip", "Breip", "/usr/share/fonts/truetype/breip/Breip.ttf", 18, -2, false},
	{"femkeklaver", "fonts-femkeklaver", "femkeklaver", "/usr/share/fonts/truetype/femkeklaver/femkeklaver.ttf", 19, 3, false},
	{"humor_sans", "fonts-humor-sans", "Humor Sans", "/usr/share/fonts/truetype/humor-sans/Humor-Sans.ttf", 15, 0, true},
}

// handPackages lists the font packages the handwritten documents need.
func handPackages() []string {
	var out []string
	for _, h := range hands {
		out = append(out, h.Package)
	}
	return out
}

var (
	handMu    sync.Mutex
	handFonts = map[string]*opentype.Font{}
)

// handFont finds and parses h's font once: at Debian's path, or where
// fc-list says the family is. A missing font is an error naming the
// package to install.
func handFont(h hand) (*opentype.Font, error) {
	handMu.Lock()
	defer handMu.Unlock()
	if f, ok := handFonts[h.Name]; ok {
		return f, nil
	}
	path := h.Path
	if _, err := os.Stat(path); err != nil {
		path = ""
		if out, err := exec.Command("fc-list", ":family="+h.Family, "file").Output(); err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				if p := strings.TrimSuffix(strings.TrimSpace(l), ":"); p != "" {
					path = p
					break
				}
			}
		}
	}
	if path == "" {
		return nil, fmt.Errorf("the %s handwriting needs the font package %s: install it (apt-get install %s, or make deps)", h.Name, h.Package, strings.Join(handPackages(), " "))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the %s handwriting: %w", h.Name, err)
	}
	f, err := opentype.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("parsing the %s handwriting (%s): %w", h.Name, path, err)
	}
	handFonts[h.Name] = f
	return f, nil
}

// checkHands makes sure every handwriting font is installed, before any
// document is drawn.
func checkHands() error {
	for _, h := range hands {
		if _, err := handFont(h); err != nil {
			return err
		}
	}
	return nil
}

// handNotes are the notes written on the letters, each as its writer
// broke it into lines. Invented like the rest of the corpus, but the kind
// of thing that gets written on referrals and must not be lost.
var handNotes = [][]string{
	{"Allergic to penicillin", "- rash and swelling 2019"},
	{"Bloods booked for Friday morning.", "Patient takes warfarin, check INR", "before any biopsy."},
	{"Phoned the daughter on Tuesday:", "patient is hard of hearing"},
	{"Interpreter needed (Polish)", "please book double slot"},
	{"Pacemaker fitted last year", "NO MRI"},
	{"Latex allergy!", "use nitrile gloves only"},
	{"Diabetic on insulin -", "early morning appointment please"},
	{"Lives alone, son drives her in.", "Call son before any change", "of appointment time."},
	{"Needle phobic - allow extra time", "for bloods"},
	{"Wheelchair user,", "needs step free access"},
	{"Seen in A&E last week", "with chest pain, ECG normal"},
	{"Please fast from midnight", "before the scan"},
	{"Carer must attend", "patient has dementia"},
	{"Stopped aspirin on Monday", "restart after procedure"},
	{"Urgent - discussed with", "consultant on call today"},
	{"Hep B positive", "inform the clinic team"},
}

// sigLabels are the ways a signature is marked: bare (no label), after
// "Signed:", on a printed line, beside the printed name, or all three.
var sigLabels = []string{"bare", "signed", "line", "name", "signed_line_name"}

// columnLayouts are the two-column layouts of --columns: unequal columns
// below the full-width form, unequal columns ending above a full-width
// paragraph, and columns ending above a table whose rows must be kept.
var columnLayouts = []string{"unequal_below", "above_full", "above_table"}

// Placements of a note.
const (
	placeFree   = "free_space"    // below the last page's text
	placeTop    = "margin_top"    // the top margin of the last page
	placeBottom = "margin_bottom" // the bottom margin, below the page number
)

var placements = []string{placeFree, placeTop, placeBottom}

// handDoc is the plan of one --handwriting, --signatures or --columns
// document.
type handDoc struct {
	Kind  string
	DPI   int
	Hand  int    // index in hands (notes and signatures)
	Ink   string // blue or black
	Place string // notes: where the note is
	Note  int    // notes: index in handNotes
	// Sig is how a signature is labelled (sigLabels), or empty for none.
	Sig    string
	Layout string // columns: one of columnLayouts
}

// The sequences handPlan deals, apart from the coverage documents'.
const (
	dealHand = iota + 100
	dealInkColour
	dealPlace
	dealNote
	dealSig
	dealHandDPI
	dealLayoutCol
)

// handPlan plans o.Handwriting notes, o.Signatures signed documents and
// o.Columns column layouts, to follow every other row, numbered on from
// last. Every note comes round in each hand, in both inks, in each
// placement and at both resolutions, as far as the counts allow; half of
// the notes have a signature too.
func handPlan(o options, last int, used map[string]bool) []entry {
	r := rng(o.Seed, handStream)
	d := dealer{o.Seed}
	var es []entry
	add := func(h handDoc, pages int, state, reason, notes string) {
		i := len(es)
		s := spec{
			SourceID:      fmt.Sprintf("R-%04d", last+1+i),
			ParticipantID: participantID(r, used),
			ReferralDate:  referralDate(r),
			Consent:       true,
			Pages:         pages,
			Stream:        handStream + 1 + uint64(i),
			Hand:          &h,
		}
		es = append(es, entry{Spec: s, Render: true, Variant: varHand, State: state, Reason: reason, Notes: notes, Coverage: true})
	}
	inks := []string{"blue", "black"}
	dpis := handDPIs
	if o.HandDPIs != nil {
		dpis = o.HandDPIs
	}
	for i := range o.Handwriting {
		h := handDoc{
			Kind:  kindHandNote,
			DPI:   dpis[d.deal(dealHandDPI, i, len(dpis))],
			Hand:  d.deal(dealHand, i, len(hands)),
			Ink:   inks[(i/len(hands))%2],
			Place: placements[d.deal(dealPlace, i, len(placements))],
			Note:  d.deal(dealNote, i, len(handNotes)),
		}
		// A margin holds two lines.
		for h.Place != placeFree && len(handNotes[h.Note]) > 2 {
			h.Note = (h.Note + 1) % len(handNotes)
		}
		if d.deal(dealSig, i, 2) == 1 {
			h.Sig = sigLabels[1+r.IntN(len(sigLabels)-1)]
		}
		// Done only when the note is read; otherwise review handwriting.
		add(h, 1+r.IntN(2), string(outcome.Done)+"|"+string(outcome.Review), "|"+reasonHandwriting, "Handwritten note, "+h.Ink+" ink")
	}
	for i := range o.Signatures {
		h := handDoc{
			Kind: kindSignature,
			DPI:  dpis[d.deal(dealHandDPI+10, i, len(dpis))],
			Hand: d.deal(dealHand+10, i, len(hands)),
			Ink:  inks[i%2],
			Sig:  sigLabels[d.deal(dealSig+10, i, len(sigLabels))],
		}
		add(h, 1, string(outcome.Done), "", "Signed, no note")
	}
	for i := range o.Columns {
		h := handDoc{
			Kind:   kindColumns,
			DPI:    dpis[d.deal(dealHandDPI+20, i, len(dpis))],
			Layout: columnLayouts[d.deal(dealLayoutCol, i, len(columnLayouts))],
		}
		add(h, 1, string(outcome.Done), "", "Summary in two columns of unequal width")
	}
	return es
}
