package ocr

import (
	"math"
	"math/bits"
)

// A stamp's ruled frame, found when it is broken. findFrames finds a
// frame that closes round its letters; a rubber stamp's thin frame and
// inner rules, scanned, break where the ink was light, merge with the
// print they are struck over, and, when level, lose their long
// horizontal runs to the rules the coverage step drops from its mask.
// What is left to a person's eye is straight lines: two or more long
// ones, parallel to the stamp's rows, and short ones across them, at
// any angle, where the long ones end (a wide stamp's ends may lie
// inches from the letters told as a note, or off the page). A hand
// draws no such lines round its own writing; a note written in a
// form's printed box would sit in one, which a referral letter does
// not have.

const (
	// ruleLongInch is the least length of a frame's long side or inner
	// rule, ruleShortInch of its short sides; ruleFill the least share
	// of that length a line's ink covers (a scanned rule breaks, a row of
	// letters covers far less along any line through it).
	ruleLongInch  = 0.8
	ruleShortInch = 0.35
	ruleFill      = 0.75
	// ruleGapInch is the longest break in a rule: a scan breaks a thin
	// rule in places, a line of print breaks at every word.
	ruleGapInch = 0.04
	// ruleStep is the search's step in degrees: a line half a step (one
	// degree) off the nearest angle looked at drifts by two pixels over
	// ruleLongInch at 150 dpi, inside the band of three.
	ruleStep = 2
	// ruleMaxTurn is the most a frame is looked for turned, in degrees:
	// a stamp is struck at up to 25°.
	ruleMaxTurn = 26
	// ruleMargin is how far, in inches, round a region's letters its
	// frame's long lines are looked for.
	ruleMargin = 0.75
	// ruleFollowInch is how far a long line is followed to its end: a
	// stamp's frame is up to five inches wide, and the letters told as a
	// note may be one row of it, at one end, so its short sides lie
	// beyond where the long lines were looked for, or off the page.
	ruleFollowInch = 5
	// ruleEndInch is how far from a long line's end the short side that
	// closes it may stand (a scanned corner is not square).
	ruleEndInch = 0.06
)

// ruledFrame reports whether region r's letters stand in a ruled frame:
// at one angle within ruleMaxTurn degrees, two straight lines
// ruleLongInch long or more along the letters, one above their centre
// and one below, closed at both ends (see closed); the ink is the
// page's at full contrast (the reduced page, not the mask the rules
// were dropped from).
func (look *handLook) ruledFrame(r handRegion) bool {
	img, f := look.small, look.f
	m := int(ruleMargin * look.wdpi)
	x0, y0 := max(0, r.box[0]/f-m), max(0, r.box[1]/f-m)
	x1, y1 := min(img.w, r.box[2]/f+m), min(img.h, r.box[3]/f+m)
	if x1-x0 < 8 || y1-y0 < 8 {
		return false
	}
	var hist [256]int
	for y := y0; y < y1; y++ {
		for _, v := range img.pix[y*img.w+x0 : y*img.w+x1] {
			hist[v]++
		}
	}
	cut := percentile(hist, 0.9) - inkContrast
	var pts [][2]float64
	for y := y0; y < y1; y++ {
		for x, v := range img.pix[y*img.w+x0 : y*img.w+x1] {
			if int(v) < cut {
				pts = append(pts, [2]float64{float64(x), float64(y - y0)})
			}
		}
	}
	cx, cy := float64(r.box[0]+r.box[2])/2/float64(f)-float64(x0), float64(r.box[1]+r.box[3])/2/float64(f)-float64(y0)
	long, short := ruleLongInch*look.wdpi, ruleShortInch*look.wdpi
	gap := max(2, int(ruleGapInch*look.wdpi))
	g := newRuleGrid(math.Hypot(max(cx, float64(x1-x0)-cx), max(cy, float64(y1-y0)-cy)))
	w := ruleWalk{img: img, x0: x0, y0: y0, cut: cut, gap: gap, reach: int(ruleFollowInch * look.wdpi), fill: ruleFill, end: max(2, int(ruleEndInch*look.wdpi))}
	for deg := -ruleMaxTurn; deg <= ruleMaxTurn; deg += ruleStep {
		sin, cos := math.Sincos(float64(deg) * math.Pi / 180)
		// Along the rows (u) and across them (v), centre at 0.
		// A frame's lines lie within ruleMargin of the letters it holds.
		alongU, acrossV := 0.0, 0.0
		for _, l := range r.lines {
			for _, c := range l.comps {
				x, y := float64(c[0]+c[2])/2-float64(x0)-cx, float64(c[1]+c[3])/2-float64(y0)-cy
				alongU, acrossV = max(alongU, math.Abs(x*cos+y*sin)), max(acrossV, math.Abs(-x*sin+y*cos))
			}
		}
		above, below := g.straightLines(pts, cx, cy, cos, sin, long, acrossV+float64(m), alongU, gap)
		if above.ok && below.ok && w.closed(above, below, cx, cy, cos, sin, short) {
			return true
		}
	}
	return false
}

// ruleWalk follows lines on the reduced page img, whose pixels darker
// than cut are ink; the grid's points are offset by (x0, y0) from it.
// A line is followed up to reach pixels and ends at a break longer
// than gap; the short side that closes a long line stands within end
// pixels of where it ends and covers fill of the way across.
type ruleWalk struct {
	img                          *grayImage
	x0, y0, cut, gap, reach, end int
	fill                         float64
}

// closed reports whether the long lines above and below the letters,
// found in direction (dx, dy) from the point (cx, cy) of the grid, are
// closed at both ends: at each, by a line across from one of them to
// the other, standing where that one ends, or by the page's edge, which
// one of them runs off. A row's edge or a rule of print has no such
// ends.
func (w ruleWalk) closed(above, below ruleLine, cx, cy, dx, dy, short float64) bool {
	span := below.v - above.v
	if span < short {
		return false
	}
	for _, sign := range []float64{-1, 1} {
		shut := false
		for i, l := range []ruleLine{above, below} {
			x := float64(w.x0) + cx + l.u*dx - l.v*dy
			y := float64(w.y0) + cy + l.u*dy + l.v*dx
			ex, ey, offPage := w.follow(x, y, sign*dx, sign*dy, w.reach)
			if offPage {
				shut = true
				break
			}
			toward := 1.0 // from the line above down to the one below
			if i == 1 {
				toward = -1
			}
			for a := -w.end; a <= w.end && !shut; a++ {
				sx, sy := ex+float64(a)*dx, ey+float64(a)*dy
				fx, fy, _ := w.follow(sx, sy, -toward*dy, toward*dx, int(span)+w.gap)
				shut = math.Hypot(fx-sx, fy-sy) >= w.fill*span
			}
			if shut {
				break
			}
		}
		if !shut {
			return false
		}
	}
	return true
}

// follow walks from (x, y) in direction (dx, dy) along a line of ink,
// keeping to it as it drifts a pixel to either side, and returns where
// its ink ends before a break longer than w.gap, or whether it runs off
// the page first, within most pixels.
func (w ruleWalk) follow(x, y, dx, dy float64, most int) (ex, ey float64, offPage bool) {
	ink := func(x, y float64) (bool, bool) {
		px, py := int(math.Round(x)), int(math.Round(y))
		if px < 0 || py < 0 || px >= w.img.w || py >= w.img.h {
			return false, true
		}
		return int(w.img.pix[py*w.img.w+px]) < w.cut, false
	}
	off, last := 0.0, 0
	ex, ey = x, y
	for t := 1; t <= most && t-last <= w.gap; t++ {
		qx, qy := x+float64(t)*dx-off*dy, y+float64(t)*dy+off*dx
		for _, k := range []float64{0, -1, 1} {
			on, out := ink(qx-k*dy, qy+k*dx)
			if out {
				return ex, ey, true
			}
			if on {
				if math.Abs(off+k) <= 3+float64(t)/20 {
					off += k
				}
				last, ex, ey = t, qx-k*dy, qy+k*dx
				break
			}
		}
	}
	return ex, ey, false
}

// A ruleLine is a straight line found by straightLines: a point on it,
// u along the direction looked in and v across it, from the centre.
type ruleLine struct {
	ok   bool
	u, v float64
}

// straightLines finds a straight line length long or more in direction
// (dx, dy) on each side of the point (cx, cy), within pixels of it
// across the direction, and passing within along of it: ink over
// ruleFill of its length, in a band three pixels thick (a scanned rule
// is one to three thick, and a degree off the search's angle over an
// inch drifts by two). g's reach is the farthest any point lies from
// (cx, cy).
func (g *ruleGrid) straightLines(pts [][2]float64, cx, cy, dx, dy, length, within, along float64, maxGap int) (before, after ruleLine) {
	d, n, words := g.d, g.n, g.words
	grid, count, band := g.grid, g.count, g.band
	clear(grid)
	clear(count)
	for _, p := range pts {
		x, y := p[0]-cx, p[1]-cy
		u, v := int(math.Floor(x*dx+y*dy))+d, int(math.Floor(-x*dy+y*dx))+d
		if u < 0 || v < 0 || u >= n || v >= n {
			continue
		}
		grid[v*words+u/64] |= 1 << (u % 64)
		count[v]++
	}
	need := int(math.Ceil(ruleFill * length))
	row := func(v int) []uint64 {
		if v < 0 || v >= n {
			return g.none
		}
		return grid[v*words : (v+1)*words]
	}
	lo, hi := d-int(along), d+int(along)
	for v := 0; v+2 < n; v++ {
		side := v+1 < d // the band's middle row is above the centre
		if (side && before.ok) || (!side && after.ok) || math.Abs(float64(v+1-d)) > within || count[v]+count[v+1]+count[v+2] < need {
			continue
		}
		for w := range band {
			band[w] = grid[v*words+w] | grid[(v+1)*words+w] | grid[(v+2)*words+w]
		}
		if at := ruled(band, row(v-3), row(v+5), int(length), need, maxGap, lo, hi); at >= 0 {
			l := ruleLine{ok: true, u: float64(at - int(length)/2 - d), v: float64(v + 1 - d)}
			if side {
				before = l
			} else {
				after = l
			}
		}
	}
	return before, after
}

// ruleGrid is the memory straightLines marks a window's ink in, made
// once for every angle ruledFrame tries: d is its reach in pixels, rows
// are n (v+d for v in -d..d), each words 64-bit words of bits (u+d).
type ruleGrid struct {
	d, n, words int
	grid, band  []uint64
	none        []uint64 // a row of no ink, beyond the grid's edge
	count       []int
}

// newRuleGrid makes a ruleGrid for points up to reach from the centre.
func newRuleGrid(reach float64) *ruleGrid {
	d := int(reach) + 1
	n, words := 2*d+1, (2*d+64)/64
	return &ruleGrid{d: d, n: n, words: words, grid: make([]uint64, n*words), band: make([]uint64, words), none: make([]uint64, words), count: make([]int, n)}
}

// ruled returns the end of the first window of length bits of band,
// ending after from and starting before to, that holds need bits set
// or more, with no gap in them longer than maxGap, and with above and
// below (rows two pixels clear of the band) each under a quarter as
// full there, or -1: a rule, thin and nearly whole, where a band
// through a line of print, sharp or blurred, is broken by its word
// spaces, and its letters fill the rows on one side of it at least.
func ruled(band, above, below []uint64, length, need, maxGap, from, to int) int {
	set, first, last := 0, -1, 0
	for i, w := range band {
		if w != 0 {
			set += bits.OnesCount64(w)
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if set < need {
		return -1
	}
	bit := func(b []uint64, i int) int { return int(b[i/64] >> (i % 64) & 1) }
	lo, hi := first*64, (last+1)*64
	run, up, down, lastSet := 0, 0, 0, -1
	var gaps []int // the starts of gaps longer than allowed, in order
	for i := lo; i < hi; i++ {
		if bit(band, i) == 1 {
			run++
			if lastSet >= 0 && i-lastSet > maxGap {
				gaps = append(gaps, lastSet)
			}
			lastSet = i
		}
		up, down = up+bit(above, i), down+bit(below, i)
		if i-length >= lo {
			j := i - length
			run, up, down = run-bit(band, j), up-bit(above, j), down-bit(below, j)
		}
		for len(gaps) > 0 && gaps[0] <= i-length {
			gaps = gaps[1:]
		}
		if run >= need && len(gaps) == 0 && 4*up < need && 4*down < need && i >= from && i-length < to {
			return i
		}
	}
	return -1
}
