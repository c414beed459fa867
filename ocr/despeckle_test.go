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
