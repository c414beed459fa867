package ocr

import "math"

// Where a page's inks are told apart. Coloured ink is a small part of a
// page (a signature, a stamp, a tick), and telling inks apart costs a
// labelling of every pixel looked at: the page is looked at in windows
// round its coloured ink only, and the rest of it is ink of no colour.

// winTile is the side, in pixels of the reduced page, of the tiles the
// coloured ink is first found in: about a sixth of an inch at the
// coverage step's resolution.
const winTile = 16

// windows returns the parts of ink's reduced page that hold all its
// coloured ink (pixels of chroma pixelChroma or more in the hue plane):
// boxes (x0, y0, x1, y1, ends exclusive) apart from one another by a
// pixel or more, each holding whole every component of the mask it
// meets, and each coloured pixel a tile or more inside its box. So a
// component of one ink, and a piece of ink of two, lies in one window,
// and what lies outside every window is the mask's own components, of no
// colour.
func (c *colourLook) windows(ink *inkLook) [][4]int {
	w, h := ink.small.w, ink.small.h
	tw, th := (w+winTile-1)/winTile, (h+winTile-1)/winTile
	marked := make([]byte, tw*th) // 1: the tile holds coloured ink
	fwd := invertMatrix(c.back)
	p := c.plane
	s, f := float64(p.step), float64(ink.f)
	for by := range p.h {
		ry := (float64(by) + 0.5) * s
		for bx := range p.w {
			if p.pix[2*(by*p.w+bx)+1] < pixelChroma {
				continue
			}
			rx := (float64(bx) + 0.5) * s
			x := (rx*fwd[0] + ry*fwd[2] + fwd[4]) / f
			y := (rx*fwd[1] + ry*fwd[3] + fwd[5]) / f
			if x < -winTile || y < -winTile || x >= float64(w+winTile) || y >= float64(h+winTile) {
				continue
			}
			// The tile and its eight neighbours: a pixel sampled from
			// this block lies within a block's width of its centre.
			tx, ty := int(math.Floor(x/winTile)), int(math.Floor(y/winTile))
			for yy := max(ty-1, 0); yy <= min(ty+1, th-1); yy++ {
				for xx := max(tx-1, 0); xx <= min(tx+1, tw-1); xx++ {
					marked[yy*tw+xx] = 1
				}
			}
		}
	}
	groups, _, _ := labelBoxes(marked, tw, [4]int{0, 0, tw, th}, nil)
	var wins [][4]int
	for _, b := range groups { // the 8-connected groups of marked tiles
		wins = append(wins, [4]int{b[0] * winTile, b[1] * winTile, min(b[2]*winTile, w), min(b[3]*winTile, h)})
	}
	return closeWindows(wins, ink.comps)
}

// closeWindows grows each of wins to hold whole every component of comps
// it meets or touches, and joins windows that meet or touch, until none
// changes.
func closeWindows(wins [][4]int, comps [][4]int) [][4]int {
	near := func(a, b [4]int) bool { return a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3] }
	for changed := true; changed; {
		changed = false
		for i := range wins {
			for _, b := range comps {
				if near(wins[i], b) {
					u := union4(wins[i], b)
					changed = changed || u != wins[i]
					wins[i] = u
				}
			}
		}
		for i := 0; i < len(wins); i++ {
			for j := i + 1; j < len(wins); j++ {
				if near(wins[i], wins[j]) {
					wins[i] = union4(wins[i], wins[j])
					wins = append(wins[:j], wins[j+1:]...)
					changed = true
					j = i
				}
			}
		}
	}
	return wins
}
