package eval

import (
	"fmt"
	"io"
	"math"
)

// The cascade's figures: a page is read first at a lower resolution and
// again at the full one only when its first reading asks (see the ocr
// package). An artifact page records the resolution of each reading and
// the signals the decision was taken on; eval counts the pages read twice,
// and with a probe (the same corpus read once at the first resolution,
// with --no-cascade) calibrates the thresholds.

// PageRead is what an artifact page says of how it was read, read through
// its JSON: the resolution of the reading kept, that of its first reading
// and whether it was read again, and the kept reading's signals. Fields an
// artifact lacks stay zero (nil Signals).
type PageRead struct {
	DPI            int          `json:"dpi"`
	FirstDPI       int          `json:"first_dpi,omitempty"`
	SecondPass     bool         `json:"second_pass,omitempty"`
	CascadeReason  string       `json:"cascade_reason,omitempty"`
	Blank          bool         `json:"blank,omitempty"`
	TextSource     string       `json:"text_source,omitempty"`
	UncoveredShare float64      `json:"uncovered_share"`
	Signals        *PageSignals `json:"signals,omitempty"`
	RenderNS       int64        `json:"render_ns"`
	RecogniseNS    int64        `json:"recognise_ns"`
}

// PageSignals are a reading's own signals (ocr.Signals).
type PageSignals struct {
	CharConf    float64 `json:"char_conf"`
	CredibleInk float64 `json:"credible_ink"`
	WordHeight  int     `json:"word_height"`
}

// Cascade counts, over the scored documents' pages, how they were read.
type Cascade struct {
	Pages      int            `json:"pages"`      // pages of read documents
	FirstRead  int            `json:"first_read"` // read first under their full resolution
	ReadTwice  int            `json:"read_twice"` // of them, read again
	KeptFirst  int            `json:"kept_first"` // of those, whose first reading was kept
	Reasons    map[string]int `json:"reasons"`    // why pages were read again
	EngineNS   int64          `json:"engine_ns"`  // render and recognition time of every page
	TwiceNS    int64          `json:"twice_ns"`   // of it, the pages read twice
	TwiceCER   float64        `json:"twice_cer"`  // mean CER of the pages read twice
	OnceCER    float64        `json:"once_cer"`   // mean CER of the pages read once at the first resolution
	onceCERSum float64
}

// scoreCascade counts the pages' readings; nil when no page records a
// first reading.
func scoreCascade(docs []DocScore) *Cascade {
	c := &Cascade{Reasons: map[string]int{}}
	for _, d := range docs {
		for _, p := range d.Pages {
			r := p.Read
			if r == nil {
				continue
			}
			c.Pages++
			c.EngineNS += r.RenderNS + r.RecogniseNS
			if r.FirstDPI == 0 {
				continue
			}
			c.FirstRead++
			if !r.SecondPass {
				c.onceCERSum += p.CER.Rate
				continue
			}
			c.ReadTwice++
			c.TwiceNS += r.RenderNS + r.RecogniseNS
			c.TwiceCER += p.CER.Rate
			c.Reasons[r.CascadeReason]++
			if r.DPI == r.FirstDPI {
				c.KeptFirst++
			}
		}
	}
	if c.FirstRead == 0 {
		return nil
	}
	if c.ReadTwice > 0 {
		c.TwiceCER /= float64(c.ReadTwice)
	}
	if n := c.FirstRead - c.ReadTwice; n > 0 {
		c.OnceCER = c.onceCERSum / float64(n)
	}
	return c
}

// NeedMargin is how much worse, in CER, a page's reading at the first
// resolution must be than at the full one for the page to need the full
// resolution: under it, the two differ by a character or two in a few
// hundred, which is Tesseract's noise between two renders.
const NeedMargin = 0.005

// CascadeThresholds are the first reading's thresholds the probe
// calibrates (the ocr package's minFirstCharConf, minFirstCredibleInk,
// maxFirstUncovered and minFirstWordHeight), with what they give on the
// probed pages: how many of them are read again (Asked), how many needed
// the full resolution (Needed) and how many of those are not read again
// (Missed), and the text figures over the probed pages with no cascade
// (every page at the full resolution: Full), with every page at the first
// resolution (First) and with the cascade under these thresholds (a page
// read again scored at the full resolution: Cascade).
type CascadeThresholds struct {
	MinCharConf    float64 `json:"min_char_conf"`
	MinCredibleInk float64 `json:"min_credible_ink"`
	MaxUncovered   float64 `json:"max_uncovered"`
	MinWordHeight  int     `json:"min_word_height"`
	Pages          int     `json:"pages"`
	Asked          int     `json:"asked"`
	Needed         int     `json:"needed"`
	Missed         int     `json:"missed"`
	Full           Figures `json:"full"`
	First          Figures `json:"first"`
	Cascade        Figures `json:"cascade"`
	// MustAsk counts the pages of documents whose participant ID or
	// referral date only the full resolution finds: every threshold
	// kept reads them again.
	MustAsk int `json:"must_ask"`
}

// Figures are the text figures of a set of pages, as Text counts them:
// the mean of the pages' CER and WER, and the overall rates (the edits
// over the reference's characters or words).
type Figures struct {
	MeanCER    float64 `json:"mean_cer"`
	CEROverall float64 `json:"cer_overall"`
	MeanWER    float64 `json:"mean_wer"`
	WEROverall float64 `json:"wer_overall"`
}

// noWorse reports whether f is no worse than g in any figure.
func (f Figures) noWorse(g Figures) bool {
	const eps = 1e-12
	return f.MeanCER <= g.MeanCER+eps && f.CEROverall <= g.CEROverall+eps && f.MeanWER <= g.MeanWER+eps && f.WEROverall <= g.WEROverall+eps
}

// probePage is one page read at both resolutions.
type probePage struct {
	first, full PageScore
	sig         PageSignals
	uncovered   float64
	mustAsk     bool // its document's ID or date is found at the full resolution only
}

// asks reports whether the first reading p asks for the full resolution
// under t, as the ocr package decides it.
func (t CascadeThresholds) asks(p probePage) bool {
	return p.sig.CharConf < t.MinCharConf ||
		(p.sig.CredibleInk >= 0 && p.sig.CredibleInk < t.MinCredibleInk) ||
		p.uncovered > t.MaxUncovered ||
		p.sig.WordHeight < t.MinWordHeight
}

// figures adds up the pages' text figures, each page's reading the first
// resolution's when first says so, else the full one's.
func figures(pages []probePage, first func(probePage) bool) Figures {
	var f Figures
	kept := make([]PageScore, len(pages))
	for i, p := range pages {
		kept[i] = p.full
		if first(p) {
			kept[i] = p.first
		}
		f.MeanCER += kept[i].CER.Rate
		f.MeanWER += kept[i].WER.Rate
	}
	if n := float64(len(pages)); n > 0 {
		f.MeanCER, f.MeanWER = f.MeanCER/n, f.MeanWER/n
	}
	f.CEROverall = sumRates(kept, func(p PageScore) ErrorRate { return p.CER }).Rate
	f.WEROverall = sumRates(kept, func(p PageScore) ErrorRate { return p.WER }).Rate
	return f
}

// SuggestCascade calibrates the first reading's thresholds from a probe:
// full, the corpus's documents read once at the full resolution, and
// first, the same documents read once at the first resolution (both with
// --no-cascade), whose pages carry the signals. Pages are paired by
// source ID and page number. It calibrates on the pages the text figures
// count: those of documents neither doubted nor scored for coverage, read
// by OCR (not from a text layer), not blank, with signals.
//
// Every combination of thresholds on a grid (confidence per character 70
// to 96, credible share of the ink 0 to 1.5 by 0.05, uncovered share 0.01
// to 0.2 by 0.01, median word height 8 to 30 pixels) is scored, and the
// one kept is the one that reads the fewest pages again among those under
// which the cascade's text figures are no worse than no cascade's, every
// one of them (the mean CER and WER, and the overall CER and WER), that
// read again every page of a document whose participant ID or referral
// date only the full resolution finds, and that miss no page whose first
// reading is worse by more than four NeedMargins; of equals, the lowest
// mean CER. Each threshold is then moved to the middle of the range of
// its values that ask the same pages (see centre), so that it sits in the
// gap between the pages it separates rather than on one of them. ok is
// false when fewer than two pages pair.
func SuggestCascade(full, first []DocScore) (t CascadeThresholds, ok bool) {
	firstByID := map[string]DocScore{}
	for _, d := range first {
		firstByID[d.SourceID] = d
	}
	var pages []probePage
	lost := func(full, first *bool) bool { return full != nil && *full && (first == nil || !*first) }
	for _, d := range full {
		f, found := firstByID[d.SourceID]
		if !found || !d.Read || !f.Read || d.Doubted || d.Coverage {
			continue
		}
		must := lost(d.IDFound, f.IDFound) || lost(d.DateFound, f.DateFound)
		for i, p := range d.Pages {
			if i >= len(f.Pages) {
				break
			}
			r := f.Pages[i].Read
			if r == nil || r.Signals == nil || r.Blank || (r.TextSource != "" && r.TextSource != "ocr") {
				continue
			}
			pages = append(pages, probePage{first: f.Pages[i], full: p, sig: *r.Signals, uncovered: r.UncoveredShare, mustAsk: must})
		}
	}
	if len(pages) < 2 {
		return t, false
	}
	for _, p := range pages {
		if p.first.CER.Rate-p.full.CER.Rate > NeedMargin {
			t.Needed++
		}
		if p.mustAsk {
			t.MustAsk++
		}
	}
	t.Pages = len(pages)
	t.Full = figures(pages, func(probePage) bool { return false })
	t.First = figures(pages, func(probePage) bool { return true })

	best := CascadeThresholds{}
	found := false
	for conf := 70.0; conf <= 96; conf++ {
		for ink := 0.0; ink <= 1.5001; ink += 0.05 {
			for unc := 0.01; unc <= 0.2001; unc += 0.01 {
				for h := 8; h <= 30; h++ {
					c := CascadeThresholds{MinCharConf: conf, MinCredibleInk: math.Round(ink*100) / 100, MaxUncovered: math.Round(unc*100) / 100, MinWordHeight: h}
					asked, bad := 0, false
					for _, p := range pages {
						if c.asks(p) {
							asked++
							continue
						}
						if p.mustAsk || p.first.CER.Rate-p.full.CER.Rate > 4*NeedMargin {
							bad = true
							break
						}
					}
					if bad || (found && asked > best.Asked) {
						continue
					}
					fig := figures(pages, func(p probePage) bool { return !c.asks(p) })
					if !fig.noWorse(t.Full) {
						continue
					}
					if !found || asked < best.Asked || fig.MeanCER < best.Cascade.MeanCER-1e-12 {
						c.Asked, c.Cascade = asked, fig
						found, best = true, c
					}
				}
			}
		}
	}
	if !found {
		// No combination reads as well as no cascade: read every page
		// again.
		best = CascadeThresholds{MinCharConf: 101, Asked: len(pages), Cascade: t.Full}
	} else {
		best = centre(best, pages)
	}
	for _, p := range pages {
		if !best.asks(p) && p.first.CER.Rate-p.full.CER.Rate > NeedMargin {
			best.Missed++
		}
	}
	best.Pages, best.Needed, best.MustAsk, best.Full, best.First = t.Pages, t.Needed, t.MustAsk, t.Full, t.First
	return best, true
}

// centre moves each of t's thresholds, the others held, to the middle of
// the grid's values that ask exactly the pages t asks.
func centre(t CascadeThresholds, pages []probePage) CascadeThresholds {
	same := func(c CascadeThresholds) bool {
		for _, p := range pages {
			if c.asks(p) != t.asks(p) {
				return false
			}
		}
		return true
	}
	// mid returns the middle of the values from lo to hi by step that,
	// set into t by set, ask the same pages.
	mid := func(lo, hi, step float64, set func(*CascadeThresholds, float64)) float64 {
		var first, last float64
		seen := false
		for v := lo; v <= hi+step/2; v += step {
			c := t
			set(&c, v)
			if same(c) {
				if !seen {
					first = v
				}
				last, seen = v, true
			}
		}
		return math.Round((first+last)/2/step) * step
	}
	c := t
	c.MinCharConf = mid(70, 96, 1, func(c *CascadeThresholds, v float64) { c.MinCharConf = v })
	c.MinCredibleInk = math.Round(mid(0, 1.5, 0.05, func(c *CascadeThresholds, v float64) { c.MinCredibleInk = math.Round(v*100) / 100 })*100) / 100
	c.MaxUncovered = math.Round(mid(0.01, 0.2, 0.01, func(c *CascadeThresholds, v float64) { c.MaxUncovered = math.Round(v*100) / 100 })*100) / 100
	c.MinWordHeight = int(mid(8, 30, 1, func(c *CascadeThresholds, v float64) { c.MinWordHeight = int(v) }))
	if !same(c) {
		// Moved together, the thresholds ask other pages than t.
		return t
	}
	return c
}

// Probe sets r's SuggestedCascade from first, the same corpus scored
// read once at the first resolution, r having been read once at the full
// one (see SuggestCascade).
func (r *Result) Probe(first *Result) {
	if r.Text == nil || first.Text == nil {
		return
	}
	if t, ok := SuggestCascade(r.Text.Docs, first.Text.Docs); ok {
		r.SuggestedCascade = &t
	}
}

// writeCascade prints the cascade's counts and the suggested thresholds.
func (r *Report) writeCascade(w io.Writer) {
	if c := r.Cascade; c != nil {
		share := func(a, b int64) float64 {
			if b == 0 {
				return 0
			}
			return float64(a) / float64(b)
		}
		fmt.Fprintf(w, "cascade\t%d of %d pages read first under their resolution, %d of them read again (%.1f%%; %d kept the first reading), %.1f%% of the engines' time; reasons %v\n",
			c.FirstRead, c.Pages, c.ReadTwice, 100*share(int64(c.ReadTwice), int64(c.FirstRead)), c.KeptFirst, 100*share(c.TwiceNS, c.EngineNS), c.Reasons)
		fmt.Fprintf(w, "  mean CER\tpages read once %.4f, read twice %.4f\n", c.OnceCER, c.TwiceCER)
	}
	if t := r.SuggestedCascade; t != nil {
		fmt.Fprintf(w, "  suggested\tcascade: read again under char conf %.0f, credible ink %.2f, word height %d px, or over uncovered %.2f: %d of %d probed pages of the text figures read again, %d needed it (first reading worse by over %.3f), %d of those missed, %d had to (their document's ID or date is found at full only)\n",
			t.MinCharConf, t.MinCredibleInk, t.MinWordHeight, t.MaxUncovered, t.Asked, t.Pages, t.Needed, NeedMargin, t.Missed, t.MustAsk)
		for _, f := range []struct {
			name string
			fig  Figures
		}{{"with the cascade", t.Cascade}, {"all at full", t.Full}, {"all at first", t.First}} {
			fmt.Fprintf(w, "  \t  %-16s CER mean %.4f overall %.4f, WER mean %.4f overall %.4f\n", f.name, f.fig.MeanCER, f.fig.CEROverall, f.fig.MeanWER, f.fig.WEROverall)
		}
	}
}
