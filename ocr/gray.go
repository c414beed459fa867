package ocr

import (
	"encoding/binary"
	"fmt"
	"image"
)

// pgmSlack is the room kept in front of a grayImage's pixels for a PGM
// header, so the page can be handed to Tesseract without copying it.
// "P5\n" + two numbers of up to 10 digits + "\n255\n" fits.
const pgmSlack = 32

// grayImage is an 8-bit gray page, one byte a pixel, rows packed, 0 black.
type grayImage struct {
	w, h int
	buf  []byte // pgmSlack bytes, then the pixels
	pix  []byte // buf[pgmSlack:]
}

// newGrayImage allocates a w×h image.
func newGrayImage(w, h int) *grayImage {
	g := &grayImage{}
	g.resize(w, h)
	return g
}

// resize makes g w×h, reusing its buffer when it is large enough. The
// pixels are undefined afterwards.
func (g *grayImage) resize(w, h int) {
	need := pgmSlack + w*h
	g.w, g.h = w, h
	g.buf = grow(g.buf, need)
	g.pix = g.buf[pgmSlack:]
}

// pgm returns the image as a binary PGM. The header is written into the
// slack in front of the pixels, so the result shares g's memory.
func (g *grayImage) pgm() []byte {
	header := fmt.Appendf(nil, "P5\n%d %d\n255\n", g.w, g.h)
	start := pgmSlack - len(header)
	copy(g.buf[start:], header)
	return g.buf[start:]
}

// fromRGBA converts img to gray into g, reusing g's buffer, and returns the
// histogram of the gray values, as renderGray does.
func (g *grayImage) fromRGBA(img *image.RGBA) (hist [256]int) { return g.fromRGBAHue(img, nil) }

// fromRGBAHue is fromRGBA, with img's hue plane into hue (nil: none).
func (g *grayImage) fromRGBAHue(img *image.RGBA, hue *huePlane) (hist [256]int) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	g.resize(w, h)
	rgbaToGray(img.Pix, img.Stride, w, h, g.pix, &hist, hue)
	return hist
}

// invert turns g into its negative.
func (g *grayImage) invert() {
	for i, v := range g.pix {
		g.pix[i] = 255 - v
	}
}

// rotate returns g turned clockwise by deg, a multiple of 90, as a new
// image; turning by 0 returns g itself.
func (g *grayImage) rotate(deg int) *grayImage {
	w, h := g.w, g.h
	switch (deg%360 + 360) % 360 {
	case 90:
		// Clockwise: the bottom-left pixel becomes the top-left one.
		out := newGrayImage(h, w)
		for y := range h {
			row := g.pix[y*w : (y+1)*w]
			col := h - 1 - y
			for x, v := range row {
				out.pix[x*h+col] = v
			}
		}
		return out
	case 180:
		out := newGrayImage(w, h)
		n := len(g.pix)
		for i, v := range g.pix {
			out.pix[n-1-i] = v
		}
		return out
	case 270:
		out := newGrayImage(h, w)
		for y := range h {
			row := g.pix[y*w : (y+1)*w]
			for x, v := range row {
				out.pix[(w-1-x)*h+y] = v
			}
		}
		return out
	}
	return g
}

// otsu returns the threshold that best splits hist into two classes
// (Otsu's method): the pixels below it are ink.
func otsu(hist [256]int) int {
	var total, sum float64
	for v, n := range hist {
		total += float64(n)
		sum += float64(v * n)
	}
	if total == 0 {
		return 128
	}
	var wB, sumB, best float64
	thresh := 128
	for v, n := range hist {
		wB += float64(n)
		if wB == 0 {
			continue
		}
		wF := total - wB
		if wF == 0 {
			break
		}
		sumB += float64(v * n)
		mB, mF := sumB/wB, (sum-sumB)/wF
		if between := wB * wF * (mB - mF) * (mB - mF); between > best {
			best, thresh = between, v+1
		}
	}
	return thresh
}

// darkShare returns the share of pixels darker than thresh.
func darkShare(hist [256]int, thresh int) float64 {
	var dark, total int
	for v, n := range hist {
		total += n
		if v < thresh {
			dark += n
		}
	}
	if total == 0 {
		return 0
	}
	return float64(dark) / float64(total)
}

// downscale returns g reduced by an integer factor, each output pixel the
// mean of a factor×factor block, for the cheap tests that do not need the
// full resolution.
func (g *grayImage) downscale(factor int) *grayImage {
	if factor <= 1 {
		return g
	}
	w, h := g.w/factor, g.h/factor
	out := newGrayImage(w, h)
	sums := make([]int, w)
	area := factor * factor
	for oy := range h {
		clear(sums)
		for dy := range factor {
			row := g.pix[(oy*factor+dy)*g.w:]
			for ox := range w {
				s := 0
				for _, v := range row[ox*factor : ox*factor+factor] {
					s += int(v)
				}
				sums[ox] += s
			}
		}
		dst := out.pix[oy*w : (oy+1)*w]
		for ox, s := range sums {
			dst[ox] = uint8(s / area)
		}
	}
	return out
}

// sample returns an image of three horizontal bands of g, taken about a
// sixth, a half and five sixths of the way through its inked rows and
// stacked with paper (the gray value paper) between them, that together hold about share of the
// rows with ink (darker than thresh) on them; sampled is the share they
// really hold. Bands start and end on rows without ink where there are
// any nearby, so that they cut no line of text. It returns nil when g has
// no ink, or when the bands would hold more than twice share: a page with
// that little text is read whole.
func (g *grayImage) sample(thresh int, paper uint8, share float64) (s *grayImage, sampled float64) {
	// A row with fewer ink pixels than this is blank: specks do not count.
	minInk := max(2, g.w/500)
	inked := make([]bool, g.h)
	total := 0
	for y := range g.h {
		n := 0
		for _, v := range g.pix[y*g.w : (y+1)*g.w] {
			if int(v) < thresh {
				n++
			}
		}
		if n >= minInk {
			inked[y] = true
			total++
		}
	}
	if total == 0 {
		return nil, 0
	}
	// rowAt returns the row at which the count of inked rows reaches n.
	rowAt := func(n int) int {
		seen := 0
		for y, in := range inked {
			if in {
				seen++
				if seen >= n {
					return y
				}
			}
		}
		return g.h - 1
	}
	// A band looks this far for a blank row to start or end on.
	reach := max(1, g.h/50)
	perBand := max(1, int(share*float64(total)/3))
	type band struct{ y0, y1 int }
	var bands []band
	taken := 0
	next := 0 // bands do not overlap
	for _, at := range []float64{1.0 / 6, 1.0 / 2, 5.0 / 6} {
		y0 := max(next, rowAt(int(at*float64(total))))
		for d := 0; d < reach && y0-d > next; d++ {
			if !inked[y0-d] {
				y0 -= d
				break
			}
		}
		y1, n := y0, 0
		for ; y1 < g.h && n < perBand; y1++ {
			if inked[y1] {
				n++
			}
		}
		for d := 0; d < reach && y1 < g.h && inked[y1]; d++ {
			y1++
			n++
		}
		if y1 <= y0 {
			continue
		}
		bands = append(bands, band{y0, y1})
		taken += n
		next = y1
	}
	sampled = float64(taken) / float64(total)
	if sampled > 2*share {
		return nil, sampled
	}
	gap := max(8, g.h/100)
	h := 0
	for _, b := range bands {
		h += b.y1 - b.y0 + gap
	}
	s = newGrayImage(g.w, h)
	// White gaps on grey paper would skew Tesseract's threshold, as
	// deskewing's corners did (see paperLevel).
	for i := range s.pix {
		s.pix[i] = paper
	}
	at := 0
	for _, b := range bands {
		at += gap / 2
		copy(s.pix[at*g.w:], g.pix[b.y0*g.w:b.y1*g.w])
		at += b.y1 - b.y0 + gap - gap/2
	}
	return s, sampled
}

// bmpHeader is a BMP's file header, info header and 256-entry gray
// palette: what comes before an 8-bit gray BMP's pixels.
const bmpHeader = 14 + 40 + 256*4

// bmp returns the image as an 8-bit gray BMP marked as dpi, built in dst
// when it is large enough (the caller keeps it for the next page).
// Tesseract takes a page through gosseract as an image file that
// Leptonica parses: a PGM's pixels are read one number at a time, about
// 0.1 s of CPU on a 300 dpi Letter page, while a BMP's rows are copied
// whole, some 50 times faster. The rows go bottom-up, each padded to four
// bytes, as the format wants.
func (g *grayImage) bmp(dpi int, dst []byte) []byte {
	stride := (g.w + 3) &^ 3
	size := bmpHeader + stride*g.h
	b := grow(dst, size)
	clear(b[:bmpHeader])
	le := binary.LittleEndian
	ppm := uint32(float64(dpi)/0.0254 + 0.5) // pixels per metre
	copy(b, "BM")
	le.PutUint32(b[2:], uint32(size))
	le.PutUint32(b[10:], bmpHeader)
	le.PutUint32(b[14:], 40) // BITMAPINFOHEADER
	le.PutUint32(b[18:], uint32(g.w))
	le.PutUint32(b[22:], uint32(g.h))
	le.PutUint16(b[26:], 1) // planes
	le.PutUint16(b[28:], 8) // bits a pixel
	le.PutUint32(b[34:], uint32(stride*g.h))
	le.PutUint32(b[38:], ppm)
	le.PutUint32(b[42:], ppm)
	le.PutUint32(b[46:], 256) // palette entries
	for i := range 256 {
		p := b[54+4*i:]
		p[0], p[1], p[2] = byte(i), byte(i), byte(i)
	}
	for y := range g.h {
		row := b[bmpHeader+(g.h-1-y)*stride:]
		n := copy(row, g.pix[y*g.w:(y+1)*g.w])
		clear(row[n:stride])
	}
	return b
}
