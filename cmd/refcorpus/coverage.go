package main

import (
	"fmt"
	"math"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file draws the documents of --coverage: referral letters holding
// text that Tesseract leaves unread while the words it does read keep
// confidences near 95, and clean controls of the same layouts. Tesseract
// binarises a page with one global threshold, so print lighter than that
// threshold becomes paper before layout analysis: a note from the
// referrals office in light grey small print, a footer of small print. A
// section of two columns is read line by line across both columns, and a
// large stamp over a paragraph takes whole lines with it. The documents
// measure how much of a page's text a reading covers, and the controls
// count the clean pages a coverage check would send to review.
//
// Every page is 8-bit grey (or RGB on coloured paper): on a 1-bit page the
// faint print would have been kept or lost by the scanner already.

// Coverage kinds, as the truth records them under scan.coverage.kind.
const (
	covFaintNote   = "faint_note"      // a note from the referrals office in faint small print, after the page's text
	covSmallPrint  = "small_print"     // a footer of 3 to 5 lines of faint 6 or 7 pt print, above the page number
	covColumns     = "columns"         // a section of two columns of text side by side
	covStamps      = "stamp_over_text" // one or two large stamps over a paragraph, crossing whole lines
	covColourFaint = "coloured_faint"  // coloured paper (RGB) with a faint note
	covColoured    = "coloured"        // coloured paper with the note in dark print of normal size
	covControl     = "control"         // grey paper with the note or the footer in dark print of normal size
)

// coverageKinds is one cycle of the --coverage deck. The faint note comes
// twice, since it is the failure the documents are for.
var coverageKinds = []string{covFaintNote, covColumns, covSmallPrint, covStamps, covColourFaint, covControl, covFaintNote, covColoured}

// Where faint print sits on its page, for faintPrint.Where.
const (
	whereNote   = "note"   // a paragraph after the page's text
	whereFooter = "footer" // small print above the page number
)

// varCoverage marks the truth of a --coverage document.
const varCoverage = "coverage"

// coverageStream is the random stream of the coverage documents'
// identities; the i-th document's content is drawn from
// coverageStream+1+i. coverageDeckStream and the streams above it deal
// the kinds and the levels, one cycle per stream. All are far from every
// other stream, so --coverage changes nothing that was there without it.
const (
	coverageStream     = 4 << 40
	coverageDeckStream = 5 << 40
)

// DefaultFaintInk is the range of grey levels the faint print is drawn
// in, on paper of about 245: from clearly grey to barely there.
var DefaultFaintInk = [2]int{110, 190}

// faintNotePts and faintFooterPts are the type sizes of faint print.
var (
	faintNotePts   = []float64{6, 7, 8}
	faintFooterPts = []float64{6, 7}
)

// Dark print of the controls: the note in the body's size, the footer in
// this size.
const controlFooterPt = 9

// The words of the extra text. They are invented or generic, like the
// rest of the corpus, but they matter clinically, as the notes that get
// lost do: an allergy, a hearing problem, booked blood tests.
var (
	officeNotes = []string{
		"The participant reported an allergy to iodinated contrast agent when the appointment was booked.",
		"Hearing is poor in both ears: please face the participant and speak clearly.",
		"Blood tests (full blood count and kidney function) are booked for the morning of the visit.",
		"The participant takes warfarin; please check the INR before any procedure.",
		"A latex allergy was recorded at an earlier visit.",
		"The participant has a pacemaker fitted and must not enter the MRI scanner.",
		"An interpreter has been requested for the appointment.",
		"The participant uses a wheelchair and needs step-free access.",
		"Fasting is required from midnight before the blood tests.",
		"The participant is pregnant; please avoid X-rays where possible.",
		"Needle phobia reported: allow extra time for the blood tests.",
		"Penicillin allergy: rash and facial swelling on the last course.",
		"The participant is diabetic and takes insulin; please offer an early slot.",
		"Claustrophobia reported: the scan may need sedation.",
		"Transport has been booked for the outward and return journeys.",
	}
	smallPrint = []string{
		"This referral contains confidential clinical information and is intended only for the service named above.",
		"If you have received it in error, please inform the sender at once and destroy every copy.",
		"Personal data in this form are processed under the clinic's data protection policy and kept no longer than needed.",
		"Appointments missed without notice may be returned to the referrer without further contact.",
		"Please bring a list of current medicines, including any bought without a prescription, to every appointment.",
		"Results are sent to the referring clinician, who will discuss them with the participant.",
		"Interpreters and hearing loops are available on request; please ask when booking.",
		"The referrals office is open on weekdays from nine to five; urgent questions go to the duty clinician.",
	}
	plans = []string{
		"Continue the current medication at the same dose until the review.",
		"Repeat the blood tests in six weeks and compare with the last results.",
		"A referral for physiotherapy has been made in parallel.",
		"The participant was advised to keep the symptom diary going.",
		"Simple analgesia may be used for flare-ups, no more than four times a day.",
		"Please let the practice know if an urgent review is needed sooner.",
		"A follow up call is planned after the specialist appointment.",
		"The practice nurse will recheck blood pressure in two weeks.",
	}
)

// noteOpening starts every office note.
const noteOpening = "Note from the referrals office:"

// paperColour is a pale paper for the coloured kinds.
type paperColour struct {
	Name string
	RGB  [3]uint8
}

var paperColours = []paperColour{
	{"blue", [3]uint8{214, 228, 244}},
	{"pink", [3]uint8{247, 220, 229}},
	{"green", [3]uint8{220, 239, 220}},
	{"yellow", [3]uint8{250, 243, 196}},
}

// faintPrint is how a page's faint print is drawn; the truth records it
// under scan.coverage.faint.
type faintPrint struct {
	Where string  `json:"where"` // whereNote or whereFooter
	Ink   uint8   `json:"ink"`   // grey level of full print (0 black, 255 white)
	Pt    float64 `json:"pt"`
	Blur  string  `json:"blur"` // none or slight
	// BlurRadius and BlurPasses are the box blur of slight, in scan
	// pixels: the print is soft, the rest of the page is not.
	BlurRadius int `json:"blur_radius,omitempty"`
	BlurPasses int `json:"blur_passes,omitempty"`
}

// coverDoc is the plan of one --coverage document, dealt by coveragePlan.
type coverDoc struct {
	Kind  string
	DPI   int
	Pages int // content pages: 1 or 2
	On    int // the page (from 0) with the note, footer, columns or stamps
	Faint *faintPrint
	// Layout is what a control or a coloured page draws in dark print:
	// covFaintNote (the note) or covSmallPrint (the footer).
	Layout string
	Colour *paperColour // coloured kinds
	Stamps int          // stamp kind: 1 or 2
}

// faint reports whether the plan draws faint print.
func (c coverDoc) faint() bool { return c.Faint != nil }

// coverMeta is a coverage page's recipe, as the truth records it under
// scan.coverage. Every page of a coverage document has one; the faint
// print, the gutter and the stamps are on the page that has them.
type coverMeta struct {
	Kind        string      `json:"kind"`
	Layout      string      `json:"layout,omitempty"` // control and coloured: the layout in dark print
	Paper       uint8       `json:"paper,omitempty"`  // grey pages: the paper's grey level
	PaperColour string      `json:"paper_colour,omitempty"`
	PaperRGB    *[3]uint8   `json:"paper_rgb,omitempty"`
	Faint       *faintPrint `json:"faint,omitempty"`
	// GutterIn is the space between the two columns, in inches.
	GutterIn float64 `json:"gutter_in,omitempty"`
	Stamps   int     `json:"stamps,omitempty"`
	StampPt  float64 `json:"stamp_pt,omitempty"`
	// CrossedLines counts the drawn lines of text whose glyph boxes a
	// stamp's ink overlaps.
	CrossedLines int `json:"crossed_lines,omitempty"`
}

// coverageOutcome is what expected.csv says of a kind: a document with
// faint print or stamps may be done only when its text is read, which the
// evaluation checks (faint recall), or in review incomplete_text; the
// others must be done.
func coverageOutcome(c coverDoc) (state, reason string) {
	if c.faint() || c.Kind == covStamps {
		return string(outcome.Done) + "|" + string(outcome.Review), "|" + string(outcome.IncompleteText)
	}
	return string(outcome.Done), ""
}

// coverageNotes is the --bad-all manifest's notes column of a kind.
func coverageNotes(c coverDoc) string {
	switch c.Kind {
	case covFaintNote:
		return "Office note printed light and small"
	case covSmallPrint:
		return "Small print footer, light"
	case covColumns:
		return "Summary in two columns"
	case covStamps:
		return "Stamped over the text"
	case covColourFaint:
		return "On " + c.Colour.Name + " paper, office note printed light"
	case covColoured:
		return "On " + c.Colour.Name + " paper"
	}
	return "Control: dark print"
}

// dealer deals values from shuffled cycles: every cycle of n deals holds
// each of 0..n-1 once, so a small corpus still has every kind and level.
type dealer struct{ seed uint64 }

// deal returns the i-th value of sequence what, dealt in cycles of n.
func (d dealer) deal(what uint64, i, n int) int {
	return rng(d.seed, coverageDeckStream+what<<32+uint64(i/n)).Perm(n)[i%n]
}

// The sequences a dealer deals.
const (
	dealKind = iota
	dealDPI
	dealPages
	dealLater
	dealInk
	dealNotePt
	dealFooterPt
	dealBlur
	dealColour
	dealLayout
	dealStamps
)

// coveragePlan plans o.Coverage documents, to follow every other row
// (the hard documents included), numbered on from last, the highest
// source number so far. Their identities are drawn from coverageStream
// and kept apart from the used ones.
func coveragePlan(o options, last int, used map[string]bool) []entry {
	r := rng(o.Seed, coverageStream)
	d := dealer{o.Seed}
	lo, hi := o.FaintInk[0], o.FaintInk[1]
	if o.FaintInk == [2]int{} {
		lo, hi = DefaultFaintInk[0], DefaultFaintInk[1]
	}
	var faint, layouts, colours, stamps int
	var es []entry
	for i := range o.Coverage {
		c := coverDoc{
			Kind:  coverageKinds[d.deal(dealKind, i, len(coverageKinds))],
			DPI:   o.DPIs[d.deal(dealDPI, i, len(o.DPIs))],
			Pages: 1 + d.deal(dealPages, i, 2),
		}
		switch c.Kind {
		case covFaintNote, covSmallPrint, covColourFaint:
			// The levels are dealt over the faint documents alone, in
			// cycles of different lengths, so that they combine freely.
			f := &faintPrint{Where: whereNote, Blur: "none"}
			k := d.deal(dealInk, faint, 5)
			f.Ink = uint8(lo + (hi-lo)*k/5 + r.IntN((hi-lo)/5+1))
			f.Pt = faintNotePts[d.deal(dealNotePt, faint, len(faintNotePts))]
			if c.Kind == covSmallPrint {
				f.Where, f.Pt = whereFooter, faintFooterPts[d.deal(dealFooterPt, faint, len(faintFooterPts))]
			}
			if d.deal(dealBlur, faint, 2) == 1 {
				f.Blur, f.BlurRadius, f.BlurPasses = "slight", 1, max(1, c.DPI/150)
			}
			if d.deal(dealLater, faint, 2) == 1 {
				c.Pages, c.On = 2, 1 // on a later page
			}
			c.Faint = f
			faint++
		case covColumns:
			c.On = c.Pages - 1
		case covStamps:
			c.Stamps = 1 + d.deal(dealStamps, stamps, 2)
			c.On = c.Pages - 1
			stamps++
		case covControl, covColoured:
			c.Layout = []string{covFaintNote, covSmallPrint}[d.deal(dealLayout, layouts, 2)]
			c.On = c.Pages - 1
			layouts++
		}
		if c.Kind == covColoured || c.Kind == covColourFaint {
			pc := paperColours[d.deal(dealColour, colours, len(paperColours))]
			c.Colour = &pc
			colours++
		}
		s := spec{
			SourceID:      fmt.Sprintf("R-%04d", last+1+i),
			ParticipantID: participantID(r, used),
			ReferralDate:  referralDate(r),
			Consent:       true,
			Pages:         c.Pages,
			Stream:        coverageStream + 1 + uint64(i),
			Cover:         &c,
		}
		state, reason := coverageOutcome(c)
		es = append(es, entry{Spec: s, Render: true, Variant: varCoverage, State: state, Reason: reason, Notes: coverageNotes(c), Coverage: true})
	}
	return es
}

// renderCoverage draws the coverage document s describes.
func renderCoverage(seed uint64, s spec, fonts fontSet) (rendered, error) {
	c := *s.Cover
	r := rng(seed, s.Stream)
	f := newForm(r, s.ParticipantID, s.ReferralDate, s.Consent, c.Pages)
	ds := newDocStyle(r, []int{c.DPI})
	fc, err := newFaces(fonts, ds)
	if err != nil {
		return rendered{}, err
	}
	defer fc.Close()
	cf, err := newCoverFaces(r, fonts, c)
	if err != nil {
		return rendered{}, err
	}
	defer cf.Close()
	look := newCoverLook(r, c)
	t := newTruth(s, ds)
	var out rendered
	for i, blocks := range f.Pages {
		meta := coverMeta{Kind: c.Kind, Layout: c.Layout, Paper: look.Paper}
		if c.Colour != nil {
			meta.Paper, meta.PaperColour, meta.PaperRGB = 0, c.Colour.Name, &look.PaperRGB
		}
		skew := math.Round((r.Float64()*2-1)*maxSkew*10) / 10
		cp, err := drawCoverPage(r, blocks, ds, fc, cf, c, i == c.On, s.ReferralDate, &meta)
		if err != nil {
			return rendered{}, fmt.Errorf("page %d: %w", i+1, err)
		}
		img := scanCoverPage(r, cp.planes, c, look, skew)
		pi, em, err := encodeCover(img, look.Quality)
		if err != nil {
			return rendered{}, fmt.Errorf("storing page %d: %w", i+1, err)
		}
		tp := cp.truth
		tp.SkewDegrees = skew
		tp.Scan = &scanMeta{Kind: c.Kind, DPI: c.DPI, Colour: em.Colour, Encoding: em.Encoding, JPEGQuality: em.JPEGQuality, Stamp: cp.stamp, Coverage: &meta}
		t.Pages = append(t.Pages, tp)
		out.Pages = append(out.Pages, pageSpec{W: pt(pi.W, c.DPI), H: pt(pi.H, c.DPI), Image: &pi})
	}
	out.Truth = t
	return out, nil
}
