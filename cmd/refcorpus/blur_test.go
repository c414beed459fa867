package main

import (
	"bytes"
	"fmt"
	"image"
	"math/rand/v2"
	"testing"
)

// boxBlurByColumn is boxBlur as first written, a column at a time with a
// clamped index per pixel: the reference the faster passes must match.
func boxBlurByColumn(img *image.Gray, radius int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	n := 2*radius + 1
	line := make([]int, max(w, h))
	pass := func(count, length int, at func(i, j int) *uint8) {
		for i := range count {
			for j := range length {
				line[j] = int(*at(i, j))
			}
			sum := 0
			for j := -radius; j <= radius; j++ {
				sum += line[max(0, min(length-1, j))]
			}
			for j := range length {
				*at(i, j) = uint8((sum + n/2) / n)
				sum += line[min(length-1, j+radius+1)] - line[max(0, j-radius)]
			}
		}
	}
	pass(h, w, func(y, x int) *uint8 { return &img.Pix[y*img.Stride+x] })
	pass(w, h, func(x, y int) *uint8 { return &img.Pix[y*img.Stride+x] })
}

// TestBoxBlurMatchesByColumn checks boxBlur against the reference on
// sizes smaller and larger than its box, and on a sub-image whose stride
// is wider than its rows.
func TestBoxBlurMatchesByColumn(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, size := range []image.Point{{1, 1}, {1, 9}, {9, 1}, {3, 4}, {50, 37}, {128, 200}} {
		for _, radius := range []int{1, 2, 3, 6} {
			t.Run(fmt.Sprintf("%dx%d/r%d", size.X, size.Y, radius), func(t *testing.T) {
				want := image.NewGray(image.Rect(0, 0, size.X+5, size.Y))
				for i := range want.Pix {
					want.Pix[i] = uint8(r.IntN(256))
				}
				got := image.NewGray(want.Bounds())
				copy(got.Pix, want.Pix)
				boxBlurByColumn(want.SubImage(image.Rect(0, 0, size.X, size.Y)).(*image.Gray), radius)
				boxBlur(got.SubImage(image.Rect(0, 0, size.X, size.Y)).(*image.Gray), radius)
				if !bytes.Equal(want.Pix, got.Pix) {
					t.Error("boxBlur differs from the reference")
				}
			})
		}
	}
}
