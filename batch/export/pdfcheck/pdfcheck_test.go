package pdfcheck

import (
	"image"
	"image/color"
	"slices"
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

// TestOnInkWindow: a word's ink level is that of the print within one
// line height of its box, on every side: a very faint word is on ink
// alone, and off ink beside bold print in any of the four margins, which
// sets the level below it; bold print further away does not.
func TestOnInkWindow(t *testing.T) {
	t.Parallel()
	box := [4]float64{18, 38, 82, 54} // a line height of 16
	for _, tc := range []struct {
		name string
		bar  image.Rectangle // bold print beside the word
		on   bool
	}{
		{"alone", image.Rectangle{}, true},
		{"bold print to the left", image.Rect(4, 40, 16, 52), false},
		{"bold print to the right", image.Rect(84, 40, 96, 52), false},
		{"bold print above", image.Rect(20, 24, 32, 36), false},
		{"bold print below", image.Rect(20, 56, 32, 68), false},
		{"bold print two line heights away", image.Rect(120, 40, 132, 52), true},
	} {
		// Strokes 28 levels under the paper, in x 20..80, y 40..52.
		img := strokedPaper(200, 100, image.Rect(20, 40, 80, 52), 222)
		for y := tc.bar.Min.Y; y < tc.bar.Max.Y; y++ {
			for x := tc.bar.Min.X; x < tc.bar.Max.X; x++ {
				img.SetGray(x, y, color.Gray{10})
			}
		}
		if got := OnInkBox(img, box); got != tc.on {
			t.Errorf("%s: on ink %v, want %v", tc.name, got, tc.on)
		}
	}
	// A word on the page's edge: its window is cut by the page.
	img := image.NewGray(image.Rect(0, 0, 64, 16))
	for i := range img.Pix {
		img.Pix[i] = 250
		if x := i % 64; x%3 != 2 && i/64 >= 2 {
			img.Pix[i] = 20
		}
	}
	if !OnInkBox(img, [4]float64{0, 0, 64, 16}) {
		t.Error("a word filling the page is not on ink")
	}
}

// TestOnInkEdges: a box's fractional edges reach into the pixel they end
// in, so a word box narrower than a pixel still covers it.
func TestOnInkEdges(t *testing.T) {
	t.Parallel()
	img := image.NewGray(image.Rect(0, 0, 3, 3))
	for i := range img.Pix {
		img.Pix[i] = 250
	}
	img.SetGray(1, 1, color.Gray{20})
	if !OnInkBox(img, [4]float64{1, 1, 1.5, 1.5}) {
		t.Error("a box within the one dark pixel is not on ink")
	}
}

// TestInkLevelPercentile: the ink of a window is the level more than 2%
// of its pixels are at or under, so a window exactly 2% black takes its
// level from the paper: 16 under it.
func TestInkLevelPercentile(t *testing.T) {
	t.Parallel()
	img := image.NewGray(image.Rect(0, 0, 30, 30)) // the window of the box below
	for i := range img.Pix {
		img.Pix[i] = 250
	}
	for i := range 18 { // 2% of 900
		img.Pix[i] = 0
	}
	if got := inkLevel(img, image.Rect(10, 10, 20, 20)); got != 250-MinInkContrast {
		t.Errorf("inkLevel = %d, want %d", got, 250-MinInkContrast)
	}
	img.Pix[18] = 0
	if got := inkLevel(img, image.Rect(10, 10, 20, 20)); got != 250-MaxInkContrast {
		t.Errorf("one more black pixel: inkLevel = %d, want %d", got, 250-MaxInkContrast)
	}
}

// TestOnInkContrast: a word must be darker than the paper by more than
// MinInkContrast to be on ink: exactly that much is a scan's grain.
func TestOnInkContrast(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ink uint8
		on  bool
	}{{250 - MinInkContrast, false}, {250 - MinInkContrast - 1, true}} {
		img := strokedPaper(100, 60, image.Rect(20, 20, 80, 32), tc.ink)
		if got := OnInkBox(img, [4]float64{18, 18, 82, 34}); got != tc.on {
			t.Errorf("strokes at %d on paper at 250: on ink %v, want %v", tc.ink, got, tc.on)
		}
	}
}

// TestOnInkShare: a box is on ink when at least 3% of it is dark and the
// dark pixels reach into at least half its rows and half its columns.
func TestOnInkShare(t *testing.T) {
	t.Parallel()
	scattered := func(n int) func(x, y int) bool {
		dark := map[[2]int]bool{}
		for i := range n { // every column, every row
			dark[[2]int{(i * 7) % 100, i / 3}] = true
		}
		return func(x, y int) bool { return dark[[2]int{x, y}] }
	}
	for _, tc := range []struct {
		name string
		dark func(x, y int) bool // in the box's own coordinates
		on   bool
	}{
		{"3% scattered", scattered(300), true},
		{"under 3% scattered", scattered(299), false},
		{"half the rows", func(x, y int) bool { return y < 50 }, true},
		{"under half the rows", func(x, y int) bool { return y < 49 }, false},
		{"half the columns", func(x, y int) bool { return x < 50 }, true},
		{"under half the columns", func(x, y int) bool { return x < 49 }, false},
	} {
		img := image.NewGray(image.Rect(0, 0, 300, 300))
		for y := range 300 {
			for x := range 300 {
				img.SetGray(x, y, color.Gray{250})
				if x >= 100 && x < 200 && y >= 100 && y < 200 && tc.dark(x-100, y-100) {
					img.SetGray(x, y, color.Gray{20})
				}
			}
		}
		if got := OnInkBox(img, [4]float64{100, 100, 200, 200}); got != tc.on {
			t.Errorf("%s: on ink %v, want %v", tc.name, got, tc.on)
		}
	}
}

// TestBBoxWords: the words of pdftotext -bbox's page, scaled; the bridge
// over a wide gap (a word of two spaces) is no word.
func TestBBoxWords(t *testing.T) {
	page := `<word xMin="10" yMin="20" xMax="30" yMax="28.5">Heart</word>
<word xMin="33" yMin="20" xMax="80" yMax="28.5">  </word>
<word xMin="83.5" yMin="20" xMax="90" yMax="28.5">72</word>`
	got := bboxWords(page, 2)
	want := [][4]float64{{20, 40, 60, 57}, {167, 40, 180, 57}}
	if !slices.Equal(got, want) {
		t.Errorf("bboxWords = %v, want %v", got, want)
	}
}

// strokedPaper is a w by h page of paper at 250 with vertical strokes of
// ink in r: two columns in three.
func strokedPaper(w, h int, r image.Rectangle, ink uint8) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 250
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if x%3 != 2 {
				img.SetGray(x, y, color.Gray{ink})
			}
		}
	}
	return img
}
