package main

import (
	"fmt"
	"image"
	"math/rand/v2"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file draws the documents of --hard: pages degraded far past the
// --degrade deck, so that OCR reads them badly but not always hopelessly
// and an evaluation has documents in every confidence band, not only in
// the high one. Each hard document is one row of hardDocs, set by hand and
// tuned against refbatch (Tesseract 5.3, 300 DPI) for a spread of mean
// word confidence from about 40 to 80 and of character error rate from
// about 7% to 50%. --hard N deals the rows in order and starts again past
// the end, each further document with new content.

// Hard page kinds, as the truth records them.
const (
	hardNoise     = "hard_noise"     // 1-bit photocopy: clumps of toner, holes in the ink, drum streaks
	hardContrast  = "hard_contrast"  // grey: ink barely darker than grey paper, sensor grain, JPEG
	hardBlur      = "hard_blur"      // grey: far out of focus, JPEG
	hardSmall     = "hard_small"     // 7 to 8 pt type at 150 DPI
	hardJPEG      = "hard_jpeg"      // grey at JPEG quality 5 or less
	hardPhotocopy = "hard_photocopy" // 1-bit copy of a copy: blurred, then cut at a low threshold, so strokes thin and break
)

// varHard marks the truth of a --hard document.
const varHard = "hard"

// hardStream is the random stream of the hard documents' identities; the
// i-th document's content is drawn from hardStream+1+i. Both are far from
// every other stream, so --hard changes nothing that was there without
// it, and a hard document's pages do not depend on how many rows come
// before it (only its source_id does).
const hardStream = 3 << 40

// hardPage is how one page of a hard document is degraded. Every value is
// set in hardDocs rather than drawn, so that a row of the table can be
// made milder or harsher on purpose; the truth records it under
// scan.degradation.
type hardPage struct {
	Kind       string  `json:"-"`
	Skew       float64 `json:"-"`                     // degrees; the truth has it as skew_degrees
	Paper      uint8   `json:"paper"`                 // grey level of the paper, before any threshold
	Ink        uint8   `json:"ink"`                   // grey level of full ink
	BlurRadius int     `json:"blur_radius,omitempty"` // box blur radius in scan pixels
	BlurPasses int     `json:"blur_passes,omitempty"`
	Grain      int     `json:"grain,omitempty"`     // every pixel moves by up to twice this, either way
	Clumps     int     `json:"clumps,omitempty"`    // specks of toner up to 5 pixels across at 150 DPI, more at higher DPI
	Holes      float64 `json:"holes,omitempty"`     // share of ink pixels the toner missed
	Streaks    int     `json:"streaks,omitempty"`   // broken vertical drum scratches
	Threshold  uint8   `json:"threshold,omitempty"` // set for 1-bit pages: grey level at or above which a pixel is white
	Quality    int     `json:"-"`                   // JPEG quality, 0 for Flate; the truth has it as jpeg_quality
}

// oneBit reports whether the page is cut to 1 bit and stored with Flate.
func (h hardPage) oneBit() bool { return h.Threshold > 0 }

// hardDoc is one hard document: its pages, the DPI and type size they were
// drawn at, and the outcome expected.csv gives it. The outcome is a field
// of its own because it is a judgement: a person must check documents read
// this badly (review low_confidence), but the mildest may read well enough
// to be done once the reading improves.
type hardDoc struct {
	DPI    int
	BodyPt float64 // 0 keeps the size drawn for the document (10 to 12 pt)
	Pages  []hardPage
	State  outcome.State
	Reason outcome.Reason
	Notes  string // the --bad-all manifest's notes column
}

// hardDocs are the hard documents. A page's fields are its recipe; each
// document's content (and so its stamps, tables and font) comes from its
// position in the table, so moving a row changes what it reads like.
// A row expects review low_confidence unless its reading is good enough
// to publish (under 10% CER, the review line the confidence bands are
// calibrated to): the first two read 6.6–8% and are done. The blurred
// photo reads 10% with its confidence just under the low threshold and
// its participant ID lost, so either review reason is right for it. The
// figures refbatch measured on each are in testdata/eval/README.md.
var hardDocs = []hardDoc{
	{DPI: 200, Pages: []hardPage{
		{Kind: hardNoise, Skew: 0.6, Paper: 255, Ink: 0, Clumps: 1000, Holes: 0.06, Streaks: 1, Threshold: 140},
		{Kind: hardNoise, Skew: -0.4, Paper: 255, Ink: 0, Clumps: 1000, Holes: 0.06, Streaks: 1, Threshold: 140},
	}, State: outcome.Done, Reason: "", Notes: "Photocopy, toner specks"},
	{DPI: 150, Pages: []hardPage{
		{Kind: hardContrast, Skew: 1.1, Paper: 170, Ink: 130, Grain: 8, BlurRadius: 1, BlurPasses: 1, Quality: 25},
		{Kind: hardContrast, Skew: -0.5, Paper: 170, Ink: 130, Grain: 8, BlurRadius: 1, BlurPasses: 1, Quality: 25},
	}, State: outcome.Done, Reason: "", Notes: "Faded, on grey paper"},
	{DPI: 150, Pages: []hardPage{
		{Kind: hardJPEG, Skew: 0.7, Paper: 215, Ink: 70, Quality: 2},
	}, State: outcome.Review, Reason: outcome.LowConfidence, Notes: "Emailed, heavily compressed"},
	{DPI: 150, Pages: []hardPage{
		{Kind: hardNoise, Skew: 0.9, Paper: 255, Ink: 0, Clumps: 300, Holes: 0.25, Streaks: 1, Threshold: 140},
		{Kind: hardNoise, Skew: -0.7, Paper: 255, Ink: 0, Clumps: 300, Holes: 0.25, Streaks: 1, Threshold: 140},
	}, State: outcome.Review, Reason: outcome.LowConfidence, Notes: "Fax of a photocopy"},
	{DPI: 150, BodyPt: 7, Pages: []hardPage{
		{Kind: hardSmall, Skew: -0.3, Paper: 255, Ink: 0, BlurRadius: 1, BlurPasses: 1, Holes: 0.05, Threshold: 150},
	}, State: outcome.Review, Reason: outcome.LowConfidence, Notes: "Printed small to fit one page"},
	{DPI: 150, BodyPt: 8, Pages: []hardPage{
		{Kind: hardJPEG, Skew: 0.7, Paper: 225, Ink: 60, Quality: 4},
	}, State: outcome.Review, Reason: outcome.LowConfidence, Notes: "Small print, saved as a tiny JPEG"},
	{DPI: 150, Pages: []hardPage{
		{Kind: hardBlur, Skew: 0.5, Paper: 235, Ink: 40, BlurRadius: 2, BlurPasses: 3, Quality: 45},
		{Kind: hardBlur, Skew: 0.9, Paper: 235, Ink: 40, BlurRadius: 2, BlurPasses: 3, Quality: 45},
	}, State: "review|review|review", Reason: "low_confidence|id_not_found|date_not_found", Notes: "Phone photo, out of focus"},
	{DPI: 150, Pages: []hardPage{
		{Kind: hardPhotocopy, Skew: -0.6, Paper: 255, Ink: 0, BlurRadius: 1, BlurPasses: 2, Threshold: 100},
	}, State: outcome.Review, Reason: outcome.LowConfidence, Notes: "Copy of a copy, very light"},
}

// hardPlan plans n hard documents, to follow every other row, numbered on
// from last, the highest source number so far. Their identities are drawn
// from hardStream and kept apart from the used ones.
func hardPlan(seed uint64, n, last int, used map[string]bool) []entry {
	r := rng(seed, hardStream)
	var es []entry
	for i := range n {
		h := hardDocs[i%len(hardDocs)]
		kinds := make([]string, len(h.Pages))
		for j, p := range h.Pages {
			kinds[j] = p.Kind
		}
		s := spec{
			SourceID:      fmt.Sprintf("R-%04d", last+1+i),
			ParticipantID: participantID(r, used),
			ReferralDate:  referralDate(r),
			Consent:       true,
			Pages:         len(h.Pages),
			Stream:        hardStream + 1 + uint64(i),
			Scan:          &scanPlan{Kinds: kinds, Blank: -1, DPI: h.DPI, BodyPt: h.BodyPt, Hard: h.Pages},
		}
		es = append(es, entry{Spec: s, Render: true, Variant: varHard, State: string(h.State), Reason: string(h.Reason), Notes: h.Notes, Hard: true})
	}
	return es
}

// isHard reports whether kind is one of --hard's page kinds.
func isHard(kind string) bool { return strings.HasPrefix(kind, "hard_") }

// style is the scanStyle that stores and records a hard page.
func (h hardPage) style(dpi int) scanStyle {
	return scanStyle{Kind: h.Kind, DPI: dpi, Skew: h.Skew, Threshold: h.Threshold, Paper: h.Paper, Ink: h.Ink, Quality: h.Quality, OneBit: h.oneBit()}
}

// hardScan turns a clean page (ink: 0 black, 255 white) and a stamp plane
// into the stored image of a hard page: skew, tone, stamp, blur, grain,
// toner clumps, holes in the ink, streaks, and the threshold of 1-bit
// pages, in the order a copier and a scanner would make them.
func hardScan(r *rand.Rand, ink, stampPlane *image.Gray, st stamp, hasStamp bool, h hardPage, dpi int) *image.Gray {
	if h.Skew != 0 {
		ink, stampPlane = skewPlanes(ink, stampPlane, hasStamp, h.Skew)
	}
	var lut [256]uint8
	for v := range lut {
		lut[v] = uint8(int(h.Ink) + (int(h.Paper)-int(h.Ink))*v/255)
	}
	out := ink
	for i, v := range out.Pix {
		out.Pix[i] = lut[v]
	}
	if hasStamp {
		// The stamp is as faded as the rest of the page.
		tone := int(h.Ink) + (int(h.Paper)-int(h.Ink))*int(st.Tone)/255
		for i, sv := range stampPlane.Pix {
			if sv == 255 {
				continue
			}
			cov := 255 - int(sv)
			if v := int(out.Pix[i]); tone < v {
				out.Pix[i] = uint8(v - (v-tone)*cov/255)
			}
		}
	}
	if h.Holes > 0 {
		// Before the blur, so that a hole is soft-edged like missing toner.
		mid := (int(h.Paper) + int(h.Ink)) / 2
		for i, v := range out.Pix {
			if int(v) < mid && r.Float64() < h.Holes {
				out.Pix[i] = h.Paper
			}
		}
	}
	for range h.BlurPasses {
		boxBlur(out, h.BlurRadius)
	}
	b := out.Bounds()
	w, hgt := b.Dx(), b.Dy()
	if h.Grain > 0 {
		n := 2*h.Grain + 1
		for i, v := range out.Pix {
			d := r.IntN(n) + r.IntN(n) - 2*h.Grain
			out.Pix[i] = uint8(max(0, min(255, int(v)+d)))
		}
	}
	scale := max(1, dpi/150)
	for range h.Clumps {
		disc(out, r.IntN(w), r.IntN(hgt), scale*r.IntN(3), h.Ink+uint8(r.IntN(30)))
	}
	for range h.Streaks {
		x := r.IntN(w)
		width := scale * (1 + r.IntN(3))
		for y := range hgt {
			if r.IntN(4) == 0 {
				continue // the scratch is broken
			}
			for xx := x; xx < min(w, x+width); xx++ {
				out.Pix[y*out.Stride+xx] = h.Ink + uint8(r.IntN(60))
			}
		}
	}
	if h.oneBit() {
		threshold(out, h.Threshold)
	}
	return out
}
