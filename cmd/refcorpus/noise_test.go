package main

import (
	"bytes"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"testing"
)

// rotateByPixel is rotate as first written, one pixel at a time, onto a
// dst filled beforehand: the reference rotated's chunks and stepped
// arithmetic must match bit for bit.
func rotateByPixel(dst, src *image.Gray, deg float64) {
	sin, cos := math.Sincos(deg * math.Pi / 180)
	const one = 1 << 16
	c, s := int64(math.Round(cos*one)), int64(math.Round(sin*one))
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	for y := range h {
		dy2 := int64(2*y + 1 - h)
		row := dst.Pix[y*dst.Stride:]
		for x := range w {
			dx2 := int64(2*x + 1 - w)
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

// TestRotateMatchesByPixel: the committed corpora pin rotated's output, but
// only at their own sizes and angles; odd and even sizes, both signs of
// angle, large turns and rows of several spans are checked here against
// the per-pixel reference.
func TestRotateMatchesByPixel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []image.Point{{1, 1}, {2, 2}, {3, 7}, {64, 48}, {101, 77}, {160, 211}, {600, 50}} {
		src := image.NewGray(image.Rect(0, 0, size.X, size.Y))
		// Ink in a chequer of blocks on blank paper, so that some chunks
		// and spans are blank and some are not.
		for i := range src.Pix {
			x, y := i%size.X, i/size.X
			if (x/40+y/20)%3 == 0 && r.IntN(4) == 0 {
				src.Pix[i] = uint8(r.IntN(256))
			} else {
				src.Pix[i] = 255
			}
		}
		for _, deg := range []float64{0.1, -0.1, 0.7, -1.3, 2.9, -3, 17.5, -45, 90, 179.9, -123.4} {
			t.Run(fmt.Sprintf("%dx%d/%g", size.X, size.Y, deg), func(t *testing.T) {
				want := image.NewGray(src.Bounds())
				fill(want, 7)
				rotateByPixel(want, src, deg)
				if got := rotated(src, deg, 7); !bytes.Equal(want.Pix, got.Pix) {
					t.Error("rotated differs from the per-pixel reference")
				}
			})
		}
	}
}
