package ocr

import "math"

// The page's ink as the handwriting step sees it: its components of a
// glyph's size or a word's, by ink, chained into lines.

// lookForHands finds the lines of ink of img, rendered at dpi.
func lookForHands(img *grayImage, dpi int) *handLook { return handsIn(newInkLook(img, dpi), nil) }

// handsIn is lookForHands on the page's ink as ink sees it; colour, when
// not nil, tells the page's inks apart (see inks), and a line or a
// region is of one ink.
func handsIn(ink *inkLook, colour *colourLook) *handLook {
	small, wdpi, mask := ink.small, ink.wdpi, ink.mask
	look := &handLook{f: ink.f, wdpi: wdpi, small: small, mask: mask, buf: ink.buf, ink: ink}
	all, classes := ink.comps, []int(nil)
	var cls []byte
	n := 0
	if inks := colour.inks(ink, &ink.buf.colour); inks != nil {
		all, classes, cls, n = inks.comps, inks.classes, inks.cls, inks.n
		look.inks = inks
	}
	minH, maxH := max(3, int(minGlyphInch*wdpi+0.5)), int(handMaxInch*wdpi)
	edge := int(0.05 * wdpi)
	byInk := map[int][]int{}
	var comps [][4]int
	var inks []int
	for k, b := range all {
		h, w := b[3]-b[1], b[2]-b[0]
		if h < minH || h > maxH || w > small.w/2 {
			continue
		}
		if b[0] < edge || b[1] < edge || b[2] > small.w-edge || b[3] > small.h-edge {
			continue
		}
		class := 1
		if classes != nil {
			class = classes[k]
		}
		px := inkOf(mask, cls, class, small.w, b)
		if px*100 < minGlyphFill/2*w*h {
			continue
		}
		byInk[class] = append(byInk[class], len(comps))
		comps, inks = append(comps, b), append(inks, px)
	}
	for class := 1; class < max(2, n); class++ {
		ixs := byInk[class]
		boxes := make([][4]int, len(ixs))
		for j, i := range ixs {
			boxes[j] = comps[i]
		}
		for _, line := range chainLines(boxes) {
			l := handLine{box: [4]int{math.MaxInt, math.MaxInt, 0, 0}, ink: class}
			for _, j := range line {
				i := ixs[j]
				b := comps[i]
				l.comps, l.inks = append(l.comps, b), append(l.inks, inks[i])
				l.box = union4(l.box, b)
			}
			look.lines = append(look.lines, l)
		}
	}
	return look
}

// inkOf counts the ink pixels of box b: those of mask, or with cls (not
// nil) those of class.
func inkOf(mask, cls []byte, class, w int, b [4]int) int {
	n := 0
	for y := b[1]; y < b[3]; y++ {
		m := mask[y*w:]
		if cls != nil {
			m = cls[y*w:]
		}
		for x := b[0]; x < b[2]; x++ {
			if m[x] != 0 && (cls == nil || int(m[x]) == class) {
				n++
			}
		}
	}
	return n
}
