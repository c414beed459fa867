package ocr

import (
	"math"
	"testing"
)

// TestSignedOff: a single row of writing is a signature where a sign-off
// puts it (under a valediction, after a label, over or just above a
// printed name), and not when print or other writing stands between, or
// when the "name" is the letterhead.
func TestSignedOff(t *testing.T) {
	t.Parallel()
	const dpi, pageH = 100, 1100
	line := func(y, x0, x1 int, conf float64, texts ...string) printLine {
		l := printLine{box: [4]int{x0, y, x1, y + 15}}
		for _, s := range texts {
			l.words = append(l.words, Word{Text: s, Conf: conf, Box: l.box})
		}
		return l
	}
	sig := [4]int{100, 500, 350, 560} // 2.5 by 0.6 inches
	body := line(440, 100, 750, 95, "Please", "see", "within", "the", "routine", "waiting", "time.")
	for _, tc := range []struct {
		name   string
		lines  []printLine
		others [][4]int
		labels bool
		want   bool
	}{
		{"under a valediction", []printLine{line(470, 100, 260, 95, "Yours", "sincerely,")}, nil, false, true},
		{"print between valediction and writing", []printLine{line(400, 100, 260, 95, "Kind", "regards,"), body}, nil, false, false},
		{"after a label", []printLine{line(530, 20, 90, 95, "Signed:")}, nil, false, true},
		{"over the printed name", []printLine{line(550, 120, 300, 95, "Dr", "A.", "Smith")}, nil, false, true},
		{"just above the printed name", []printLine{line(600, 120, 300, 95, "Dr", "A.", "Smith")}, nil, false, true},
		{"a name far below", []printLine{line(700, 120, 300, 95, "Dr", "A.", "Smith")}, nil, false, false},
		{"writing between it and the name", []printLine{line(600, 120, 300, 95, "Dr", "A.", "Smith")}, [][4]int{{100, 565, 350, 590}}, false, false},
		{"a lower-case line is no name", []printLine{line(580, 120, 300, 95, "blood", "pressure")}, nil, false, false},
		{"the letterhead", []printLine{{box: [4]int{100, 200, 400, 215}, words: []Word{{Text: "Birchmoor", Conf: 95}, {Text: "Clinic", Conf: 95}}}}, nil, false, false},
		{"a name read again, under the writing", []printLine{line(545, 120, 300, 95, "Dr", "A.", "Smith")}, nil, true, true},
		{"a row of capitals read again whole", []printLine{{box: [4]int{110, 505, 340, 555}, words: []Word{{Text: "FAST", Conf: 90}, {Text: "TRACK", Conf: 90}}}}, nil, true, false},
		{"over a short line read in part", []printLine{{box: [4]int{101, 540, 260, 556}, words: []Word{{Text: "Dr", Conf: 40}, {Text: "J.", Conf: 50}, {Text: "Belshy", Conf: 79}}}}, nil, false, true},
		{"a hand's capitals read again, low in it", []printLine{line(545, 120, 300, 95, "CALL", "PATIENT")}, nil, true, false},
		{"above a name read in part", []printLine{{box: [4]int{101, 580, 260, 596}, words: []Word{{Text: "DIN.", Conf: 50}, {Text: "Telworth", Conf: 93}}}}, nil, false, true},
		{"above capitals read in part", []printLine{{box: [4]int{101, 580, 260, 596}, words: []Word{{Text: "RING", Conf: 50}, {Text: "PATIENT", Conf: 93}}}}, nil, false, false},
		{"over its own word read", []printLine{{box: [4]int{101, 540, 160, 556}, words: []Word{{Text: "on", Conf: 95}}}}, nil, false, false},
		{"a name read again, in its upper half", []printLine{{box: [4]int{101, 502, 260, 518}, words: []Word{{Text: "Dr", Conf: 90}, {Text: "Belshy", Conf: 79}}}}, nil, true, false},
		{"a valediction, labels only", []printLine{line(470, 100, 260, 95, "Yours", "faithfully,")}, nil, true, true},
		{"a valediction read as junk", []printLine{line(470, 100, 260, 40, "Yours", "sincerely,")}, nil, false, false},
	} {
		b := sig
		if tc.name == "the letterhead" {
			b = [4]int{100, 220, 350, 280}
		}
		if got := signedOff(b, tc.others, tc.lines, dpi, pageH, tc.labels); got != tc.want {
			t.Errorf("%s: signedOff = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCentreLine: capitals of one size along a line turned 15 degrees lie
// on it and are even; letters of a hand, each word at its own size and
// height, do not.
func TestCentreLine(t *testing.T) {
	t.Parallel()
	var stamp, hand [][4]int
	sin, cos := math.Sincos(15 * math.Pi / 180)
	for i := range 10 {
		cx, cy := 100+float64(i)*30*cos, 300-float64(i)*30*sin
		w := 14 + float64(i%3)*6 // glyphs of their own widths
		h := 24*cos + w*sin      // the box of a turned glyph
		stamp = append(stamp, [4]int{int(cx - w/2), int(cy - h/2), int(cx + w/2), int(cy + h/2)})
		dy, size := []int{0, 7, -5, 9, -8}[i%5], []int{24, 28, 21, 26, 30}[i%5]
		hand = append(hand, [4]int{100 + 30*i, 300 + dy - size/2, 116 + 30*i, 300 + dy + size/2})
	}
	if wander, even, angle := centreLine(stamp); wander > stampWander || !even || math.Abs(math.Abs(angle)-15) > 1 {
		t.Errorf("turned capitals: wander %.3f even %v angle %.1f, want straight, even, 15 degrees", wander, even, angle)
	}
	if wander, _, _ := centreLine(hand); wander <= stampWander {
		t.Errorf("a hand's letters: wander %.3f, want more than %v", wander, stampWander)
	}
}

// TestEnclosed: a box's frame encloses its inside; a U open at the top
// encloses nothing.
func TestEnclosed(t *testing.T) {
	t.Parallel()
	const w, h = 40, 30
	frame, cup := make([]byte, w*h), make([]byte, w*h)
	for y := range h {
		for x := range w {
			edge := x < 2 || x >= w-2 || y < 2 || y >= h-2
			if edge {
				frame[y*w+x] = 1
			}
			if edge && y >= 2 {
				cup[y*w+x] = 1
			}
		}
	}
	b := [4]int{0, 0, w, h}
	if got, want := enclosed(frame, 0, w, b), (w-4)*(h-4); got != want {
		t.Errorf("frame: enclosed %d, want %d", got, want)
	}
	if got := enclosed(cup, 0, w, b); got != 0 {
		t.Errorf("open cup: enclosed %d, want 0", got)
	}
}

// TestTurnedChains: two rows of capitals turned 10 degrees over a level
// line of print are a stamp's; one turned row, rows turned apart, or
// rows of a hand are not.
func TestTurnedChains(t *testing.T) {
	t.Parallel()
	row := func(x0, y0, deg float64, n int, wobble bool) handLine {
		sin, cos := math.Sincos(deg * math.Pi / 180)
		var l handLine
		for i := range n {
			cx, cy := x0+float64(i)*30*cos, y0-float64(i)*30*sin
			w, size := 14+float64(i%3)*6, 24.0
			if wobble {
				cy += []float64{0, 7, -5, 9, -8}[i%5]
				size = []float64{24, 28, 21, 26, 30}[i%5]
			}
			h := size*cos + w*math.Abs(sin)
			l.comps = append(l.comps, [4]int{int(cx - w/2), int(cy - h/2), int(cx + w/2), int(cy + h/2)})
		}
		return l
	}
	print := row(100, 400, 0, 10, false)
	for _, c := range []struct {
		name  string
		lines []handLine
		want  bool
	}{
		{"two turned rows over print", []handLine{row(100, 300, 10, 8, false), row(110, 340, 10, 9, false), print}, true},
		{"one turned row over print", []handLine{row(100, 300, 10, 8, false), print}, false},
		{"rows turned apart", []handLine{row(100, 300, 10, 8, false), row(110, 340, -10, 9, false)}, false},
		{"a hand's rows", []handLine{row(100, 300, 10, 8, true), row(110, 340, 10, 9, true)}, false},
		{"more print than stamp", []handLine{row(100, 300, 10, 5, false), row(110, 340, 10, 5, false), print, row(100, 450, 0, 10, false)}, false},
	} {
		if got := turnedChains(c.lines); got != c.want {
			t.Errorf("%s: turnedChains = %v, want %v", c.name, got, c.want)
		}
	}
}
