package main

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
)

// This file draws the pages of --degrade and --bad-all: every page gets a
// kind (how it was scanned and stored), a skew, and sometimes a quarter
// turn, a stamp over its text or a signature.

// Page kinds. Every kind also gets the light noise and specks of any scan.
const (
	kindBitonal     = "bitonal"      // 1-bit, /FlateDecode
	kindCCITT       = "ccitt"        // 1-bit, /CCITTFaxDecode Group 4
	kindGrey        = "grey"         // 8-bit grey, /FlateDecode
	kindLowContrast = "low_contrast" // 8-bit grey: grey paper, faded ink
	kindNoise       = "noise"        // 1-bit photocopy: dense speckle, sometimes a streak
	kindBlur        = "blur"         // 8-bit grey, out of focus, /DCTDecode at quality 60 to 80
	kindYellowed    = "yellowed"     // /DeviceRGB: aged, stained paper; /FlateDecode at 150 DPI, else /DCTDecode
	kindJPEG        = "jpeg"         // 8-bit grey /DCTDecode at quality 15 to 35

	// kindRaw is grey stored with no compression at all; only the
	// too_large input uses it.
	kindRaw = "raw"
)

// scanKinds are the kinds the deck deals to the pages of good documents.
var scanKinds = []string{kindBitonal, kindCCITT, kindGrey, kindLowContrast, kindNoise, kindBlur, kindYellowed, kindJPEG}

// turn is how a page is turned: Image is how far (clockwise, in degrees)
// the content is turned inside the stored image, Entry the page's /Rotate,
// which the renderer applies. The rendered page is turned by their sum.
type turn struct{ Image, Entry int }

// Shown is how far the rendered page is turned clockwise; 0 is upright.
func (t turn) Shown() int { return (t.Image + t.Entry) % 360 }

// turns are the turned cases: turned in the image only (the scanner fed
// the page sideways), turned in the image and put right by /Rotate (the
// scanner knew), and upright in the image but turned by a wrong /Rotate.
var turns = []turn{
	{90, 0}, {180, 0}, {270, 0},
	{90, 270}, {180, 180}, {270, 90},
	{0, 90}, {0, 180}, {0, 270},
}

// uprightPerTurned sets how often a page is upright: the turn deck holds
// each turned case once and this many upright pages per turned case, so
// one page in seven is turned.
const uprightPerTurned = 6

// Streams of the decks, far from documents' and extraStream's.
const (
	kindDeckStream = 1 << 40
	turnDeckStream = 2 << 40
)

// deck deals page kinds and turns to page slots in order: every cycle of
// slots holds each kind (and each turned case) the same number of times,
// shuffled by the seed, so that even a small corpus has them all.
type deck struct {
	seed  uint64
	kinds map[int][]int
	turns map[int][]int
}

func newDeck(seed uint64) *deck {
	return &deck{seed: seed, kinds: map[int][]int{}, turns: map[int][]int{}}
}

func (d *deck) kind(slot int) string {
	n := len(scanKinds)
	c := slot / n
	if d.kinds[c] == nil {
		d.kinds[c] = rng(d.seed, kindDeckStream+uint64(c)).Perm(n)
	}
	return scanKinds[d.kinds[c][slot%n]]
}

func (d *deck) turn(slot int) turn {
	n := len(turns) * (1 + uprightPerTurned)
	c := slot / n
	if d.turns[c] == nil {
		d.turns[c] = rng(d.seed, turnDeckStream+uint64(c)).Perm(n)
	}
	if i := d.turns[c][slot%n]; i < len(turns) {
		return turns[i]
	}
	return turn{}
}

// scanPlan is how a --degrade or --bad-all document is to be drawn. A
// document with a plan goes through renderScan; one without is drawn as
// the built-in sample's are.
type scanPlan struct {
	Kinds []string // one per page of the file, blank pages included
	Turns []turn   // one per page; missing means upright
	Blank int      // index of an inserted blank page, or -1
	// AllBlank draws no content at all: every page is blank.
	AllBlank bool
	// Upright forbids skew, turns and stamps, so that a text layer lies
	// on the drawn lines.
	Upright bool
	// TextLayer is "visible" for a born-digital page (text drawn with the
	// embedded font, no image), "invisible" for a scan with an OCR text
	// layer over it, or empty.
	TextLayer string
	// DPI, when set, is every page's DPI, whatever --dpi-set says.
	DPI int
	// KeepImages keeps each page's final image in rendered.Images.
	KeepImages bool
	// BodyPt, when set, is the body type size, whatever the document's
	// stream draws.
	BodyPt float64
	// Hard, for a --hard document, is how each page is degraded instead
	// of by its kind (see hard.go).
	Hard []hardPage
}

// scanMeta is one page's degradation, as the ground truth records it.
type scanMeta struct {
	Kind        string `json:"kind"`
	DPI         int    `json:"dpi"`
	Colour      string `json:"colour"`   // bitonal, grey or rgb
	Encoding    string `json:"encoding"` // flate, dct, ccitt_g4, raw or none
	JPEGQuality int    `json:"jpeg_quality,omitempty"`
	// Rotation is how far (clockwise, degrees) the content is turned
	// inside the stored image; RotateEntry is the page's /Rotate;
	// ShownRotation is how far the page is turned once rendered.
	Rotation      int    `json:"rotation"`
	RotateEntry   int    `json:"rotate_entry"`
	ShownRotation int    `json:"shown_rotation"`
	Blank         bool   `json:"blank,omitempty"`
	Table         bool   `json:"table,omitempty"`
	Stamp         string `json:"stamp,omitempty"` // the stamp's words; not part of the page's text
	Signature     bool   `json:"signature,omitempty"`
	TextLayer     string `json:"text_layer,omitempty"`
	// Degradation is how a --hard page was degraded.
	Degradation *hardPage `json:"degradation,omitempty"`
	// Coverage is how a --coverage page was drawn (see coverage.go).
	Coverage *coverMeta `json:"coverage,omitempty"`
}

// docFaces makes and keeps the faces of one document per DPI.
type docFaces struct {
	fonts fontSet
	ds    docStyle
	byDPI map[int]faces
	stamp map[int]font.Face
}

func (d *docFaces) at(dpi int) (faces, font.Face, error) {
	if fc, ok := d.byDPI[dpi]; ok {
		return fc, d.stamp[dpi], nil
	}
	ds := d.ds
	ds.DPI = dpi
	fc, err := newFaces(d.fonts, ds)
	if err != nil {
		return faces{}, nil, err
	}
	sf, err := opentype.NewFace(d.fonts.bold, &opentype.FaceOptions{Size: 15, DPI: float64(dpi), Hinting: font.HintingNone})
	if err != nil {
		fc.Close()
		return faces{}, nil, fmt.Errorf("making the stamp face: %w", err)
	}
	d.byDPI[dpi], d.stamp[dpi] = fc, sf
	return fc, sf, nil
}

func (d *docFaces) Close() {
	for dpi, fc := range d.byDPI {
		fc.Close()
		d.stamp[dpi].Close()
	}
}

// renderScan draws the document s describes with its scan plan.
func renderScan(seed uint64, s spec, dpis []int, fonts fontSet) (rendered, error) {
	p := s.Scan
	r := rng(seed, s.Stream)
	f := newForm(r, s.ParticipantID, s.ReferralDate, s.Consent, s.Pages)
	ds := newDocStyle(r, dpis)
	if p.DPI != 0 {
		ds.DPI = p.DPI
	}
	if p.BodyPt != 0 {
		ds.BodyPt = p.BodyPt
	}
	fcs := &docFaces{fonts: fonts, ds: ds, byDPI: map[int]faces{}, stamp: map[int]font.Face{}}
	defer fcs.Close()
	t := newTruth(s, ds)
	// The page list: content pages in order, with the blank page (if any)
	// inserted; a document of blank pages has no content at all.
	content, lastContent, err := contentPages(p, len(f.Pages))
	if err != nil {
		return rendered{}, err
	}

	var out rendered
	for i, ci := range content {
		dpi := ds.DPI
		if p.DPI == 0 && r.IntN(10) == 0 {
			dpi = pick(r, dpis) // a page rescanned on another machine
		}
		fc, stampFace, err := fcs.at(dpi)
		if err != nil {
			return rendered{}, err
		}
		pds := ds
		pds.DPI = dpi
		var tu turn
		if i < len(p.Turns) && !p.Upright {
			tu = p.Turns[i]
		}
		var hard *hardPage
		var st scanStyle
		if p.Hard != nil {
			hard = &p.Hard[i]
			st = hard.style(dpi)
		} else {
			st = newScanStyle(r, p.Kinds[i], dpi, p.Upright)
		}

		var blocks []block // none for a blank page
		if ci >= 0 {
			blocks = f.Pages[ci]
		}
		ink, pl, err := pageInk(blocks, ci < 0, pds, fc)
		if err != nil {
			return rendered{}, fmt.Errorf("laying out page %d: %w", i+1, err)
		}
		tp := truthPage{Text: pl.Text, SkewDegrees: st.Skew, Bitonal: st.bitonal()}
		meta := scanMeta{Rotation: tu.Image, RotateEntry: tu.Entry, ShownRotation: tu.Shown(), Blank: ci < 0, TextLayer: p.TextLayer}
		meta.Table = slices.ContainsFunc(blocks, func(b block) bool { return b.Kind == blockTable })

		var sp stamp
		var plane *image.Gray
		if ci >= 0 {
			sp, plane = addMarks(r, ink, pl, ci == lastContent, p.Upright, stampFace, s.ReferralDate, dpi, &meta)
		}

		page := pageSpec{Rotate: tu.Entry}
		if p.TextLayer != "visible" {
			img, pi, err := scanImage(r, ink, plane, sp, hard, st, tu, dpi, &meta)
			if err != nil {
				return rendered{}, fmt.Errorf("storing page %d: %w", i+1, err)
			}
			page.Image = &pi
			page.W, page.H = pt(pi.W, dpi), pt(pi.H, dpi)
			if p.KeepImages {
				out.Images = append(out.Images, img)
			}
		} else {
			b := ink.Bounds()
			page.W, page.H = pt(b.Dx(), dpi), pt(b.Dy(), dpi)
			meta.Kind, meta.DPI, meta.Colour, meta.Encoding = "text", dpi, "none", "none"
			tp.SkewDegrees, tp.Bitonal = 0, false
		}
		if p.TextLayer != "" {
			// Runs in points from the lower left corner; the page is
			// upright, so image rows map straight onto it.
			page.Runs = pdfRuns(pl.Runs, ink.Bounds().Dy(), dpi)
			page.Invisible = p.TextLayer == "invisible"
		}
		tp.Scan = &meta
		t.Pages = append(t.Pages, tp)
		out.Pages = append(out.Pages, page)
	}
	out.Truth = t
	return out, nil
}

// contentPages is the scan plan's page list: for each page, its index into
// the form's pages, or -1 for a blank one; and the index of the last
// content page.
func contentPages(p *scanPlan, formPages int) ([]int, int, error) {
	content := make([]int, 0, len(p.Kinds))
	next := 0
	for i := range p.Kinds {
		if p.AllBlank || i == p.Blank {
			content = append(content, -1)
			continue
		}
		content = append(content, next)
		next++
	}
	if !p.AllBlank && next != formPages {
		return nil, 0, fmt.Errorf("scan plan has %d content pages, the form %d", next, formPages)
	}
	return content, next - 1, nil
}

// addMarks draws what a person added to a content page: a signature under
// the last page's text, when there is room, on the ink; a stamp on a plane
// of its own, which it returns (nil for none). An upright document gets
// neither, but draws the same random numbers.
func addMarks(r *rand.Rand, ink *image.Gray, pl pageLayout, last, upright bool, stampFace font.Face, date string, dpi int, meta *scanMeta) (stamp, *image.Gray) {
	left, right := int(margin*float64(dpi)), ink.Bounds().Dx()-int(margin*float64(dpi))
	if last && r.IntN(2) == 0 && !upright {
		h := dpi / 2
		if top := pl.End + dpi/4; top+h+dpi/8 < pl.Foot {
			drawSignature(r, ink, left, top, min(right-left, dpi*5/2), h, dpi)
			meta.Signature = true
		}
	}
	if upright || r.IntN(5) != 0 {
		return stamp{}, nil
	}
	sp := newStamp(r, date, left, right, int(margin*float64(dpi))+dpi, max(int(margin*float64(dpi))+dpi+1, pl.End))
	plane := image.NewGray(ink.Bounds())
	fill(plane, 255)
	drawStamp(r, plane, stampFace, sp, dpi)
	meta.Stamp = strings.Join(sp.Lines, " ")
	return sp, plane
}

// pdfRuns are a page's text runs in points from its lower left corner; the
// page is upright, so image rows map straight onto it.
func pdfRuns(runs []textRun, hpx, dpi int) []pdfRun {
	var out []pdfRun
	for _, run := range runs {
		out = append(out, pdfRun{
			X:    float64(run.X) * 72 / float64(dpi),
			Y:    float64(hpx-run.Baseline) * 72 / float64(dpi),
			Size: run.Pt,
			Text: run.Text,
		})
	}
	return out
}

// pageInk lays out a page's blocks, in black on white at ds's resolution,
// or a blank page.
func pageInk(blocks []block, blank bool, ds docStyle, fc faces) (*image.Gray, pageLayout, error) {
	if !blank {
		return layoutPage(blocks, ds, fc)
	}
	w, h := int(math.Round(ds.Paper.W*float64(ds.DPI))), int(math.Round(ds.Paper.H*float64(ds.DPI)))
	ink := image.NewGray(image.Rect(0, 0, w, h))
	fill(ink, 255)
	return ink, pageLayout{}, nil
}

// scanImage scans a page's ink (and its stamp's plane, if any) as hard
// describes, else as st does, and encodes the image, recording how in meta.
func scanImage(r *rand.Rand, ink, plane *image.Gray, sp stamp, hard *hardPage, st scanStyle, tu turn, dpi int, meta *scanMeta) (image.Image, pdfImage, error) {
	var img image.Image
	if hard != nil {
		img = hardScan(r, ink, plane, sp, plane != nil, *hard, dpi)
		meta.Degradation = hard
	} else {
		img = scanPage(r, ink, plane, sp, plane != nil, st, tu)
	}
	pi, em, err := encodeScan(img, st)
	if err != nil {
		return nil, pdfImage{}, err
	}
	meta.Kind, meta.DPI, meta.Colour, meta.Encoding, meta.JPEGQuality = em.Kind, em.DPI, em.Colour, em.Encoding, em.JPEGQuality
	return img, pi, nil
}
