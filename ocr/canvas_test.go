package ocr

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCanvasMatrix checks the maps the page steps record against the
// images they make: a dark square's centre, carried by the recorded map,
// lands on the square's centre in the turned or deskewed image.
func TestCanvasMatrix(t *testing.T) {
	const w, h = 301, 200
	tests := []struct {
		name string
		skew float64 // a deskew rotation, or
		turn int     // a quarter turn
	}{
		{"skew +7", 7, 0},
		{"skew -12.5", -12.5, 0},
		{"skew +1", 1, 0},
		{"turn 90", 0, 90},
		{"turn 180", 0, 180},
		{"turn 270", 0, 270},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := newGrayImage(w, h)
			for i := range img.pix {
				img.pix[i] = 255
			}
			for y := 40; y < 48; y++ {
				for x := 60; x < 68; x++ {
					img.pix[y*w+x] = 0
				}
			}
			var out *grayImage
			var m [6]float64
			if tc.turn != 0 {
				out, m = img.rotate(tc.turn), turnMatrix(w, h, tc.turn)
			} else {
				var err error
				if out, err = rotateGray(img, tc.skew, 255); err != nil {
					t.Fatal(err)
				}
				m = skewMatrix(w, h, out.w, out.h, tc.skew)
			}
			var sx, sy, n float64
			for y := range out.h {
				for x := range out.w {
					if v := out.pix[y*out.w+x]; v < 128 {
						sx, sy, n = sx+float64(x)+0.5, sy+float64(y)+0.5, n+1
					}
				}
			}
			gx, gy := sx/n, sy/n
			x, y := 64.0, 44.0
			px, py := m[0]*x+m[2]*y+m[4], m[1]*x+m[3]*y+m[5]
			if d := math.Hypot(px-gx, py-gy); d > 0.75 {
				t.Errorf("square's centre mapped to (%.2f, %.2f), found at (%.2f, %.2f): %.2f px off", px, py, gx, gy, d)
			}
		})
	}
}

// TestRotateByNothing turns random images of widths that are and are not
// multiples of four by 0 degrees: the pixels must come back as they
// went, through both copies between Go's rows and Leptonica's words
// (ocr_gray_pix and ocr_pix_gray, which move four pixels a word).
func TestRotateByNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 4))
	for _, w := range []int{1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 201} {
		g := newGrayImage(w, 1+r.IntN(9))
		for i := range g.pix {
			g.pix[i] = uint8(r.IntN(256))
		}
		out, err := rotateGray(g, 0, 255)
		if err != nil {
			t.Fatal(err)
		}
		if out.w != g.w || out.h != g.h || string(out.pix) != string(g.pix) {
			t.Errorf("%d×%d turned by 0 degrees: %d×%d, pixels equal %v", g.w, g.h, out.w, out.h, string(out.pix) == string(g.pix))
		}
	}
}
