package ocr

import "math"

// Ink colour. Print is black; a signature, a stamp, a note and a tick
// are often blue, red or violet, and where one is written or struck over
// print, the gray page has one tangle of ink where a person sees two.
// The render is in colour before it is made gray, so the colour of its
// ink is kept (huePlane), and the handwriting step tells the page's inks
// apart by hue before it looks for lines (inks): a blue signature
// over a printed name, a red stamp over a paragraph and the print under
// them are each looked at alone. A page scanned in gray, or all in one
// ink, is looked at as before.

// huePlane is the colour of a rendered page's ink, two bytes for each
// step×step block of its pixels (the handwriting step's reduction, see
// inkStep): the hue (1 + its hue in 254ths of a turn from
// red) and the chroma (0–255) of the block's most coloured pixel darker
// than paper, or two zeros when none has chroma 16 or more (see rb_hue).
type huePlane struct {
	w, h     int
	step     int // set before the render; 0 is 1
	pix      []byte
	coloured int64 // pixels of chroma 64 or more
}

// resize makes p the plane of a w×h render, reusing its buffer.
func (p *huePlane) resize(w, h int) {
	p.step = max(1, p.step)
	p.w, p.h = (w+p.step-1)/p.step, (h+p.step-1)/p.step
	p.pix = grow(p.pix, 2*p.w*p.h)
}

const (
	// hueBins is the number of bins a turn of hue is counted in;
	// inks are told apart where an empty bin separates them: blue
	// ballpoint (220–230°), violet stamp ink (280–290°) and red (350–
	// 10°) each fill one or two bins of 10°.
	hueBins = 36
	// colourInkInch is the side of the least square of ink that makes a
	// coloured ink of the page: less is a speck, a fringe.
	colourInkInch = 0.07
	// Chroma, 0–255, of a pixel: binChroma or more is counted in the
	// page's hues; pixelChroma or more is coloured where a piece of ink
	// is of two inks; strongChroma or more is coloured off the gray
	// page's ink mask too (a stamp's frame the rule removal took). A pen's
	// stroke, scanned and compressed, is of chroma 20–100 for ink of 120;
	// a stamp's 100–200; black print's under 16.
	binChroma    = 32
	pixelChroma  = 24
	strongChroma = 64
)

// colourLook is what the handwriting step needs of the colour: the hue
// plane of the page's render and the map from the prepared page's pixels
// back to the render's.
type colourLook struct {
	plane *huePlane
	back  [6]float64
}

// colour returns p's colour look, or nil when its render has no
// coloured ink to speak of.
func (p *prepared) colour(plane *huePlane) *colourLook {
	least := colourInkInch * float64(p.dpi)
	if plane == nil || len(plane.pix) == 0 || float64(plane.coloured) < least*least {
		return nil
	}
	return &colourLook{plane: plane, back: invertMatrix(p.canvas)}
}

// invertMatrix returns the map that undoes m.
func invertMatrix(m [6]float64) [6]float64 {
	det := m[0]*m[3] - m[1]*m[2]
	if det == 0 {
		return identityMatrix
	}
	return [6]float64{m[3] / det, -m[1] / det, -m[2] / det, m[0] / det,
		(m[2]*m[5] - m[3]*m[4]) / det, (m[1]*m[4] - m[0]*m[5]) / det}
}

// sample writes the hue and chroma of each pixel of window win of the
// w-wide reduced page, reduced by f from the prepared page, into hue
// and chroma, and counts the hues of chroma binChroma or more in bins.
// The map back to the render is affine: a step along a row is one step
// in the render.
func (c *colourLook) sample(hue, chroma []byte, w int, win [4]int, f int, bins *[hueBins]int) {
	m := c.back
	ff, s := float64(f), float64(c.plane.step)
	for y := win[1]; y < win[3]; y++ {
		px, py := (float64(win[0])+0.5)*ff, (float64(y)+0.5)*ff
		rx, ry := px*m[0]+py*m[2]+m[4], px*m[1]+py*m[3]+m[5]
		for x := win[0]; x < win[2]; x++ {
			i := y*w + x
			hue[i], chroma[i] = 0, 0
			hx, hy := int(math.Floor(rx/s)), int(math.Floor(ry/s))
			rx, ry = rx+ff*m[0], ry+ff*m[1]
			if hx < 0 || hy < 0 || hx >= c.plane.w || hy >= c.plane.h {
				continue
			}
			j := 2 * (hy*c.plane.w + hx)
			hue[i], chroma[i] = c.plane.pix[j], c.plane.pix[j+1]
			if chroma[i] >= binChroma {
				bins[hueBin(hue[i])]++
			}
		}
	}
}

// hueBin is the bin of hue code v (not 0).
func hueBin(v byte) int { return int(v-1) * hueBins / 254 }

// colourBuffers are inks' page-sized buffers, kept from page to page.
type colourBuffers struct {
	cls, hue, chroma []byte
	labels           []int32
	stats            []int
}

// pageInks are a page's inks told apart: each pixel's class (0 paper, 1
// ink of no colour, 2+k the page's k-th coloured ink; see inks), the
// number of classes, and the components of each class with theirs: a
// stroke of blue crossing a word of print is two components, not one.
type pageInks struct {
	cls     []byte
	n       int
	comps   [][4]int
	classes []int
}

// inks sorts the ink of ink's reduced page by colour (in buf's memory),
// or returns nil when the page has no coloured ink: nothing to tell
// apart. Its classes are 0 paper, 1 ink of no colour (black, gray,
// pencil: the ink mask's), 2+k the page's k-th coloured ink, a run of hue
// bins between empty ones holding at least a square of colourInkInch. A
// piece of ink (a component of the mask) takes one ink whole when it is
// mostly coloured and hardly neutral, or none when it is nearly all
// neutral: a pen's stroke, scanned, has pale pixels of little chroma
// along it. Otherwise it is of two inks (a stamp struck over print, a
// signature over its printed name), and each pixel is told by its own
// chroma. Only the windows round the coloured ink are looked at (see
// windows): the rest of the page is the mask's, of no colour.
func (c *colourLook) inks(ink *inkLook, buf *colourBuffers) *pageInks {
	if c == nil {
		return nil
	}
	return c.inksIn(ink, buf, c.windows(ink))
}

// inksIn is inks looking in windows wins only.
func (c *colourLook) inksIn(ink *inkLook, buf *colourBuffers, wins [][4]int) *pageInks {
	w, h := ink.small.w, ink.small.h
	if len(wins) == 0 {
		return nil
	}
	buf.hue, buf.chroma = grow(buf.hue, w*h), grow(buf.chroma, w*h)
	var bins [hueBins]int
	for _, win := range wins {
		c.sample(buf.hue, buf.chroma, w, win, ink.f, &bins)
	}
	least := colourInkInch * ink.wdpi
	ids := hueClusters(bins, int(least*least))
	n := 1
	for _, id := range ids {
		n = max(n, id+1)
	}
	if n == 1 {
		return nil
	}
	buf.cls = grow(buf.cls, w*h)
	copy(buf.cls, ink.mask) // the mask is 0 or 1: paper or ink of no colour
	inks := &pageInks{cls: buf.cls, n: n}
	gap := max(2, int(math.Round(bridgeInch*ink.wdpi)))
	for _, win := range wins {
		c.classify(ink.mask, w, win, n, &ids, buf)
		bridge(buf.cls, w, win, 1, gap)
		bridge(buf.cls, w, win, w, gap)
	}
	// Each class's components: the mask's own outside the windows, of
	// no colour, and those of each ink inside them.
	for _, b := range ink.comps {
		if !inWindow(b, wins) {
			inks.comps, inks.classes = append(inks.comps, b), append(inks.classes, 1)
		}
	}
	for _, win := range wins {
		var boxes [][4]int
		var values []byte
		boxes, values, buf.labels = labelBoxes(buf.cls, w, win, buf.labels)
		for k, b := range boxes {
			inks.comps, inks.classes = append(inks.comps, b), append(inks.classes, int(values[k]))
		}
	}
	return inks
}

// inWindow reports whether box b lies in one of wins.
func inWindow(b [4]int, wins [][4]int) bool {
	for _, win := range wins {
		if b[0] >= win[0] && b[1] >= win[1] && b[2] <= win[2] && b[3] <= win[3] {
			return true
		}
	}
	return false
}

// classify writes the class of each pixel of window win of the w-wide
// mask into buf.cls (see inks), from the hue and chroma buf holds and
// ids, the class of each hue bin; n is the number of classes.
func (c *colourLook) classify(mask []byte, w int, win [4]int, n int, ids *[hueBins]int, buf *colourBuffers) {
	cls, hue, chroma := buf.cls, buf.hue, buf.chroma
	ww := win[2] - win[0]
	of := func(i int) int { // the coloured class of pixel i, or 0
		if chroma[i] < pixelChroma {
			return 0
		}
		return ids[hueBin(hue[i])]
	}
	var pieces [][4]int
	pieces, _, buf.labels = labelBoxes(mask, w, win, buf.labels)
	labels := buf.labels
	// Each piece's pixels: all, neutral, and of each coloured class.
	buf.stats = grow(buf.stats, len(pieces)*n)
	stats := buf.stats
	clear(stats)
	at := func(i int) int { return (win[1]+i/ww)*w + win[0] + i%ww }
	for j, l := range labels {
		if l < 0 {
			continue
		}
		i := at(j)
		st := stats[int(l)*n:]
		st[0]++
		if k := of(i); k > 0 {
			st[k]++
		} else if chroma[i] == 0 {
			st[1]++
		}
	}
	whole := make([]int, len(pieces)) // a piece's one class, 0 when per pixel
	for l := range whole {
		st := stats[l*n : (l+1)*n]
		best := 2
		for k := 3; k < n; k++ {
			if st[k] > st[best] {
				best = k
			}
		}
		switch coloured := st[0] - st[1]; {
		case 10*st[1] >= 9*st[0]:
			whole[l] = 1
		case 10*st[1] <= 3*st[0] && 2*coloured >= st[0] && st[best] > 0:
			whole[l] = best
		}
	}
	for j, l := range labels {
		i := at(j)
		k := of(i)
		switch {
		case l >= 0 && whole[l] > 0:
			cls[i] = byte(whole[l])
		case l >= 0 && k > 0:
			cls[i] = byte(k)
		case l >= 0:
			cls[i] = 1
		case k > 0 && chroma[i] >= strongChroma:
			cls[i] = byte(k)
		default:
			cls[i] = 0
		}
	}
}

// hueClusters gives each bin of bins the class of its ink: 0 for none,
// else 2+k for the k-th run of non-empty bins (round the circle of hue)
// holding least pixels or more. A bin is empty below a two-hundredth of
// the coloured pixels, so a few stray pixels do not bridge two inks.
func hueClusters(bins [hueBins]int, least int) [hueBins]int {
	total := 0
	for _, v := range bins {
		total += v
	}
	var ids [hueBins]int
	present := func(i int) bool { v := bins[(i+hueBins)%hueBins]; return v > 0 && 200*v >= total }
	start := -1
	for i := range hueBins {
		if !present(i) {
			start = i
			break
		}
	}
	if start < 0 {
		if total >= least {
			for i := range ids {
				ids[i] = 2
			}
		}
		return ids
	}
	next := 2
	for k := 1; k <= hueBins; k++ {
		i := (start + k) % hueBins
		if !present(i) || present(i-1) {
			continue
		}
		sum, j := 0, i
		for ; present(j); j = (j + 1) % hueBins {
			sum += bins[j]
		}
		if sum < least {
			continue
		}
		for j = i; present(j); j = (j + 1) % hueBins {
			ids[j] = next
		}
		next++
	}
	return ids
}
