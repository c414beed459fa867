package main

import (
	"bytes"
	"image"
	"math"
	"math/rand/v2"
)

// degrade turns a clean page into a plausible scan of it: paper and ink
// tone, skew, sparse noise, specks, and for bitonal pages a threshold.
// Noise is sparse rather than per-pixel because dense noise would make
// every page incompressible.
func degrade(r *rand.Rand, clean *image.Gray, ps pageStyle, dpi int) *image.Gray {
	paperLevel, ink := ps.Paper, ps.Ink
	if ps.Bitonal {
		paperLevel, ink = 255, 0
	}
	if paperLevel != 255 || ink != 0 {
		var lut [256]uint8
		for v := range lut {
			lut[v] = uint8(int(ink) + (int(paperLevel)-int(ink))*v/255)
		}
		for i, v := range clean.Pix {
			clean.Pix[i] = lut[v]
		}
	}
	out := clean
	if ps.Skew != 0 {
		out = rotated(clean, ps.Skew, paperLevel)
	}
	sparseNoise(r, out, ps.NoiseShare)
	b := out.Bounds()
	w, h := b.Dx(), b.Dy()
	radius := max(1, dpi/150)
	for range ps.Specks {
		cx, cy := r.IntN(w), r.IntN(h)
		rr := radius + r.IntN(radius+1)
		for y := max(0, cy-rr); y < min(h, cy+rr); y++ {
			for x := max(0, cx-rr); x < min(w, cx+rr); x++ {
				if (x-cx)*(x-cx)+(y-cy)*(y-cy) <= rr*rr {
					out.Pix[y*out.Stride+x] = ink + uint8(r.IntN(40))
				}
			}
		}
	}
	if ps.Bitonal {
		threshold(out, ps.Threshold)
	}
	return out
}

// rotated returns src turned by deg degrees about the page centre, with
// bilinear sampling; pixels that come from outside src are bg. The
// arithmetic is fixed-point (16 fractional bits) so the result does not
// depend on how a platform rounds or fuses float operations.
//
// It is the corpus's costliest step, so it works along each row in spans,
// and splits a span into chunks when the span is not blank: a span or
// chunk whose source is blank paper is filled at once, the other chunks
// are sampled pixel by pixel (see sampleChunk). Every pixel is written
// once, so the new image needs no filling first.
func rotated(src *image.Gray, deg float64, bg uint8) *image.Gray {
	sin, cos := math.Sincos(deg * math.Pi / 180)
	t := inverseTurn{c: int64(math.Round(cos * fixedOne)), s: int64(math.Round(sin * fixedOne))}
	t.w, t.h = src.Bounds().Dx(), src.Bounds().Dy()
	dst := image.NewGray(src.Bounds())
	for y := range t.h {
		row := dst.Pix[y*dst.Stride : y*dst.Stride+t.w]
		for x1 := 0; x1 < t.w; x1 += rotateSpan {
			if x2 := min(t.w, x1+rotateSpan); !t.fillBlank(row, src, x1, x2, y) {
				for c1 := x1; c1 < x2; c1 += rotateChunk {
					if c2 := min(x2, c1+rotateChunk); !t.fillBlank(row, src, c1, c2, y) {
						t.sampleChunk(row[c1:c2], src, c1, y, bg)
					}
				}
			}
		}
	}
	return dst
}

// fillBlank fills pixels x1 to x2 (exclusive) of row y, and reports true,
// when they all sample one value of src (see blank).
func (t inverseTurn) fillBlank(row []uint8, src *image.Gray, x1, x2, y int) bool {
	run := t.blank(src, x1, x2-1, y)
	// The run is of one value: copy it until the chunk is full.
	for x := x1; run != nil && x < x2; {
		x += copy(row[x:x2], run)
	}
	return run != nil
}

// fixedOne is 1 in rotated's fixed point.
const fixedOne = 1 << 16

// rotateChunk is how many pixels of a row rotated takes at a time: short
// enough that most chunks of a text page fall on blank paper, long enough
// that checking for it pays.
const rotateChunk = 32

// rotateSpan is how many pixels rotated first tries as one chunk: the
// margins and the space between lines are blank over whole spans, which
// then cost one check instead of several.
const rotateSpan = 256

// inverseTurn maps a pixel of rotated's output to where its centre came
// from in the w×h source: for a pixel at twice-offsets (dx2, dy2) from the
// page centre, u = (c*dx2-s*dy2)/2 + (w-1)/2 and v = (s*dx2+c*dy2)/2 +
// (h-1)/2, in 1/65536 px measured from pixel centres. Image y grows
// downwards, so a counter-clockwise turn on paper has these signs.
type inverseTurn struct {
	c, s int64
	w, h int
}

// numerators are the numerators of u and v for pixel (x, y), before their
// halving.
func (t inverseTurn) numerators(x, y int) (nu, nv int64) {
	dx2, dy2 := int64(2*x+1-t.w), int64(2*y+1-t.h)
	return t.c*dx2 - t.s*dy2, t.s*dx2 + t.c*dy2
}

// source is the whole source pixel at the top left of the four that
// pixel (x, y) samples.
func (t inverseTurn) source(x, y int) (x0, y0 int) {
	nu, nv := t.numerators(x, y)
	u := nu/2 + int64(t.w)*fixedOne/2 - fixedOne/2
	v := nv/2 + int64(t.h)*fixedOne/2 - fixedOne/2
	return int(u >> 16), int(v >> 16)
}

// blank returns a run of src, at least two pixels long and of one value,
// when pixels x1 to x2 of row y all sample that value, or else nil. u and
// v are monotonic along a row, so the pixels the chunk samples lie in the
// box its two ends span; when the box is inside src and uniform, every
// pixel's four samples are that value, and weights that sum to exactly
// one give it back.
func (t inverseTurn) blank(src *image.Gray, x1, x2, y int) []uint8 {
	ax, ay := t.source(x1, y)
	bx, by := t.source(x2, y)
	left, right := min(ax, bx), max(ax, bx)+1
	top, bottom := min(ay, by), max(ay, by)+1
	if left < 0 || top < 0 || right >= t.w || bottom >= t.h {
		return nil
	}
	first := src.Pix[top*src.Stride+left : top*src.Stride+right+1]
	// A run is uniform when it equals itself shifted by one.
	if !bytes.Equal(first[1:], first[:len(first)-1]) {
		return nil
	}
	for y := top + 1; y <= bottom; y++ {
		if !bytes.Equal(src.Pix[y*src.Stride+left:y*src.Stride+right+1], first) {
			return nil
		}
	}
	return first
}

// sampleChunk samples the pixels of row, which start at pixel (x1, y), one
// by one; those whose source is outside src are bg. It steps u and v
// instead of computing them: along a row dx2 grows by 2, so each
// numerator grows by 2c or 2s and keeps its parity. Its floor half then
// grows by exactly c or s, and Go's division, which truncates, is that
// floor half plus one when the numerator is odd and negative.
func (t inverseTurn) sampleChunk(row []uint8, src *image.Gray, x1, y int, bg uint8) {
	nu, nv := t.numerators(x1, y)
	hu, hv := nu>>1, nv>>1 // floor halves
	ou, ov := nu&1, nv&1   // odd numerators, all along the row
	cu, cv := int64(t.w)*fixedOne/2-fixedOne/2, int64(t.h)*fixedOne/2-fixedOne/2
	stride := src.Stride
	for x := range row {
		u := hu + (hu>>63)&ou + cu
		v := hv + (hv>>63)&ov + cv
		hu, hv = hu+t.c, hv+t.s
		x0, y0 := int(u>>16), int(v>>16)
		if uint(x0) >= uint(t.w-1) || uint(y0) >= uint(t.h-1) {
			row[x] = bg
			continue
		}
		i := y0*stride + x0
		p := src.Pix[i : i+stride+2]
		p00, p10, p01, p11 := int64(p[0]), int64(p[1]), int64(p[stride]), int64(p[stride+1])
		fx, fy := u&(fixedOne-1), v&(fixedOne-1)
		// p00*(fixedOne-fx) + p10*fx, with one multiplication.
		top := p00<<16 + (p10-p00)*fx
		bot := p01<<16 + (p11-p01)*fx
		row[x] = uint8((top<<16 + (bot-top)*fy + 1<<31) >> 32)
	}
}

// sparseNoise nudges a share of img's pixels, picked at random, by up to
// ±60 gray levels: a scanner's sensor noise. The sum of two uniform draws
// is a rough bell in integers.
func sparseNoise(r *rand.Rand, img *image.Gray, share float64) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	for range int(share * float64(w*h)) {
		i := r.IntN(w) + r.IntN(h)*img.Stride
		v := int(img.Pix[i]) + r.IntN(61) - 30 + r.IntN(61) - 30
		img.Pix[i] = uint8(max(0, min(255, v)))
	}
}

// threshold makes img 1-bit in place: white from t up, black below.
func threshold(img *image.Gray, t uint8) {
	for i, v := range img.Pix {
		if v >= t {
			img.Pix[i] = 255
		} else {
			img.Pix[i] = 0
		}
	}
}

// skewPlanes returns the ink plane, and the stamp plane when there is
// one, turned by deg degrees on white, as a scanner feeds a page askew.
func skewPlanes(ink, stampPlane *image.Gray, hasStamp bool, deg float64) (*image.Gray, *image.Gray) {
	ink = rotated(ink, deg, 255)
	if hasStamp {
		stampPlane = rotated(stampPlane, deg, 255)
	}
	return ink, stampPlane
}

// fill sets every pixel of img to v. Every page and plane starts with it,
// so it doubles what is filled with copy, which moves whole words, instead
// of setting byte after byte.
func fill(img *image.Gray, v uint8) {
	if len(img.Pix) == 0 {
		return
	}
	img.Pix[0] = v
	for n := 1; n < len(img.Pix); n *= 2 {
		copy(img.Pix[n:], img.Pix[:n])
	}
}
