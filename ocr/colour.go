package ocr

import "math"

// Ink colour. Print is black; a signature, a stamp, a note and a tick
// are often blue, red or violet, and where one is written or struck over
// print, the gray page has one tangle of ink where a person sees two.
// The render is in colour before it is made gray, so the colour of its
// ink is kept (huePlane), and the handwriting step tells the page's inks
// apart by hue before it looks for lines (inkClasses): a blue signature
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

// sample writes the hue and chroma of each pixel of the w×h reduced
// page, reduced by f from the prepared page, into hue and chroma, and
// counts the hues of chroma binChroma or more in bins. The map back to
// the render is affine: a step along a row is one step in the render.
func (c *colourLook) sample(hue, chroma []byte, w, h, f int, bins *[hueBins]int) {
	m := c.back
	ff, s := float64(f), float64(c.plane.step)
	for y := range h {
		py := (float64(y) + 0.5) * ff
		rx, ry := 0.5*ff*m[0]+py*m[2]+m[4], 0.5*ff*m[1]+py*m[3]+m[5]
		for x := range w {
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

// colourBuffers are inkClasses' page-sized buffers, kept from page to
// page.
type colourBuffers struct {
	cls, chroma []byte
	labels      []int32
	tmp         []byte
}

// inkClasses sorts the ink of ink's reduced page by colour into cls (one
// byte a pixel, in buf): 0 paper, 1 ink of no colour (black, gray,
// pencil: the ink mask's), 2+k the page's k-th coloured ink, a run of hue
// bins between empty ones holding at least a square of colourInkInch. A
// piece of ink (a component of the mask) takes one ink whole when it is
// mostly coloured and hardly neutral, or none when it is nearly all
// neutral: a pen's stroke, scanned, has pale pixels of little chroma
// along it. Otherwise it is of two inks (a stamp struck over print, a
// signature over its printed name), and each pixel is told by its own
// chroma. It returns the number of classes, 0 when the page has no
// coloured ink: nothing to tell apart.
func (c *colourLook) inkClasses(ink *inkLook, buf *colourBuffers) (cls []byte, n int) {
	if c == nil {
		return nil, 0
	}
	w, h := ink.small.w, ink.small.h
	buf.cls, buf.chroma = grow(buf.cls, w*h), grow(buf.chroma, w*h)
	cls, chroma := buf.cls, buf.chroma
	var bins [hueBins]int
	c.sample(cls, chroma, w, h, ink.f, &bins)
	least := colourInkInch * ink.wdpi
	ids := hueClusters(bins, int(least*least))
	n = 1
	for _, id := range ids {
		n = max(n, id+1)
	}
	if n == 1 {
		return nil, 0
	}
	of := func(i int) int { // the coloured class of pixel i, or 0
		if chroma[i] < pixelChroma {
			return 0
		}
		return ids[hueBin(cls[i])]
	}
	labels, count := labelInk(ink.mask, w, h, grow(buf.labels, w*h))
	buf.labels = labels
	// Each piece's pixels: all, neutral, and of each coloured class.
	stats := make([][]int, count)
	for i := range stats {
		stats[i] = make([]int, n)
	}
	for i, l := range labels {
		if l < 0 {
			continue
		}
		st := stats[l]
		st[0]++
		if k := of(i); k > 0 {
			st[k]++
		} else if chroma[i] == 0 {
			st[1]++
		}
	}
	whole := make([]int, count) // a piece's one class, 0 when per pixel
	for l, st := range stats {
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
	for i, l := range labels {
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
	gap := max(2, int(math.Round(bridgeInch*ink.wdpi)))
	bridge(cls, w, h, 1, gap)
	bridge(cls, w, h, w, gap)
	return cls, n
}

// pageInks are a page's inks told apart: each pixel's class (see
// inkClasses), and the components of each class with theirs.
type pageInks struct {
	cls     []byte
	comps   [][4]int
	classes []int
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

// classComps returns the components of each ink class of cls (see
// inkClasses) on its own, n classes, and the class of each: a stroke of
// blue crossing a word of print is two components, not one. tmp is
// scratch memory of the mask's size.
func classComps(cls []byte, n, w, h int, tmp []byte) (comps [][4]int, classes []int, scratch []byte) {
	tmp = grow(tmp, w*h)
	for c := 1; c < n; c++ {
		any := false
		for i, v := range cls {
			tmp[i] = 0
			if int(v) == c {
				tmp[i], any = 1, true
			}
		}
		if !any {
			continue
		}
		for _, b := range components(tmp, w, h) {
			comps, classes = append(comps, b), append(classes, c)
		}
	}
	return comps, classes, tmp
}
