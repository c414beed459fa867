package ocr

import (
	"math"
	"slices"
	"time"
)

// The cascade: most of a page's cost is Tesseract at the full resolution,
// and most pages read as well at a lower one. A page is read first at the
// policy's FirstDPI (page.Policy.FirstPassDPI); the reading's own signals
// say whether it is to be trusted, and a page that asks is rendered and
// read again at its full DPI. Of the two readings the better is kept (see
// better). Pages whose text layer is to be considered skip the cascade:
// they are read once, at their full DPI, as before it.
//
// The thresholds below are calibrated on the evaluation corpus with `make
// eval-probe`: the corpus read once at 200 dpi and once at 300 (both with
// --no-cascade), each page's first-pass signals set against how much worse
// its first reading was; batch/eval's SuggestCascade picks the thresholds
// that read the fewest pages again while every text figure (the mean and
// overall CER and WER of the pages the figures count) stays no worse than
// with every page at 300, and `refbatch eval --cascade-probe` prints them.
// On the 82 pages of the text figures probed (2026-12-01): 25 read again;
// CER mean 0.0264 with the cascade, 0.0268 all at 300, 0.0276 all at 200;
// WER mean 0.0703, 0.0710 and 0.0733. Confidence and the words' height
// separate: at 200 dpi, print whose median word is 22 pixels high or less
// loses characters that 300 keeps, confidently. The other two ask for
// pages these already ask for, or for none, and sit in the middle of the
// range that asks the same pages.
const (
	// minFirstCharConf: a first reading whose mean confidence per
	// character is under this is read again.
	minFirstCharConf = 92
	// minFirstCredibleInk: a first reading whose credible characters
	// (of words of two letters or digits or more, confidence 60 or more)
	// are under this share of the print the coverage measurement counts
	// on the page is read again: print was left out or misread. The
	// measurement counts print by its ink, so a page read well has about
	// twice as many characters as it counts (1.6–2.8 on the corpus), a
	// page of junk 0.6–1.3.
	minFirstCredibleInk = 0.75
	// maxFirstUncovered: a first reading leaving more of the page's print
	// unread than this, after recovery, is read again.
	maxFirstUncovered = 0.01
	// minFirstWordHeight: a first reading whose median word is under this
	// many pixels high (at the first DPI) is of small print, which loses
	// strokes at the lower resolution, and is read again. Body text of
	// 10–12 pt is 22–28 pixels high at 200 dpi.
	minFirstWordHeight = 23
)

// The reasons a first reading asks for the full resolution, recorded in
// PageResult.CascadeReason.
const (
	AskCharConf    = "char_conf"
	AskCredibleInk = "credible_ink"
	AskUncovered   = "uncovered"
	AskWordHeight  = "word_height"
)

// signals measures r; printChars is the coverage measurement's count of
// print on the page, under 0 when not measured.
func (r recognition) signals(printChars float64) *Signals {
	var chars, credible int
	var sum float64
	var heights []int
	for _, w := range r.words {
		n := w.Chars()
		chars += n
		sum += w.Conf * float64(n)
		if AlnumCount(w.Text) >= 2 {
			heights = append(heights, w.Box[3]-w.Box[1])
			if w.Conf >= credibleConf {
				credible += n
			}
		}
	}
	s := &Signals{CredibleInk: -1}
	if chars > 0 {
		s.CharConf = math.Round(sum/float64(chars)*100) / 100
	}
	if printChars > 0 {
		s.CredibleInk = math.Round(float64(credible)/printChars*1000) / 1000
	}
	if len(heights) > 0 {
		slices.Sort(heights)
		s.WordHeight = heights[len(heights)/2]
	}
	return s
}

// asks returns why a first reading res should be read again at the full
// resolution, or "" when it is to be trusted. A blank page, or one read
// from its text layer, never asks.
func asks(res *PageResult) string {
	s := res.Signals
	switch {
	case res.Blank || res.TextSource != TextFromOCR || s == nil:
		return ""
	case s.CharConf < minFirstCharConf:
		return AskCharConf
	case s.CredibleInk >= 0 && s.CredibleInk < minFirstCredibleInk:
		return AskCredibleInk
	case res.UncoveredShare > maxFirstUncovered:
		return AskUncovered
	case s.WordHeight < minFirstWordHeight:
		return AskWordHeight
	}
	return ""
}

// better reports whether a first reading a is better than b, the full
// resolution's: it holds more than keepFirstMargin times the credible
// characters once the print each left unread is taken off (credible
// characters × (1 − uncovered share)). Credible characters are what the
// document's checks and its reader rely on; a reading that confidently
// reads less of the page, or misreads more of it into doubt, holds fewer.
// Otherwise the full resolution's reading is kept: it is what
// --no-cascade reads.
func better(a, b *PageResult) bool {
	return score(a) > keepFirstMargin*score(b)
}

// keepFirstMargin: on the evaluation corpus's probe, keeping the first
// reading whenever it scored higher (a margin of 1) kept it on 12 of the
// 35 pages read twice, 6 of them rightly (CER 0.011 to 0.026 lower) and 4
// wrongly (up to 0.086 higher): the errors cost more than twice what the
// right choices saved. A first reading must do clearly better.
const keepFirstMargin = 1.2

func score(p *PageResult) float64 {
	n := 0
	for _, w := range p.Words {
		if w.Credible() {
			n += w.Chars()
		}
	}
	return float64(n) * (1 - p.UncoveredShare)
}

// cascade reads page index, which renders at dpi, under the policy's
// cascade: first at the first-pass DPI, again at dpi when the first
// reading asks, keeping the better. start is when the page's work began.
// The times of both readings are counted in the result's.
func (e *engine) cascade(index, dpi int, start time.Time) (PageResult, Cause, error) {
	var layer *textLayer
	if !e.cfg.ForceOCR {
		// A page whose layer cannot be read is recognised like any other,
		// and so is one whose layer holds more text than a page can show.
		if s, err := e.doc.Text(index); err == nil && len(s) <= maxLayerBytes {
			if l, ok := parseLayer(s); ok {
				layer = &l
			}
		}
	}
	first := e.cfg.FirstPassDPI(dpi)
	if layer != nil || first == dpi {
		return e.readAt(index, dpi, layer, start)
	}
	res, cause, err := e.readAt(index, first, nil, start)
	if err != nil {
		return res, cause, err
	}
	res.FirstDPI = first
	why := asks(&res)
	if why == "" {
		return res, "", nil
	}
	full, cause, err := e.readAt(index, dpi, nil, time.Now())
	if err != nil {
		return full, cause, err
	}
	kept := full
	if better(&res, &full) {
		kept = res
	}
	kept.FirstDPI, kept.SecondPass, kept.CascadeReason = first, true, why
	kept.RenderTime = res.RenderTime + full.RenderTime
	kept.RecogniseTime = res.RecogniseTime + full.RecogniseTime
	kept.CoverageTime = res.CoverageTime + full.CoverageTime
	return kept, "", nil
}
