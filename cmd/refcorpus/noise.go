package main

import (
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
		out = image.NewGray(clean.Bounds())
		fill(out, paperLevel)
		rotate(out, clean, ps.Skew)
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

// rotate draws src onto dst turned by deg degrees about the page centre,
// with bilinear sampling; dst pixels that come from outside src keep their
// value. The arithmetic is fixed-point (16 fractional bits) so the result
// does not depend on how a platform rounds or fuses float operations.
func rotate(dst, src *image.Gray, deg float64) {
	sin, cos := math.Sincos(deg * math.Pi / 180)
	const one = 1 << 16
	c, s := int64(math.Round(cos*one)), int64(math.Round(sin*one))
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	for y := range h {
		dy2 := int64(2*y + 1 - h) // twice the offset of the pixel centre from the page centre
		row := dst.Pix[y*dst.Stride:]
		for x := range w {
			dx2 := int64(2*x + 1 - w)
			// The inverse turn: where in src this pixel's centre came from,
			// in 1/65536 px, measured from pixel centres. Image y grows
			// downwards, so a counter-clockwise turn on paper has these signs.
			u := (c*dx2-s*dy2)/2 + int64(w)*one/2 - one/2
			v := (s*dx2+c*dy2)/2 + int64(h)*one/2 - one/2
			x0, y0 := int(u>>16), int(v>>16)
			if x0 < 0 || y0 < 0 || x0+1 >= w || y0+1 >= h {
				continue
			}
			fx, fy := u&(one-1), v&(one-1)
			i := y0*src.Stride + x0
			p00, p10 := int64(src.Pix[i]), int64(src.Pix[i+1])
			p01, p11 := int64(src.Pix[i+src.Stride]), int64(src.Pix[i+src.Stride+1])
			top := p00*(one-fx) + p10*fx
			bot := p01*(one-fx) + p11*fx
			row[x] = uint8((top*(one-fy) + bot*fy + 1<<31) >> 32)
		}
	}
}

// fill sets every pixel of img to v.
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
	turn := func(src *image.Gray) *image.Gray {
		out := image.NewGray(src.Bounds())
		fill(out, 255)
		rotate(out, src, deg)
		return out
	}
	ink = turn(ink)
	if hasStamp {
		stampPlane = turn(stampPlane)
	}
	return ink, stampPlane
}

func fill(img *image.Gray, v uint8) {
	for i := range img.Pix {
		img.Pix[i] = v
	}
}
