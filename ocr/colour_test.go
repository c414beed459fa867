package ocr

import (
	"image"
	"image/color"
	"testing"
)

// TestHuePlane checks rb_hue's plane on pixels of known colour: a block
// keeps its most coloured pixel's hue and chroma; gray, black and pale
// pixels are no colour; strong pixels are counted.
func TestHuePlane(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 8, 2))
	for x := range 8 {
		for y := range 2 {
			img.Set(x, y, color.RGBA{250, 250, 250, 255}) // paper
		}
	}
	img.Set(0, 0, color.RGBA{200, 30, 30, 255})   // red stamp ink
	img.Set(2, 1, color.RGBA{38, 56, 156, 255})   // blue ballpoint
	img.Set(3, 1, color.RGBA{60, 70, 120, 255})   // paler blue: the block keeps the stronger
	img.Set(4, 0, color.RGBA{20, 20, 20, 255})    // black print
	img.Set(6, 0, color.RGBA{250, 240, 200, 255}) // tinted paper, lighter than ink
	var g grayImage
	hue := huePlane{step: 2}
	g.fromRGBAHue(img, &hue)
	if hue.w != 4 || hue.h != 1 {
		t.Fatalf("plane is %d×%d, want 4×1", hue.w, hue.h)
	}
	deg := func(i int) int { return (int(hue.pix[2*i]) - 1) * 360 / 254 }
	// Against the paper: each channel scaled by 255/250.
	if hue.pix[0] == 0 || deg(0) > 5 || hue.pix[1] != 173 {
		t.Errorf("red block: hue %d° chroma %d, want 0° 173", deg(0), hue.pix[1])
	}
	if hue.pix[2] == 0 || deg(1) < 225 || deg(1) > 235 || hue.pix[3] != 121 {
		t.Errorf("blue block: hue %d° chroma %d, want about 230° and 121", deg(1), hue.pix[3])
	}
	for _, i := range []int{2, 3} {
		if hue.pix[2*i] != 0 || hue.pix[2*i+1] != 0 {
			t.Errorf("block %d (black print, tinted paper) has colour %v", i, hue.pix[2*i:2*i+2])
		}
	}
	if hue.coloured != 2 {
		t.Errorf("%d strong pixels counted, want 2", hue.coloured)
	}
}

// TestHuePlanePaper: on yellowed paper, black print's edges, blended
// with the paper, take its tint and are no colour; blue ink on it is.
func TestHuePlanePaper(t *testing.T) {
	paper := color.RGBA{245, 215, 160, 255}
	img := image.NewRGBA(image.Rect(0, 0, 16, 4))
	for x := range 16 {
		for y := range 4 {
			img.Set(x, y, paper)
		}
	}
	img.Set(0, 0, color.RGBA{122, 107, 80, 255}) // half black, half paper
	img.Set(1, 1, color.RGBA{40, 35, 26, 255})   // black print on it
	img.Set(4, 0, color.RGBA{38, 56, 156, 255})  // blue ballpoint
	var g grayImage
	hue := huePlane{step: 4}
	g.fromRGBAHue(img, &hue)
	if hue.pix[0] != 0 || hue.pix[1] != 0 {
		t.Errorf("print's edge on yellowed paper has colour %v", hue.pix[0:2])
	}
	if deg := (int(hue.pix[2]) - 1) * 360 / 254; hue.pix[2] == 0 || deg < 210 || deg > 240 || hue.pix[3] < 100 {
		t.Errorf("blue ink on yellowed paper: hue %d° chroma %d, want blue", deg, hue.pix[3])
	}
}

// TestHueClusters checks that inks are told apart by empty bins between
// their hues, round the circle, and that an ink too small is none.
func TestHueClusters(t *testing.T) {
	var bins [hueBins]int
	bins[35], bins[0] = 400, 300  // red, across 0°
	bins[22], bins[23] = 500, 200 // blue
	bins[28] = 600                // violet
	bins[12] = 10                 // a few green specks
	ids := hueClusters(bins, 100)
	if ids[35] == 0 || ids[35] != ids[0] {
		t.Errorf("red's two bins across 0° are inks %d and %d, want one", ids[35], ids[0])
	}
	if ids[22] == 0 || ids[22] != ids[23] || ids[22] == ids[28] || ids[22] == ids[0] || ids[28] == 0 || ids[28] == ids[0] {
		t.Errorf("blue, violet and red are inks %d/%d, %d and %d: want three", ids[22], ids[23], ids[28], ids[0])
	}
	if ids[12] != 0 {
		t.Errorf("specks made ink %d", ids[12])
	}
}

// TestLabelInk checks the labelling against Leptonica's components.
func TestLabelInk(t *testing.T) {
	const w, h = 40, 30
	mask := make([]byte, w*h)
	set := func(x0, y0, x1, y1 int) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				mask[y*w+x] = 1
			}
		}
	}
	set(2, 2, 10, 4)    // a bar
	set(9, 4, 11, 12)   // joined to it at a corner (8-connected)
	set(20, 5, 30, 6)   // another
	set(25, 20, 26, 29) // a third
	set(0, 29, 1, 30)   // a pixel in the corner
	labels, n := labelInk(mask, w, h, make([]int32, w*h))
	if want := len(components(mask, w, h)); n != want {
		t.Fatalf("%d components labelled, Leptonica finds %d", n, want)
	}
	if labels[2*w+2] != labels[11*w+10] || labels[2*w+2] == labels[5*w+20] || labels[0] != -1 {
		t.Errorf("labels: bar %d, its joined stroke %d, the other %d, paper %d", labels[2*w+2], labels[11*w+10], labels[5*w+20], labels[0])
	}
}

// TestBridge checks that a short run of print across a coloured stroke
// is given to it, and that a long one or one between two inks is not.
func TestBridge(t *testing.T) {
	row := func(s string) []byte {
		b := make([]byte, len(s))
		for i, c := range s {
			b[i] = map[rune]byte{'.': 0, 'k': 1, 'r': 2, 'b': 3}[c]
		}
		return b
	}
	for _, c := range []struct{ in, want string }{
		{"rrkkrr", "rrrrrr"},
		{"rrkkkkkkrr", "rrkkkkkkrr"}, // wider than the gap
		{"rrkkbb", "rrkkbb"},         // between two inks
		{"rr..rr", "rr..rr"},         // paper is no bridge
		{"kkrrkk", "kkrrkk"},
	} {
		cls := row(c.in)
		bridge(cls, len(cls), 1, 1, 3)
		if want := row(c.want); string(cls) != string(want) {
			t.Errorf("bridge(%s) = %v, want %s", c.in, cls, c.want)
		}
	}
}

// colourPage is a 300 dpi Letter page of black print with a blue
// signature's strokes and a red stamp's frame on it, in RGBA as the
// render gives it.
func colourPage(b *testing.B, dpi int) *image.RGBA {
	g, _ := printPage(b, dpi)
	img := image.NewRGBA(image.Rect(0, 0, g.w, g.h))
	for i, v := range g.pix {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = v, v, v, 255
	}
	for x := dpi; x < 4*dpi; x++ { // a blue stroke over the print
		for y := 0; y < 4; y++ {
			img.Set(x, 9*dpi+x/20+y, color.RGBA{38, 56, 156, 255})
		}
	}
	for x := 5 * dpi; x < 7*dpi; x++ { // a red frame's edges
		for y := 0; y < 5; y++ {
			img.Set(x, 2*dpi+y, color.RGBA{200, 30, 30, 255})
			img.Set(x, 3*dpi+y, color.RGBA{200, 30, 30, 255})
		}
	}
	return img
}

// BenchmarkColour measures what ink colour adds to a page: the gray
// conversion with and without the hue plane, and the handwriting
// step's look at the page's ink with and without telling inks apart
// (make bench's whole-step figures aside).
func BenchmarkColour(b *testing.B) {
	const dpi = 300
	img := colourPage(b, dpi)
	var g grayImage
	hue := huePlane{step: inkStep(dpi)}
	b.Run("gray", func(b *testing.B) {
		for b.Loop() {
			g.fromRGBA(img)
		}
	})
	b.Run("gray+hue", func(b *testing.B) {
		for b.Loop() {
			g.fromRGBAHue(img, &hue)
		}
	})
	g.fromRGBAHue(img, &hue)
	b.Run("look", func(b *testing.B) {
		for b.Loop() {
			handsIn(newInkLook(&g, dpi), nil)
		}
	})
	b.Run("look+inks", func(b *testing.B) {
		for b.Loop() {
			handsIn(newInkLook(&g, dpi), &colourLook{plane: &hue, back: identityMatrix})
		}
	})
}
