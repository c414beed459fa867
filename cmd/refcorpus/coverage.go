package main

import (
	"errors"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

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

// coverLook is how a coverage document's pages look: paper, print, the
// stamps' ink, noise and storage.
type coverLook struct {
	Paper, Ink       uint8    // grey pages
	PaperRGB, InkRGB [3]uint8 // coloured pages
	StampTone        uint8
	NoiseShare       float64
	Specks           int
	Quality          int // JPEG quality; 0 stores the pages with Flate
}

func newCoverLook(r *rand.Rand, c coverDoc) coverLook {
	l := coverLook{
		Paper:      uint8(240 + r.IntN(9)),
		Ink:        uint8(10 + r.IntN(36)),
		StampTone:  uint8(50 + r.IntN(70)),
		NoiseShare: (0.002 + r.Float64()*0.006) / 5, // as on grey pages: noise makes Flate pages big
		Specks:     10 + r.IntN(40),
	}
	if c.Colour != nil {
		for k := range 3 {
			l.PaperRGB[k] = uint8(int(c.Colour.RGB[k]) - 3 + r.IntN(7))
		}
		l.InkRGB = [3]uint8{uint8(20 + r.IntN(30)), uint8(20 + r.IntN(30)), uint8(30 + r.IntN(40))}
	}
	// Colour pages above 150 DPI are JPEG, as yellowed pages are; half of
	// the grey ones are too.
	if (c.Colour != nil && c.DPI > 150) || r.IntN(2) == 0 {
		l.Quality = 60 + r.IntN(31)
	}
	return l
}

// coverFaces are the faces a coverage page draws its extra text with.
type coverFaces struct {
	faint, footer, stamp font.Face
	stampPt              float64
}

func (cf coverFaces) Close() {
	for _, f := range []font.Face{cf.faint, cf.footer, cf.stamp} {
		if f != nil {
			f.Close()
		}
	}
}

func newCoverFaces(r *rand.Rand, fonts fontSet, c coverDoc) (coverFaces, error) {
	mk := func(f *opentype.Font, pt float64) (font.Face, error) {
		return opentype.NewFace(f, &opentype.FaceOptions{Size: pt, DPI: float64(c.DPI), Hinting: font.HintingNone})
	}
	var cf coverFaces
	var err error
	notePt, footerPt := float64(0), float64(controlFooterPt)
	if c.Faint != nil {
		notePt, footerPt = c.Faint.Pt, c.Faint.Pt
	}
	if notePt > 0 {
		if cf.faint, err = mk(fonts.regular, notePt); err != nil {
			return cf, fmt.Errorf("making the faint face: %w", err)
		}
	}
	if cf.footer, err = mk(fonts.regular, footerPt); err != nil {
		cf.Close()
		return cf, fmt.Errorf("making the footer face: %w", err)
	}
	cf.stampPt = float64(30 + 2*r.IntN(6))
	if cf.stamp, err = mk(fonts.bold, cf.stampPt); err != nil {
		cf.Close()
		return cf, fmt.Errorf("making the stamp face: %w", err)
	}
	return cf, nil
}

// coverPlanes are a page's layers before it is scanned: the dark print,
// the faint print and the stamps, each 255 where there is nothing.
type coverPlanes struct {
	ink, faint, stamp *image.Gray
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
	t := truthDoc{SourceID: s.SourceID, ParticipantID: s.ParticipantID, ReferralDate: s.ReferralDate, Paper: ds.Paper.Name, DPI: ds.DPI, BodyFont: "goregular", BodyPt: ds.BodyPt}
	if ds.Mono {
		t.BodyFont = "gomono"
	}
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

// encodeCover stores a coverage page: JPEG at the look's quality, or
// Flate.
func encodeCover(img image.Image, quality int) (pdfImage, scanMeta, error) {
	m := scanMeta{Colour: "grey", Encoding: "flate"}
	var pi pdfImage
	var err error
	switch g := img.(type) {
	case *image.RGBA:
		m.Colour = "rgb"
		if quality == 0 {
			pi, err = rgbFlate(g)
		} else {
			pi, err = dct(g, quality)
		}
	case *image.Gray:
		if quality == 0 {
			pi, err = grayFlate(g)
		} else {
			pi, err = dct(g, quality)
		}
	default:
		err = fmt.Errorf("unexpected image type %T", img)
	}
	if quality != 0 {
		m.Encoding, m.JPEGQuality = "dct", quality
	}
	return pi, m, err
}

// coverPage is one drawn page of a coverage document.
type coverPage struct {
	planes coverPlanes
	truth  truthPage
	stamp  string // the stamps' words, which are not part of the page's text
}

// drawCoverPage lays out one page of a coverage document and, on the
// page that has it (on), its note, footer, columns or stamps. The truth
// holds the page's text in reading order, the faint text and whether the
// page has columns; meta records what was drawn.
func drawCoverPage(r *rand.Rand, blocks []block, ds docStyle, fc faces, cf coverFaces, c coverDoc, on bool, date string, meta *coverMeta) (coverPage, error) {
	ink, pl, err := layoutPage(blocks, ds, fc)
	if err != nil {
		return coverPage{}, err
	}
	p := coverPage{planes: coverPlanes{ink: ink}, truth: truthPage{Text: pl.Text}}
	if !on {
		return p, nil
	}
	// The footer ("Page i of n") is the last block, so its line is the
	// text's last; the extra text goes before it.
	i := strings.LastIndex(pl.Text, "\n")
	body, pageNo := pl.Text[:i], pl.Text[i+1:]
	dpi := ds.DPI
	left, right := int(margin*float64(dpi)), ink.Bounds().Dx()-int(margin*float64(dpi))
	gap := lineHeight(fc.body) / 2
	layout := c.Kind
	switch c.Kind {
	case covControl, covColoured:
		layout = c.Layout
	case covColourFaint:
		layout = covFaintNote
	}
	// plane is where the note or the footer is drawn: with the dark print,
	// or on a plane of its own when it is faint.
	plane := ink
	if c.faint() {
		p.planes.faint = blankLike(ink)
		plane = p.planes.faint
		meta.Faint = c.Faint
	}
	var extra []string
	switch layout {
	case covFaintNote:
		face := fc.body
		if c.faint() {
			face = cf.faint
		}
		// Three to five sentences, fewer when the page has no room.
		n := 3 + r.IntN(3)
		order := r.Perm(len(officeNotes))
		for ; n >= 1; n-- {
			extra = wrap(face, noteOpening+" "+joinFrom(officeNotes, order[:n]), right-left)
			if pl.End+gap+len(extra)*lineHeight(face) <= pl.Foot-gap {
				break
			}
		}
		if n < 1 {
			return p, errors.New("no room for the office note")
		}
		drawLines(plane, face, left, pl.End+gap, extra)
	case covSmallPrint:
		face := cf.footer
		// Whole sentences until the footer has 3 to 5 lines.
		want := 3 + r.IntN(3)
		order := r.Perm(len(smallPrint))
		for k := 1; k <= len(order) && len(extra) < want; k++ {
			next := wrap(face, joinFrom(smallPrint, order[:k]), right-left)
			if len(next) > 5 && len(extra) >= 3 {
				break
			}
			extra = next
		}
		top := pl.Foot - gap/2 - len(extra)*lineHeight(face)
		if top < pl.End+gap {
			return p, fmt.Errorf("no room for the small print: %d px short", pl.End+gap-top)
		}
		drawLines(plane, face, left, top, extra)
	case covColumns:
		gutter := 0.25 + 0.05*float64(r.IntN(6))
		gutterPx := int(math.Round(gutter * float64(dpi)))
		colW := (right - left - gutterPx) / 2
		x2 := left + colW + gutterPx
		n := 3 + r.IntN(2)
		first, second := r.Perm(len(histories)), r.Perm(len(plans))
		for ; n >= 1; n-- {
			a := wrap(fc.body, joinFrom(histories, first[:n]), colW)
			b := wrap(fc.body, joinFrom(plans, second[:n]), colW)
			height := lineHeight(fc.heading) + lineHeight(fc.label) + max(len(a), len(b))*lineHeight(fc.body)
			if pl.End+gap+height > pl.Foot-gap {
				continue
			}
			y := pl.End + gap
			drawLines(ink, fc.heading, left, y, []string{"Clinical summary"})
			y += lineHeight(fc.heading)
			drawLines(ink, fc.label, left, y, []string{"Background"})
			drawLines(ink, fc.label, x2, y, []string{"Current plan"})
			y += lineHeight(fc.label)
			drawLines(ink, fc.body, left, y, a)
			drawLines(ink, fc.body, x2, y, b)
			// Column order: the whole of the first column, then the second.
			extra = append([]string{"Clinical summary", "Background"}, a...)
			extra = append(append(extra, "Current plan"), b...)
			break
		}
		if n < 1 {
			return p, errors.New("no room for the columns")
		}
		p.truth.Columns, meta.GutterIn = true, gutter
	case covStamps:
		p.planes.stamp = blankLike(ink)
		words, crossed, err := stampParagraphs(r, p.planes.stamp, blocks, pl, ds, fc, cf, c.Stamps, left, right, date)
		if err != nil {
			return p, err
		}
		p.stamp = words
		meta.Stamps, meta.StampPt, meta.CrossedLines = c.Stamps, cf.stampPt, crossed
		return p, nil
	}
	if c.faint() {
		p.truth.FaintText = strings.Join(extra, "\n")
	}
	p.truth.Text = body + "\n" + strings.Join(append(extra, pageNo), "\n")
	return p, nil
}

// joinFrom joins the sentences of list at the indices idx, in that order.
func joinFrom(list []string, idx []int) string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = list[j]
	}
	return strings.Join(out, " ")
}

// blankLike returns a white plane the size of img.
func blankLike(img *image.Gray) *image.Gray {
	out := image.NewGray(img.Bounds())
	fill(out, 255)
	return out
}

// drawLines draws lines of face in black onto dst, the first line's top
// at top, one lineHeight apart, as layoutPage draws a paragraph.
func drawLines(dst *image.Gray, face font.Face, x, top int, lines []string) {
	asc := face.Metrics().Ascent.Ceil()
	for i, l := range lines {
		d := &font.Drawer{Dst: dst, Src: image.Black, Face: face, Dot: fixed.P(x, top+i*lineHeight(face)+asc)}
		drawText(d, l)
	}
}

// paraSpan is where a paragraph's lines were drawn: the pixel rows from
// the first line's top to the last line's bottom.
type paraSpan struct{ top, bottom, lines int }

// paragraphs finds the drawn paragraphs of a page among its text runs,
// longest first.
func paragraphs(blocks []block, pl pageLayout, fc faces, width int) []paraSpan {
	m := fc.body.Metrics()
	var out []paraSpan
	for _, b := range blocks {
		if b.Kind != blockPara {
			continue
		}
		lines := wrap(fc.body, b.Text, width)
		for k := 0; k+len(lines) <= len(pl.Runs); k++ {
			if pl.Runs[k].Text != lines[0] || pl.Runs[k+len(lines)-1].Text != lines[len(lines)-1] {
				continue
			}
			out = append(out, paraSpan{
				top:    pl.Runs[k].Baseline - m.Ascent.Ceil(),
				bottom: pl.Runs[k+len(lines)-1].Baseline + m.Descent.Ceil(),
				lines:  len(lines),
			})
			break
		}
	}
	slices.SortStableFunc(out, func(a, b paraSpan) int { return b.lines - a.lines })
	return out
}

// bigStampWords are what the large stamps say.
var bigStampWords = []string{"RECEIVED", "URGENT", "SCANNED", "CONFIDENTIAL", "ENTERED"}

// stampParagraphs stamps n large stamps onto plane over the page's
// longest paragraphs: the second over the next paragraph or, on a page
// of one, beside the first. It returns the stamps' words and how many
// drawn lines of text their ink crosses.
func stampParagraphs(r *rand.Rand, plane *image.Gray, blocks []block, pl pageLayout, ds docStyle, fc faces, cf coverFaces, n, left, right int, date string) (string, int, error) {
	paras := paragraphs(blocks, pl, fc, right-left)
	if len(paras) == 0 {
		return "", 0, errors.New("no paragraph to stamp")
	}
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return "", 0, err
	}
	w := right - left
	lh := lineHeight(fc.body)
	var words []string
	for k := range n {
		p := paras[min(k, len(paras)-1)]
		// Centred on the paragraph, across its middle lines.
		cx := left + w*(30+r.IntN(41))/100
		if n == 2 && len(paras) == 1 {
			cx = left + w*(15+r.IntN(15)+50*k)/100 // side by side
		}
		st := stamp{
			Lines:  []string{pick(r, bigStampWords), strings.ToUpper(day.AddDate(0, 0, 1+r.IntN(20)).Format("2 Jan 2006"))},
			CX:     cx,
			CY:     (p.top+p.bottom)/2 - lh/2 + r.IntN(lh+1),
			Angle:  float64(2+r.IntN(9)) * float64(1-2*r.IntN(2)),
			Misses: 0.03 + r.Float64()*0.1,
		}
		one := blankLike(plane)
		drawStamp(r, one, cf.stamp, st, ds.DPI)
		for i, v := range one.Pix {
			plane.Pix[i] = min(plane.Pix[i], v)
		}
		words = append(words, strings.Join(st.Lines, " "))
	}
	// A line is crossed when stamp ink falls in the box of its glyphs.
	crossed := map[int]bool{}
	scale := float64(ds.DPI) / 72
	for _, run := range pl.Runs {
		width := float64(font.MeasureString(fc.body, run.Text).Ceil()) * run.Pt / ds.BodyPt
		box := image.Rect(run.X, run.Baseline-int(0.75*run.Pt*scale), run.X+int(width), run.Baseline+int(0.22*run.Pt*scale))
		if !crossed[run.Baseline] && inked(plane, box) {
			crossed[run.Baseline] = true
		}
	}
	return strings.Join(words, " "), len(crossed), nil
}

// inked reports whether plane has ink (darker than mid-grey) inside box.
func inked(plane *image.Gray, box image.Rectangle) bool {
	box = box.Intersect(plane.Bounds())
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for _, v := range plane.Pix[y*plane.Stride+box.Min.X : y*plane.Stride+box.Max.X] {
			if v < 128 {
				return true
			}
		}
	}
	return false
}

// scanCoverPage turns a page's planes into its stored image: skew, paper
// and print tones (or colours), the faint print softened and laid over,
// the stamps, and the light noise and specks of any scan. faint and stamp
// planes are nil on pages without them.
func scanCoverPage(r *rand.Rand, p coverPlanes, c coverDoc, look coverLook, skew float64) image.Image {
	turn := func(src *image.Gray) *image.Gray {
		if src == nil || skew == 0 {
			return src
		}
		out := blankLike(src)
		rotate(out, src, skew)
		return out
	}
	ink, faint, stampPlane := turn(p.ink), turn(p.faint), turn(p.stamp)
	if faint != nil {
		for range c.Faint.BlurPasses {
			boxBlur(faint, c.Faint.BlurRadius)
		}
	}
	if c.Colour != nil {
		return colourPage(r, ink, faint, c, look)
	}
	var lut [256]uint8
	for v := range lut {
		lut[v] = uint8(int(look.Ink) + (int(look.Paper)-int(look.Ink))*v/255)
	}
	out := ink
	for i, v := range out.Pix {
		out.Pix[i] = lut[v]
	}
	if faint != nil {
		overlay(out, faint, c.Faint.Ink)
	}
	if stampPlane != nil {
		overlay(out, stampPlane, look.StampTone)
	}
	addNoise(r, out, scanStyle{DPI: c.DPI, NoiseShare: look.NoiseShare, Specks: look.Specks}, look.Paper, look.Ink)
	return out
}

// overlay lays the ink of plane (0 full ink, 255 none) over out in the
// grey tone: a pixel only ever gets darker, as with ink on paper.
func overlay(out, plane *image.Gray, tone uint8) {
	for i, sv := range plane.Pix {
		if sv == 255 {
			continue
		}
		cov := 255 - int(sv)
		if v := int(out.Pix[i]); int(tone) < v {
			out.Pix[i] = uint8(v - (v-int(tone))*cov/255)
		}
	}
}

// colourPage composes a page on coloured paper: the dark print in the
// look's ink colour, the faint print in its grey, then light noise and
// specks.
func colourPage(r *rand.Rand, ink, faint *image.Gray, c coverDoc, look coverLook) *image.RGBA {
	b := ink.Bounds()
	w, h := b.Dx(), b.Dy()
	img := image.NewRGBA(b)
	for y := range h {
		for x := range w {
			cov := 255 - int(ink.Pix[y*ink.Stride+x])
			fcov := 0
			if faint != nil {
				fcov = 255 - int(faint.Pix[y*faint.Stride+x])
			}
			o := img.PixOffset(x, y)
			for k := range 3 {
				v := (int(look.PaperRGB[k])*(255-cov) + int(look.InkRGB[k])*cov) / 255
				if fi := int(c.Faint.inkOr(255)); fcov > 0 && fi < v {
					v -= (v - fi) * fcov / 255
				}
				img.Pix[o+k] = uint8(v)
			}
			img.Pix[o+3] = 255
		}
	}
	for range int(look.NoiseShare * float64(w*h)) {
		o := img.PixOffset(r.IntN(w), r.IntN(h))
		d := r.IntN(61) - 30 + r.IntN(61) - 30
		for k := range 3 {
			img.Pix[o+k] = uint8(max(0, min(255, int(img.Pix[o+k])+d)))
		}
	}
	radius := max(1, c.DPI/150)
	for range look.Specks {
		cx, cy := r.IntN(w), r.IntN(h)
		rr := radius + r.IntN(radius+1)
		for y := max(0, cy-rr); y < min(h, cy+rr); y++ {
			for x := max(0, cx-rr); x < min(w, cx+rr); x++ {
				if (x-cx)*(x-cx)+(y-cy)*(y-cy) <= rr*rr {
					o := img.PixOffset(x, y)
					copy(img.Pix[o:o+3], look.InkRGB[:])
				}
			}
		}
	}
	return img
}

// inkOr is the faint print's grey level, or def without faint print.
func (f *faintPrint) inkOr(def uint8) uint8 {
	if f == nil {
		return def
	}
	return f.Ink
}
