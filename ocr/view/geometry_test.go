package view

import (
	"image"
	"math"
	"testing"
)

// TestOnCanvas: a dark square of the render lands where the canvas map
// takes its centre, scaled, for a quarter turn and for a 2° deskew on an
// enlarged canvas (the page steps' maps).
func TestOnCanvas(t *testing.T) {
	const rw, rh = 200, 300
	rad := 2 * math.Pi / 180
	sin, cos := math.Sin(rad), math.Cos(rad)
	cx, cy := 110.5, 160.5 // about the centre of a 220×320 canvas
	dx, dy := 10-cx, 10-cy
	cases := []struct {
		name string
		g    Geometry
	}{
		{"turned 90", Geometry{DPI: 100, Matrix: [6]float64{0, 1, -1, 0, rh, 0}, Width: rh, Height: rw}},
		{"deskewed 2°", Geometry{DPI: 100, Matrix: [6]float64{cos, sin, -sin, cos, cx + cos*dx - sin*dy, cy + sin*dx + cos*dy}, Width: 220, Height: 320}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.g.Check(); err != nil {
				t.Fatal(err)
			}
			for _, k := range []float64{1, 0.5} {
				// The render at k times the DPI, white with a dark square
				// around (150, 60) in the render's pixels at DPI.
				w, h := int(rw*k), int(rh*k)
				r := image.NewRGBA(image.Rect(0, 0, w, h))
				for i := range r.Pix {
					r.Pix[i] = 255
				}
				for y := int(55 * k); y < int(65*k); y++ {
					for x := int(145 * k); x < int(155*k); x++ {
						o := r.PixOffset(x, y)
						r.Pix[o], r.Pix[o+1], r.Pix[o+2] = 0, 0, 0
					}
				}
				out := onCanvas(r, tc.g, k)
				m := tc.g.Matrix
				wx, wy := (m[0]*150+m[2]*60+m[4])*k, (m[1]*150+m[3]*60+m[5])*k
				var sx, sy, n float64
				for y := range out.Rect.Dy() {
					for x := range out.Rect.Dx() {
						if out.Pix[out.PixOffset(x, y)] < 128 {
							sx, sy, n = sx+float64(x)+0.5, sy+float64(y)+0.5, n+1
						}
					}
				}
				if n == 0 || math.Hypot(sx/n-wx, sy/n-wy) > 1 {
					t.Errorf("k %.1f: the square's centre is at %.1f,%.1f (%v pixels); want %.1f,%.1f", k, sx/n, sy/n, n, wx, wy)
				}
			}
		})
	}
	if (Geometry{DPI: 100, Matrix: [6]float64{2, 0, 0, 2, 0, 0}, Width: 10, Height: 10}).Check() == nil {
		t.Error("a map that doubles the page was taken")
	}
}
