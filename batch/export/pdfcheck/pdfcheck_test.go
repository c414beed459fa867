package pdfcheck

import (
	"image"
	"image/color"
	"testing"
)

// TestOnInk: a word's box is on ink when it covers the strokes, whether
// the ink is black on white, faded grey on grey paper, or faint grey print
// on a page of black print, and off ink when it lies on bare (noisy)
// paper or half a line away.
func TestOnInk(t *testing.T) {
	tests := []struct {
		name       string
		paper, ink uint8
	}{
		{"black on white", 250, 20},
		{"faded on grey paper", 170, 130},
		{"faint print beside black", 250, 205},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := image.NewGray(image.Rect(0, 0, 200, 100))
			for i := range img.Pix {
				// Paper grain: up to 12 levels darker.
				img.Pix[i] = tt.paper - uint8(i*7919%13)
			}
			// Black print elsewhere on the page.
			for y := 80; y < 92; y++ {
				for x := 120; x < 190; x++ {
					img.SetGray(x, y, color.Gray{10})
				}
			}
			// A "word": strokes two pixels wide, one apart, in x 20..80,
			// y 40..52.
			for y := 40; y < 52; y++ {
				for x := 20; x < 80; x++ {
					if x%3 != 2 {
						img.SetGray(x, y, color.Gray{tt.ink})
					}
				}
			}
			for _, c := range []struct {
				box [4]float64
				on  bool
			}{
				{[4]float64{18, 38, 82, 54}, true},
				{[4]float64{100, 38, 160, 54}, false},    // bare paper
				{[4]float64{18, 46, 82, 70}, false},      // half a line low
				{[4]float64{18, 38, 82 + 60, 54}, false}, // twice as wide
			} {
				if got := OnInkBox(img, c.box); got != c.on {
					t.Errorf("box %v: on ink %v, want %v", c.box, got, c.on)
				}
			}
		})
	}
}
