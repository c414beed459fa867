package view

import (
	"image"
	"image/color"
	"testing"
)

// TestTurn: a page turned clockwise puts its top-left corner where a
// clockwise turn puts it, and swaps the sides for 90 and 270.
func TestTurn(t *testing.T) {
	t.Parallel()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	mark := color.RGBA{255, 0, 0, 255}
	img.SetRGBA(0, 0, mark) // the top-left corner
	for _, c := range []struct {
		deg, w, h, x, y int
	}{
		{0, 3, 2, 0, 0},
		{90, 2, 3, 1, 0},
		{180, 3, 2, 2, 1},
		{270, 2, 3, 0, 2},
	} {
		out := turn(img, c.deg)
		if out.Rect.Dx() != c.w || out.Rect.Dy() != c.h || out.RGBAAt(c.x, c.y) != mark {
			t.Errorf("turned %d: %v with the corner at %v, want %dx%d with it at %d,%d", c.deg, out.Rect, out.RGBAAt(c.x, c.y), c.w, c.h, c.x, c.y)
		}
	}
}
