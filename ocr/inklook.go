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
	buf   *inkBuffers
}

// inkBuffers are the page-sized buffers of the coverage step: the
// reduced page, its ink mask and a raster of the words read. The engine
// keeps one set from page to page. Made afresh for each page, the step's
// 10–17 MB a page (at 300 dpi) were new memory every time, which the
// kernel had to map and clear: the workers' system time was 24% higher
// with the step than without on make bench's corpus, more than the
// step's own computing.
type inkBuffers struct {
	small  grayImage
	mask   []byte
	raster []byte
	colour colourBuffers // the ink told apart by colour (see inkClasses)
}

// grow returns b with length n, reallocated when too small: the one way
// a page-sized buffer is kept from page to page. The contents are
// undefined.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// blank returns a cleared raster of n bytes. It is the same memory each
// time: a raster lives only until the next call.
func (b *inkBuffers) blank(n int) []byte {
	b.raster = grow(b.raster, n)
	clear(b.raster)
	return b.raster
}

// newInkLook looks at the ink of img, rendered at dpi, in buffers of its
// own.
func newInkLook(img *grayImage, dpi int) *inkLook { return lookAtInk(img, dpi, &inkBuffers{}) }

// lookAtInk is newInkLook in buf's memory: the look is valid until buf's
// next look.
func lookAtInk(img *grayImage, dpi int, buf *inkBuffers) *inkLook {
	f := inkStep(dpi)
	small := img.minReduce(f, &buf.small)
	wdpi := float64(dpi) / float64(f)
	buf.mask = inkMask(small, max(8, int(0.25*wdpi)), buf.mask)
	mask := buf.mask
	dropRules(mask, small.w, small.h, int(ruleInch*wdpi))
	return &inkLook{f: f, wdpi: wdpi, small: small, mask: mask, comps: components(mask, small.w, small.h), buf: buf}
}

// inkLook is p's look at its ink, made at the first call in buf: the
// page does not change while the coverage step reads it.
func (p *prepared) inkLook(buf *inkBuffers) *inkLook {
	if p.ink == nil {
		p.ink = lookAtInk(p.img, p.dpi, buf)
	}
	return p.ink
}

// inkStep is the factor a page rendered at dpi is reduced by to be
// looked at (to about coverageDPI).
func inkStep(dpi int) int {
	if dpi < coverageDPI*3/2 {
		return 1
	}
	return max(1, int(math.Round(float64(dpi)/coverageDPI)))
}
