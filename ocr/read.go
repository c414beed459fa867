package ocr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/otiai10/gosseract/v2"
)

// The reading of a rendered page: the page steps, one recognition pass
// (or the text layer the layer rule trusts), and the accounting for the
// ink the reading left out.

// recognition is one Tesseract pass over an image.
type recognition struct {
	boxes []gosseract.BoundingBox // as Tesseract gave them, in reading order
	words []Word
	text  string
	mean  float64
	// confirmed are words read under the cover confidence that recovery
	// read again, credibly, as the same word at the same place: they
	// cover their ink (see credible.go) but are no more text.
	confirmed []Word
}

// credible counts the recognition's credible words (Word.Credible).
func (r recognition) credible() int {
	n := 0
	for _, w := range r.words {
		if w.Credible() {
			n++
		}
	}
	return n
}

// doubtful reports whether the recognition looks like a page read the
// wrong way round: words, but few of them credible.
func (r recognition) doubtful() bool {
	return len(r.words) > 0 && float64(r.credible()) < maxDoubtfulShare*float64(len(r.words))
}

// recognise runs one Tesseract pass over img, rendered at dpi.
func (e *engine) recognise(img *grayImage, dpi int) (recognition, error) {
	e.passes++
	if err := e.tess.SetImageFromBytes(img.bmp(dpi, nil)); err != nil {
		return recognition{}, fmt.Errorf("handing page to Tesseract: %w", err)
	}
	// Set as well as the BMP's own mark: without it Tesseract may guess
	// the resolution from the text size.
	if err := e.tess.SetVariable("user_defined_dpi", strconv.Itoa(dpi)); err != nil {
		return recognition{}, fmt.Errorf("setting Tesseract resolution: %w", err)
	}
	boxes, err := e.tess.GetBoundingBoxesVerbose()
	if err != nil {
		return recognition{}, fmt.Errorf("recognising: %w", err)
	}
	r := recognition{boxes: boxes}
	r.words, r.text, r.mean = assemble(boxes)
	return r, nil
}

// read prepares the rendered page in e.gray, whose histogram is hist, and
// fills res with its text: from the page's own text layer (nil when there
// is none to consider) when the layer rule trusts it, otherwise from
// Tesseract.
func (e *engine) read(res *PageResult, hist [256]int, layer *textLayer) error {
	renderW, renderH := e.gray.w, e.gray.h
	p, err := e.prepare(&e.gray, hist, res.DPI)
	if err != nil {
		return err
	}
	defer func() {
		res.Canvas = &Canvas{RenderWidth: renderW, RenderHeight: renderH, Matrix: p.canvas}
		res.Width, res.Height = p.img.w, p.img.h
		res.Rotation, res.SkewDegrees, res.Inverted = p.rotation, math.Round(p.skew*100)/100, p.inverted
		res.Despeckled = p.despeckled
	}()
	if p.blank {
		// Nothing to read; a text layer on a blank page is not the page's.
		res.Blank = true
		return nil
	}

	hasLayer := layer != nil
	if hasLayer {
		// First a reading of a sample of the page, which settles most
		// layers for about 30% of the cost of reading the page.
		if sample, sampled := p.img.sample(p.thresh, p.paper, sampleShare); sample != nil {
			q, err := e.recognise(sample, p.dpi)
			if err != nil {
				return err
			}
			conf, ok, decided := layer.trustedBySample(q, sampled)
			if ok {
				layer.result(res, conf)
				return nil
			}
			hasLayer = !decided
		}
	}
	r, err := e.recognise(p.img, p.dpi)
	if err != nil {
		return err
	}
	if hasLayer {
		// The sample could not decide; the reading of the whole page can.
		if conf, ok := layer.trusted(r); ok {
			layer.result(res, conf)
			return nil
		}
	}

	// The cheap test let the page through as upright, yet it reads badly:
	// ask Tesseract's orientation detection after all, and keep the better
	// reading.
	if !e.cfg.NoOrientation && !p.osdRun && r.doubtful() {
		before := *p
		turned, err := e.orient(p)
		if err != nil {
			return err
		}
		if turned {
			again, err := e.recognise(p.img, p.dpi)
			if err != nil {
				return err
			}
			if again.credible() > r.credible() {
				r = again
			} else {
				*p = before
			}
		}
	}
	printChars := -1.0 // not measured
	if !e.cfg.NoCoverage {
		start := time.Now()
		if r, printChars, err = e.account(res, p, r); err != nil {
			return err
		}
		res.CoverageTime = time.Since(start)
	}
	res.Words, res.Text, res.MeanConf = r.words, r.text, r.mean
	res.Signals = r.signals(printChars)
	return nil
}

// account measures how much of the page's text-like ink the reading r
// covers; reads a two-column section column by column when r read across
// it (see columnBands); reads again what r left unread when that is more
// than a trace (see recoverText); and records all three in res. It
// returns the reading to keep and the characters of print on the page.
func (e *engine) account(res *PageResult, p *prepared, r recognition) (_ recognition, printChars float64, err error) {
	// A bug here must not pass a page as accounted for, nor cost the
	// worker: the page fails, and its document goes to review.
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("measuring the page's coverage failed: %v", v)
		}
	}()
	cut := float64(e.cfg.CoverConfidence)
	c := measureInk(p.inkLook(&e.inks), p.thresh, credibleWords(r.words, cut))
	if bands := columnBands(wordBoxes(credibleWords(r.words, cut)), c.blobs); len(bands) > 0 {
		more, changed, reread, err := e.readColumns(p, r, bands)
		if err != nil {
			return r, 0, err
		}
		if changed {
			r, res.Columns, res.ColumnsReread = more, len(bands), reread
			c = measureInk(p.inkLook(&e.inks), p.thresh, credibleWords(r.words, cut))
		}
	}
	res.UncoveredFirst = math.Round(c.share()*10000) / 10000
	if c.share() >= minRecoverShare && !e.cfg.NoRecovery {
		more, counts, err := e.recoverText(p, r, c)
		if err != nil {
			return r, 0, err
		}
		res.Recovery = &counts
		if counts.Added > 0 || len(more.confirmed) > 0 {
			r, res.RecoveredWords = more, counts.Added
			c = measureInk(p.inkLook(&e.inks), p.thresh, append(credibleWords(r.words, cut), r.confirmed...))
		}
	}
	if r, res.HandwritingRegions, err = e.readHandwriting(p, r); err != nil {
		return r, 0, err
	}
	res.UncoveredShare = math.Round(c.share()*10000) / 10000
	for _, i := range c.uncovered {
		res.UncoveredRegions = append(res.UncoveredRegions, c.lines[i].box)
	}
	return r, c.textArea, nil
}

// assemble turns Tesseract's words, in reading order and numbered by block,
// paragraph and line, into Words, the page text and the mean confidence.
// Words are joined by spaces, lines by a newline, and paragraphs and blocks
// are separated by a blank line, as Tesseract's own text output does, so
// that one recognition pass yields both.
func assemble(boxes []gosseract.BoundingBox) ([]Word, string, float64) {
	words := make([]Word, 0, len(boxes))
	var sb strings.Builder
	var sum float64
	var prev gosseract.BoundingBox
	for _, b := range boxes {
		text := strings.TrimSpace(b.Word)
		if text == "" {
			continue
		}
		if len(words) > 0 {
			switch {
			case b.BlockNum != prev.BlockNum || b.ParNum != prev.ParNum:
				sb.WriteString("\n\n")
			case b.LineNum != prev.LineNum:
				sb.WriteByte('\n')
			default:
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(text)
		conf := max(b.Confidence, 0)
		sum += conf
		words = append(words, Word{
			Text: text,
			Conf: conf,
			Box:  [4]int{b.Box.Min.X, b.Box.Min.Y, b.Box.Max.X, b.Box.Max.Y},
		})
		prev = b
	}
	var mean float64
	if len(words) > 0 {
		mean = sum / float64(len(words))
	}
	return words, sb.String(), mean
}
