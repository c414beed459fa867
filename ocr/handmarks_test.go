package ocr

import (
	"math"
	"testing"
)

// TestBaselineWanderDescenders: a line of print whose every fourth
// letter descends stands on its line: the descenders are left out of the
// fit, not only of the mean. Fitted with them, the line sat below the
// other letters, which then strayed from it by an eighth of their height,
// as a hand's do, and a letterhead with a "J", a "p" and a "y" was taken
// for writing.
func TestBaselineWanderDescenders(t *testing.T) {
	var print, hand [][4]int
	for i := range 20 {
		bottom := 100
		if i%4 == 3 {
			bottom = 108 // a descender
		}
		print = append(print, [4]int{20 * i, bottom - 20, 20*i + 15, bottom})
		hand = append(hand, [4]int{20 * i, 80 + []int{0, 3, -2, 4, -3}[i%5], 20*i + 15, 100 + []int{0, 3, -2, 4, -3}[i%5]})
	}
	if _, w := baselineWanders(print); w/20 > 0.01 {
		t.Errorf("print with descenders wanders %.3f of its height, want none", w/20)
	}
	if _, w := baselineWanders(hand); w/20 < capsWander {
		t.Errorf("a hand's letters, each on its own baseline, wander %.3f, want %v or more", w/20, capsWander)
	}
}

// drawLine draws a line on img from (x0, y0) to (x1, y1), width pixels
// thick, leaving out every gap-th run of gapLen pixels (a rule the scan
// broke); gap 0 draws it whole.
func drawLine(img *grayImage, x0, y0, x1, y1 float64, width, gap, gapLen int, ink uint8) {
	n := int(math.Hypot(x1-x0, y1-y0))
	for i := range n {
		if gap > 0 && i%gap < gapLen {
			continue
		}
		x, y := x0+(x1-x0)*float64(i)/float64(n), y0+(y1-y0)*float64(i)/float64(n)
		for d := range width {
			px, py := int(x), int(y)+d
			if px >= 0 && py >= 0 && px < img.w && py < img.h {
				img.pix[py*img.w+px] = ink
			}
		}
	}
}

// TestRuledFrame: a stamp's ruled frame, turned or level, thin and broken
// by the scan, is found round its letters; the same letters with no
// frame, or with one rule under them (a signature's line, an underlined
// note), are not in one.
func TestRuledFrame(t *testing.T) {
	const dpi = 100
	for _, tc := range []struct {
		name  string
		turn  float64 // degrees
		frame bool
		right float64 // where the frame's right side stands, along the rows
		sides bool    // whether the frame has its short sides
		under bool
		want  bool
	}{
		{"level ruled box, broken", 0, true, 140, true, false, true},
		{"ruled box turned 12°", 12, true, 140, true, false, true},
		{"ruled box turned -22°", -22, true, 140, true, false, true},
		{"ruled box turned 7°, between the angles looked at", 7, true, 140, true, false, true},
		{"a wide box, the letters at one end", 4, true, 270, true, false, true},
		{"a box run off the page", -6, true, 400, true, false, true},
		{"rules above and below, no sides", 0, true, 140, false, false, false},
		{"letters alone", 8, false, 0, false, false, false},
		{"letters over a rule", 0, false, 0, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := newGrayImage(600, 400)
			for i := range img.pix {
				img.pix[i] = 235
			}
			sin, cos := math.Sincos(tc.turn * math.Pi / 180)
			cx, cy := 300.0, 200.0
			at := func(u, v float64) (float64, float64) { return cx + u*cos - v*sin, cy + u*sin + v*cos }
			line := func(u0, v0, u1, v1 float64) {
				x0, y0 := at(u0, v0)
				x1, y1 := at(u1, v1)
				drawLine(img, x0, y0, x1, y1, 2, 23, 3, 120)
			}
			box := [4]int{math.MaxInt, math.MaxInt, 0, 0}
			var letters handLine
			for row, v := range []float64{-30, 0, 30} { // three rows of capitals
				for k := range 10 - 3*row {
					u := -110 + float64(k)*22 + float64(row)*33
					x, y := at(u, v)
					letters.comps = append(letters.comps, [4]int{int(x) - 6, int(y) - 8, int(x) + 7, int(y) + 9})
					for dv := -8.0; dv <= 8; dv++ {
						for du := -6.0; du <= 6; du += 6 { // three strokes a letter
							x, y := at(u+du, v+dv)
							img.pix[int(y)*img.w+int(x)] = 120
							box = [4]int{min(box[0], int(x)), min(box[1], int(y)), max(box[2], int(x)+1), max(box[3], int(y)+1)}
						}
					}
				}
			}
			if tc.frame {
				for _, v := range []float64{-48, -15, 15, 48} { // the frame's sides and two inner rules
					line(-140, v, tc.right, v)
				}
				if tc.sides {
					line(-140, -48, -140, 48)
					line(tc.right, -48, tc.right, 48)
				}
			}
			if tc.under {
				line(-140, 48, 140, 48)
			}
			look := &handLook{f: 1, wdpi: dpi, small: img}
			if got := look.ruledFrame(handRegion{box: box, lines: []handLine{letters}}); got != tc.want {
				t.Errorf("ruledFrame = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUnreadNearIgnoresLinesAndPrint: under a signature, the unread ink of
// its flourish (a line many times wider than tall) and a capital of its
// printed name (a third taller than the print's median glyph, which
// lower-case letters set) are not the rest of a note; a word-sized piece
// of the same ink, unread, is.
func TestUnreadNearIgnoresLinesAndPrint(t *testing.T) {
	const w, h = 600, 300
	sig := [4]int{100, 100, 400, 140}
	word := func(text string, conf float64, x int) Word {
		return Word{Text: text, Conf: conf, Box: [4]int{x, 40, x + 50, 64}}
	}
	// A line of print above it, read credibly but for "relief." at 45.
	printed := printLines([]Word{word("Thank", 96, 60), word("you", 96, 120), word("relief.", 45, 180), word("The", 96, 240)}, 100)
	stamp := [4]int{300, 30, 420, 90}
	for _, tc := range []struct {
		name  string
		piece [4]int
		want  bool
	}{
		{"a flourish under it", [4]int{60, 150, 420, 162}, false},
		{"a capital of the printed name", [4]int{80, 150, 97, 168}, false},
		{"a written word", [4]int{150, 150, 210, 178}, true},
		{"an ascender of a word of print read under the cut", [4]int{190, 42, 196, 64}, false},
		{"a stamp's ring", [4]int{320, 60, 350, 88}, false},
		{"a written word above it", [4]int{150, 70, 210, 98}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			look := &handLook{f: 1, wdpi: 100, small: &grayImage{w: w, h: h}, mask: make([]byte, w*h), printH: 14}
			b := tc.piece
			for y := b[1]; y < b[3]; y++ {
				for x := b[0]; x < b[2]; x++ {
					look.mask[y*w+x] = 1
				}
			}
			look.lines = []handLine{{box: b, comps: [][4]int{b}, inks: []int{(b[2] - b[0]) * (b[3] - b[1])}, ink: 1}}
			if got := look.unreadNear(sig, 1, [][4]int{stamp}, printed, make([]byte, w*h)); got != tc.want {
				t.Errorf("unreadNear = %v, want %v", got, tc.want)
			}
		})
	}
}
