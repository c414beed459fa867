package export

// The font sizes of the text layer's blocks (see pdflines.go): the page's
// body text at one size, and no block beside another at a size that
// would read across the gap between them.

import (
	"math"
	"slices"
)

// bodyTolerance is how far a block's line height may stray from the
// page's median line height and still be set at the page's size: lines
// with and without descenders differ by about a quarter.
const bodyTolerance = 0.3

// blockEm is the font size, in canvas pixels, of a block whose lines are
// gs, on a page whose median line height is body. Poppler keeps two
// lines in one block only when their font sizes differ by under 5% and
// their baselines by under 1.5 sizes, and puts blocks in its own reading
// order: so the lines of a paragraph share one size, and paragraphs of
// the body text (blocks whose median line height is near the page's)
// share the page's.
func blockEm(gs []lineGeom, body float64) float64 {
	ems := make([]float64, len(gs))
	for i, g := range gs {
		ems[i] = g.em
	}
	em := medianFloat(ems)
	if em >= body*(1-bodyTolerance) && em <= body*(1+bodyTolerance) {
		return body
	}
	return em
}

// gutters is, for each block, the narrowest gap between it and a block
// beside it (one whose lines share some of its height), in canvas
// pixels; +Inf for none. Poppler joins words of one line across a gap of
// a fraction of their size whatever their sizes (colSpacing), so a block
// set at a size over its gutter's 1/colSpacing reads across the gutter,
// line by line, two columns as one.
func gutters(blocks [][]lineGeom) []float64 {
	type extent struct{ x0, x1, top, bottom float64 }
	es := make([]extent, len(blocks))
	for i, gs := range blocks {
		e := extent{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
		for _, g := range gs {
			e.x0, e.x1 = min(e.x0, float64(g.x0)), max(e.x1, float64(g.x1))
			e.top, e.bottom = min(e.top, g.base-g.em), max(e.bottom, g.base)
		}
		es[i] = e
	}
	out := make([]float64, len(blocks))
	for i, a := range es {
		out[i] = math.Inf(1)
		for j, b := range es {
			if i == j || a.top >= b.bottom || b.top >= a.bottom {
				continue
			}
			if gap := max(b.x0-a.x1, a.x0-b.x1); gap > 0 {
				out[i] = min(out[i], gap)
			}
		}
	}
	return out
}

// medianFloat is the middle value of v (the lower of the two middle
// ones), 0 for none; v is sorted in place.
func medianFloat(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}
