package export

import (
	"math"
	"testing"

	"github.com/refbatch/refbatch/ocr/result"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestDisplayedToUser: the displayed page's corners land on the visible
// area's corners as a viewer turns the page by /Rotate.
func TestDisplayedToUser(t *testing.T) {
	vis := [4]float64{10, 20, 110, 220} // 100 wide, 200 high, offset
	tests := []struct {
		rotate int
		// user-space corner shown at the displayed top left and top right
		topLeft, topRight [2]float64
	}{
		{0, [2]float64{10, 220}, [2]float64{110, 220}},
		{90, [2]float64{10, 20}, [2]float64{10, 220}},
		{180, [2]float64{110, 20}, [2]float64{10, 20}},
		{270, [2]float64{110, 220}, [2]float64{110, 20}},
	}
	for _, tc := range tests {
		f := PageFrame{Visible: vis, Rotate: tc.rotate, Width: 100, Height: 200}
		if tc.rotate%180 != 0 {
			f.Width, f.Height = 200, 100
		}
		m := DisplayedToUser(f)
		x, y := m.Apply(0, 0)
		if !near(x, tc.topLeft[0]) || !near(y, tc.topLeft[1]) {
			t.Errorf("/Rotate %d: top left → (%g, %g), want %v", tc.rotate, x, y, tc.topLeft)
		}
		x, y = m.Apply(f.Width, 0)
		if !near(x, tc.topRight[0]) || !near(y, tc.topRight[1]) {
			t.Errorf("/Rotate %d: top right → (%g, %g), want %v", tc.rotate, x, y, tc.topRight)
		}
		// The whole displayed page covers the visible area.
		b := boundsOf(m, [4]int{0, 0, int(f.Width), int(f.Height)})
		if !near(b.X0, vis[0]) || !near(b.Y0, vis[1]) || !near(b.X1, vis[2]) || !near(b.Y1, vis[3]) {
			t.Errorf("/Rotate %d: page → %+v, want %v", tc.rotate, b, vis)
		}
	}
}

// TestCanvasRoundTrip: synthetic page steps (deskew, turn, deskew again)
// make a canvas map; points carried to the canvas and back with
// CanvasToDisplayed come back where they started, whether the artifact
// recorded the map or it is rebuilt from Rotation and SkewDegrees.
func TestCanvasRoundTrip(t *testing.T) {
	f := PageFrame{Width: 612, Height: 792, Visible: [4]float64{0, 0, 612, 792}}
	const dpi = 150
	tests := []struct {
		name          string
		first, second float64
		turn          int
		exactRebuild  bool // the split of the skew is known
	}{
		{"upright", 0, 0, 0, true},
		{"skewed", 4.25, 0, 0, true},
		{"skewed back", -11.5, 0, 0, true},
		{"turned 90", 0, 0, 90, true},
		{"turned 180 and skewed", 2.5, 0, 180, true},
		{"turned 270", 0, 0, 270, true},
		{"skewed then turned 90", 3, 0, 90, true},
		{"turned 270 then skewed", 0, -6, 270, true},
		{"skewed, turned, skewed", 2, 1.5, 90, false},
	}
	w, h := renderSize(f.Width, f.Height, dpi)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, cw, ch := stepMatrix(w, h, tc.first, tc.turn, tc.second)
			p := result.PageResult{DPI: dpi, Width: cw, Height: ch, Rotation: tc.turn,
				SkewDegrees: math.Round((tc.first+tc.second)*100) / 100,
				Canvas:      &result.Canvas{RenderWidth: w, RenderHeight: h, Matrix: m}}
			legacy := p
			legacy.Canvas = nil
			for _, pt := range [][2]float64{{0, 0}, {306, 396}, {600, 20}, {17.5, 780}} {
				// Displayed point → render pixels → canvas.
				cx, cy := m.Apply(pt[0]*dpi/72, pt[1]*dpi/72)
				x, y := CanvasToDisplayed(p, f).Apply(cx, cy)
				if math.Hypot(x-pt[0], y-pt[1]) > 1e-6 {
					t.Errorf("recorded: %v → (%g, %g)", pt, x, y)
				}
				x, y = CanvasToDisplayed(legacy, f).Apply(cx, cy)
				tol := 0.05 // points: SkewDegrees is rounded to 0.01°
				if !tc.exactRebuild {
					tol = 36 // half an inch: the split is a guess
				}
				if d := math.Hypot(x-pt[0], y-pt[1]); d > tol {
					t.Errorf("rebuilt: %v → (%g, %g), %.3f pt off", pt, x, y, d)
				}
			}
		})
	}
}

// TestMatrixInvert: a map and its inverse compose to the identity.
func TestMatrixInvert(t *testing.T) {
	for _, m := range []Matrix{
		{1, 0, 0, 1, 5, 7},
		{0, 1, -1, 0, 300, 0},
		skewMatrix(100, 200, 130, 220, 7.5),
		{2, 0, 0, -2, 10, 1584},
	} {
		id := m.Then(m.Invert())
		for i, v := range Identity {
			if !near(id[i], v) {
				t.Errorf("%v then its inverse = %v", m, id)
				break
			}
		}
	}
}

// TestDisplayedBoxUpright: on an upright page with no steps, a box is its
// pixels scaled to points.
func TestDisplayedBoxUpright(t *testing.T) {
	f := PageFrame{Width: 612, Height: 792, Visible: [4]float64{0, 0, 612, 792}}
	p := result.PageResult{DPI: 144, Width: 1224, Height: 1584}
	b := DisplayedBox(p, f, [4]int{100, 200, 300, 240})
	if want := (Box{50, 100, 150, 120}); b != want {
		t.Errorf("box = %+v, want %+v", b, want)
	}
}

// TestPlaceLinesSquare: a line that runs left to right on the displayed
// page runs along its canvas line, keeping the slant of a deskewed page
// word by word: each word square to the page on its own stretch of the
// line's baseline (the first turned with the line, for pdf.js), since
// poppler and PDFBox cut words whose glyphs drift off their baseline;
// one on a page turned in the image is set square to the page, every
// word so. The size is the page's line
// height times emScale; each word has the metrics of its own box.
func TestPlaceLinesSquare(t *testing.T) {
	f := PageFrame{Width: 612, Height: 792, Visible: [4]float64{0, 0, 612, 792}}
	c, s := math.Cos(2*math.Pi/180), math.Sin(2*math.Pi/180)
	tests := []struct {
		name   string
		matrix [6]float64 // the render's pixels to the canvas's
		square bool
	}{
		{"upright", [6]float64{1, 0, 0, 1, 0, 0}, false},
		{"upright, deskewed 2°", [6]float64{c, s, -s, c, 0, 0}, false},
		{"turned 180° and deskewed 2°", [6]float64{-c, -s, s, -c, 612, 792}, true},
		{"turned 90° and deskewed 2°", [6]float64{-s, c, -c, -s, 792, 0}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := result.PageResult{DPI: 72, TextSource: result.TextFromOCR, Text: "a line",
				Canvas: &result.Canvas{RenderWidth: 612, RenderHeight: 792, Matrix: tc.matrix},
				Words:  []result.Word{{Text: "a", Box: [4]int{100, 305, 110, 320}}, {Text: "line", Box: [4]int{120, 300, 180, 320}}}}
			l := placeLines(p, f)
			if len(l) != 1 || len(l[0].words) != 2 {
				t.Fatalf("%d lines placed, want 1 of 2 words", len(l))
			}
			m := l[0].matrix
			stepped := tc.square || tc.matrix[1] != 0
			if l[0].perWord != stepped {
				t.Errorf("words placed one by one %v, want %v", l[0].perWord, stepped)
			}
			// Every word but a slanted line's first is square to the page.
			if a := l[0].wordAxes; stepped && (!near(a[0]*a[1], 0) || !near(a[2]*a[3], 0) || !near(a[0]*a[3]-a[1]*a[2], 1)) {
				t.Errorf("words' axes %v, want square", a)
			}
			slanted := !near(m[1]*m[0], 0) || !near(m[2]*m[3], 0)
			if want := !tc.square && tc.matrix[1] != 0; slanted != want {
				t.Errorf("text matrix %v: slanted %v, want %v", m, slanted, want)
			}
			if !near(l[0].size, 20*emScale) {
				t.Errorf("size %g, want %g", l[0].size, 20*emScale)
			}
			// Each word's baseline centre stays where it maps from the
			// canvas (the median bottom, 320).
			toUser := CanvasToUser(p, f)
			for k, w := range l[0].words {
				ox, oy := m[4]+m[0]*w.start, m[5]+m[1]*w.start
				ax, ay := m[0], m[1]
				if stepped {
					ox, oy = w.origin[0], w.origin[1]
				}
				if stepped && k > 0 {
					ax, ay = l[0].wordAxes[0], l[0].wordAxes[1]
				}
				x, y := ox+ax*w.width/2, oy+ay*w.width/2
				b := p.Words[k].Box
				cx, cy := toUser.Apply(float64(b[0]+b[2])/2, 320)
				if math.Abs(x-cx) > 1e-3 || math.Abs(y-cy) > 1e-3 {
					t.Errorf("word %d's baseline centre (%g, %g), want (%g, %g)", k, x, y, cx, cy)
				}
			}
			if w := l[0].words[1]; !near(w.start, 20) || !near(w.width, 60) {
				t.Errorf("second word at %g, %g wide; want 20, 60", w.start, w.width)
			}
			// "a" reaches from the baseline up to 305: 15 of the 24
			// points (0.625 em, down to the step 0.595); "line" up to 300
			// (0.833, down to 0.707).
			if got, want := l[0].words[0].metrics, (fontMetrics{ascent: 595, descent: -1}); got != want {
				t.Errorf("first word's metrics %+v, want %+v", got, want)
			}
			if got, want := l[0].words[1].metrics, (fontMetrics{ascent: 707, descent: -1}); got != want {
				t.Errorf("second word's metrics %+v, want %+v", got, want)
			}
		})
	}
}
