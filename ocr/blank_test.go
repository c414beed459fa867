package ocr

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// specked returns a blank wIn×hIn inch page of gray paper at dpi with n
// specks of up to 3×3 pixels of gray ink scattered over it.
func specked(wIn, hIn float64, dpi int, paper, ink uint8, n int) *grayImage {
	g := newGrayImage(int(wIn*float64(dpi)), int(hIn*float64(dpi)))
	for i := range g.pix {
		g.pix[i] = paper
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range n {
		x, y, s := r.IntN(g.w-3), r.IntN(g.h-3), 1+r.IntN(3)
		for dy := range s {
			for dx := range s {
				g.pix[(y+dy)*g.w+x+dx] = ink
			}
		}
	}
	return g
}

func TestIsBlank(t *testing.T) {
	const dpi = 150
	tests := []struct {
		name string
		img  *grayImage
		want bool
	}{
		{name: "white, no specks", img: specked(8.5, 11, dpi, 255, 0, 0), want: true},
		{name: "white with specks", img: specked(8.5, 11, dpi, 255, 0, 60), want: true},
		{name: "grey paper with specks", img: specked(8.5, 11, dpi, 230, 120, 60), want: true},
		{name: "one word", img: toGray(textPage(t, []string{"Yes"}, 8.5, 11, dpi))},
		{name: "a letter", img: toGray(textPage(t, letterLines(), 8.5, 11, dpi))},
		{name: "a faded letter", img: func() *grayImage {
			g := toGray(textPage(t, letterLines(), 8.5, 11, dpi))
			fade(g, 150, 208)
			return g
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hist [256]int
			for _, v := range tt.img.pix {
				hist[v]++
			}
			p := &prepared{img: tt.img, dpi: dpi, thresh: otsu(hist)}
			p.paper = paperLevel(hist, p.thresh, false)
			if got := isBlank(p, hist); got != tt.want {
				t.Errorf("isBlank = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBlankPageIsNotRecognised(t *testing.T) {
	const dpi = 150
	w := startWorker(t, testConfig(t, dpi))
	blank := specked(8.5, 11, dpi, 240, 40, 80)
	p := readPages(t, w, imagePDF(t, fromGray(blank), dpi))[0]
	if !p.Blank || p.Text != "" || len(p.Words) != 0 {
		t.Errorf("blank page: Blank %v, %d words, want Blank and no words", p.Blank, len(p.Words))
	}
	p = readPages(t, w, participantPDF(t))[0]
	if found := strings.Contains(normalised(p.Text), "P-123456"); p.Blank || !found {
		t.Errorf("a page with one line: Blank %v, participant ID found %v", p.Blank, found)
	}
}
