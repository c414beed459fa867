package ocr

import (
	"math"
	"strings"
	"testing"
)

// fade turns a black-on-white page into a faded scan: grey paper at paper
// and ink no darker than ink, the way the evaluation corpus's
// low_contrast pages look.
func fade(g *grayImage, ink, paper uint8) {
	for i, v := range g.pix {
		g.pix[i] = ink + uint8(int(v)*int(paper-ink)/255)
	}
}

// TestFadedSkewedPage is the regression test for faded pages that read
// nothing once deskewed: the white corners the rotation brought in made
// Tesseract's global threshold take the grey paper for ink. The page is
// 14 lines of the Letter page's text, a third of its recognition; the
// corners are a larger share of a short, wide page than of a tall one.
func TestFadedSkewedPage(t *testing.T) {
	const dpi = 150
	page := toGray(textPage(t, letterLines()[:14], 8.5, 4, dpi))
	fade(page, 150, 208)
	// A scanner's skew brings in more paper, not white.
	skewed, err := rotateGray(page, 2.5, 208)
	if err != nil {
		t.Fatalf("skewing the test page: %v", err)
	}
	w := startWorker(t, testConfig(t, dpi))
	p := readPages(t, w, imagePDF(t, fromGray(skewed), dpi))[0]
	words, credible, mean := pageStats(p)
	t.Logf("skew %.2f: %d words, %d credible, mean %.1f", p.SkewDegrees, words, credible, mean)
	if math.Abs(math.Abs(p.SkewDegrees)-2.5) > 0.5 {
		t.Errorf("skew %.2f degrees, want ±2.5", p.SkewDegrees)
	}
	if !strings.Contains(normalised(p.Text), "P-123456") {
		t.Errorf("participant ID not in the text")
	}
	if p.Inverted {
		t.Errorf("inverted a faded black-on-white page")
	}
}

func TestPaperLevel(t *testing.T) {
	faded := [256]int{150: 100, 170: 50, 208: 5000, 230: 20}
	tests := []struct {
		name     string
		hist     [256]int
		thresh   int
		inverted bool
		want     uint8
	}{
		{name: "white paper", hist: [256]int{0: 100, 255: 5000}, thresh: 128, want: 255},
		{name: "faded grey paper", hist: faded, thresh: 189, want: 208},
		{name: "white on black, inverted", hist: [256]int{20: 5000, 240: 300}, thresh: 128, inverted: true, want: 235},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := paperLevel(tt.hist, tt.thresh, tt.inverted); got != tt.want {
				t.Errorf("paperLevel = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRotateGrayBringsInFill(t *testing.T) {
	g := newGrayImage(200, 100)
	for i := range g.pix {
		g.pix[i] = 208
	}
	r, err := rotateGray(g, 5, 208)
	if err != nil {
		t.Fatalf("rotating: %v", err)
	}
	if r.w <= g.w || r.h <= g.h {
		t.Errorf("canvas %d×%d, want larger than %d×%d", r.w, r.h, g.w, g.h)
	}
	for i, v := range r.pix {
		if v < 206 || v > 210 {
			t.Fatalf("pixel (%d,%d) is %d, want the fill 208 everywhere", i%r.w, i/r.w, v)
		}
	}
}
