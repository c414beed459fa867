package ocr

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestDespeckle(t *testing.T) {
	const paper = 230
	// Marks of ink on grey paper, each a square of the given side.
	marks := []struct {
		name       string
		x, y, side int
		gone       bool
	}{
		{name: "one pixel", x: 10, y: 10, side: 1, gone: true},
		{name: "2×2", x: 30, y: 10, side: 2, gone: true},
		{name: "4×4, at the limit", x: 50, y: 10, side: 4, gone: true},
		{name: "5×5, a period", x: 70, y: 10, side: 5},
		{name: "12×12, print", x: 10, y: 40, side: 12},
	}
	g := newGrayImage(100, 80)
	for i := range g.pix {
		g.pix[i] = paper
	}
	for _, m := range marks {
		for dy := range m.side {
			for dx := range m.side {
				g.pix[(m.y+dy)*g.w+m.x+dx] = 20
			}
		}
	}
	// A speck touching print is part of it, and stays.
	g.pix[52*g.w+22] = 20

	painted := despeckle(g, 128, 4, 4, paper)
	if want := 1 + 4 + 16; painted != want {
		t.Errorf("painted %d pixels, want %d", painted, want)
	}
	for _, m := range marks {
		t.Run(m.name, func(t *testing.T) {
			got := g.pix[m.y*g.w+m.x]
			if m.gone && got != paper {
				t.Errorf("left a mark of side %d (pixel %d)", m.side, got)
			}
			if !m.gone && got == paper {
				t.Errorf("painted over a mark of side %d", m.side)
			}
		})
	}
	if g.pix[52*g.w+22] == paper {
		t.Errorf("painted over a pixel touching print")
	}
}

// TestSpeckledPageReads: a photocopy's speckle (one or two scanner pixels)
// is painted over before recognition, and the page reads as well as a
// clean one; with the step switched off it reads worse.
// TestDespeckleLonePixels checks despeckle pixel by pixel against a
// reference on random images whose widths are and are not multiples of
// 32, Leptonica's word: with 1×1 specks, exactly the pixels darker than
// the threshold with no such pixel among their eight neighbours are
// painted; with specks as large as the image, every pixel darker than it.
// This holds the bit packing of the binarised image (ocr_range_pix) and
// the painting's pass over it, which both go by words of 32 pixels.
func TestDespeckleLonePixels(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 33))
	for _, w := range []int{1, 7, 31, 32, 33, 64, 95, 200} {
		for _, thresh := range []int{0, 1, 100, 255, 256} {
			h := 1 + r.IntN(40)
			g := newGrayImage(w, h)
			for i := range g.pix {
				switch r.IntN(10) {
				case 0:
					g.pix[i] = 0
				case 1:
					g.pix[i] = 255
				case 2, 3:
					g.pix[i] = uint8(r.IntN(256))
				default:
					g.pix[i] = 230
				}
			}
			dark := func(x, y int) bool {
				return x >= 0 && y >= 0 && x < w && y < h && int(g.pix[y*w+x]) < thresh
			}
			lone, all := make([]uint8, len(g.pix)), make([]uint8, len(g.pix))
			copy(lone, g.pix)
			copy(all, g.pix)
			wantLone, wantAll := 0, 0
			for y := range h {
				for x := range w {
					if !dark(x, y) {
						continue
					}
					all[y*w+x] = 7
					wantAll++
					alone := true
					for dy := -1; dy <= 1; dy++ {
						for dx := -1; dx <= 1; dx++ {
							if (dx != 0 || dy != 0) && dark(x+dx, y+dy) {
								alone = false
							}
						}
					}
					if alone {
						lone[y*w+x] = 7
						wantLone++
					}
				}
			}
			for _, c := range []struct {
				name  string
				size  int
				want  []uint8
				wantN int
			}{{"1×1", 1, lone, wantLone}, {"whole", max(w, h), all, wantAll}} {
				got := newGrayImage(w, h)
				copy(got.pix, g.pix)
				n := despeckle(got, thresh, c.size, c.size, 7)
				if n != c.wantN || string(got.pix) != string(c.want) {
					t.Errorf("%d×%d, threshold %d, %s specks: painted %d pixels, want %d; pixels equal %v",
						w, h, thresh, c.name, n, c.wantN, string(got.pix) == string(c.want))
				}
			}
		}
	}
}

func TestSpeckledPageReads(t *testing.T) {
	// Half a Letter page and half the speckle of a whole one: a speckled
	// page reads slowly without the step, and half of one shows the
	// difference as well.
	const dpi = 150
	lines := letterLines()[:16] // as many as half a page holds
	page := toGray(textPage(t, lines, 8.5, 5.5, dpi))
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		x, y, s := r.IntN(page.w-2), r.IntN(page.h-2), 1+r.IntN(2)
		for dy := range s {
			for dx := range s {
				page.pix[(y+dy)*page.w+x+dx] = 0
			}
		}
	}
	pdf := imagePDF(t, fromGray(page), dpi)
	read := func(noDespeckle bool) (credible int, p PageResult) {
		cfg := testConfig(t, dpi)
		cfg.Policy.NoDespeckle = noDespeckle
		p = readPages(t, startWorker(t, cfg), pdf)[0]
		_, credible, _ = pageStats(p)
		return credible, p
	}
	with, page1 := read(false)
	without, page2 := read(true)
	text := page1.Text
	// The page records what was painted over, for an auditor.
	if page1.Despeckled == 0 || page2.Despeckled != 0 {
		t.Errorf("despeckled pixels recorded: %d with the step, %d without; want some, then none", page1.Despeckled, page2.Despeckled)
	}
	clean := 0
	for _, l := range lines {
		clean += len(strings.Fields(l))
	}
	t.Logf("credible words: %d despeckled, %d not, of %d words", with, without, clean)
	if with <= without {
		t.Errorf("despeckling did not help: %d credible words with it, %d without", with, without)
	}
	if !strings.Contains(normalised(text), "P-123456") {
		t.Errorf("participant ID not in the despeckled text")
	}
}
