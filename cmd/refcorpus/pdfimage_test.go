package main

import (
	"bytes"
	"fmt"
	"image"
	"math/rand/v2"
	"testing"
)

// TestPackBitsByPixel checks packBits, which packs eight pixels at a time,
// against a pixel-by-pixel packing, on widths around a multiple of eight
// and on a sub-image.
func TestPackBitsByPixel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, w := range []int{1, 7, 8, 9, 15, 16, 17, 61} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			full := image.NewGray(image.Rect(0, 0, w+3, 5))
			for i := range full.Pix {
				full.Pix[i] = uint8(r.IntN(256))
			}
			img := full.SubImage(image.Rect(2, 1, w+2, 5)).(*image.Gray)
			rowBytes := (w + 7) / 8
			want := make([]byte, rowBytes*4)
			for y := range 4 {
				for x := range w {
					if img.GrayAt(2+x, 1+y).Y >= 128 {
						want[y*rowBytes+x/8] |= 0x80 >> (x % 8)
					}
				}
			}
			if got := packBits(img); !bytes.Equal(got, want) {
				t.Errorf("packBits = %x, want %x", got, want)
			}
		})
	}
}
