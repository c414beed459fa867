package ocr

import "math"

// inkLook is a page's ink as the coverage measurement and the handwriting
// look both first see it: the page reduced to about coverageDPI (by f,
// to wdpi), its ink against the local paper with long rules dropped, and
// that mask's components. Each made it on its own, and the coverage
// measurement again after a column reading or a recovery changed the
// words: the reduction and the mask are most of what either costs, and
// they depend on the page alone, never on the words. mask is read only
// once made.
type inkLook struct {
	f     int
	wdpi  float64
	small *grayImage
	mask  []byte
	comps [][4]int
}

// newInkLook looks at the ink of img, rendered at dpi.
func newInkLook(img *grayImage, dpi int) *inkLook {
	f := max(1, int(math.Round(float64(dpi)/coverageDPI)))
	if dpi < coverageDPI*3/2 {
		f = 1
	}
	small := img.minReduce(f)
	wdpi := float64(dpi) / float64(f)
	mask := inkMask(small, max(8, int(0.25*wdpi)))
	dropRules(mask, small.w, small.h, int(ruleInch*wdpi))
	return &inkLook{f: f, wdpi: wdpi, small: small, mask: mask, comps: components(mask, small.w, small.h)}
}

// inkLook is p's look at its ink, made at the first call: the page does
// not change while the coverage step reads it.
func (p *prepared) inkLook() *inkLook {
	if p.ink == nil {
		p.ink = newInkLook(p.img, p.dpi)
	}
	return p.ink
}
