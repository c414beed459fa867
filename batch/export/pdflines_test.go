package export

import (
	"math"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/ocr/result"
)

// TestMeasureLineIgnoresTallWords: a word over twice as tall as the
// line's median word (a stamp or a bracket read into the line) does not
// set the line's height, which sets its block's font size.
func TestMeasureLineIgnoresTallWords(t *testing.T) {
	words := []result.Word{
		{Text: "Blood", Box: [4]int{100, 300, 200, 340}},
		{Text: "|", Box: [4]int{220, 200, 230, 450}},
		{Text: "pressure", Box: [4]int{250, 302, 400, 350}},
	}
	g, ok := measureLine(words, []int{0, 1, 2})
	if !ok {
		t.Fatal("no line measured")
	}
	if g.em != 50 || g.base != 350 {
		t.Errorf("height %g, baseline %g; want 50 (300 to 350), 350 (the median bottom)", g.em, g.base)
	}
	if len(g.ws) != 3 {
		t.Errorf("%d words kept, want all 3", len(g.ws))
	}
}

// TestKeepApart: words nearer than rawSpace sizes are narrowed from their
// end to end rawSpace sizes before the next word, down to a quarter of
// their width; one whose successor lies within it, or that cannot be cut
// apart from it (TestKeepApartCuts), is narrowed to half its width; the
// others are left as they are.
func TestKeepApart(t *testing.T) {
	ws := []lineWord{
		{start: 0, width: 41},  // 1 before the next: narrowed to end rawSpace sizes before it
		{start: 42, width: 20}, // reaches 12 over the next, which starts in its second quarter: the same
		{start: 50, width: 20}, // the next starts 1 after it and ends within it: to half its width
		{start: 51, width: 10}, // the same
		{start: 52, width: 1},  // 20 before the next: kept
		{start: 73, width: 20},
	}
	keepApart(ws, 10)
	want := []float64{42 - rawSpace*10, 8 - rawSpace*10, 10, 5, 1, 20}
	for k, w := range ws {
		if !near(w.width, want[k]) {
			t.Errorf("word %d: width %g, want %g", k, w.width, want[k])
		}
	}
}

// TestGutters: blocks side by side are each as far from the other as the
// gap between them; a block above or below another has no gutter.
func TestGutters(t *testing.T) {
	line := func(x0, x1 int, base float64) lineGeom { return lineGeom{x0: x0, x1: x1, base: base, em: 40} }
	blocks := [][]lineGeom{
		{line(100, 500, 200), line(100, 480, 260)}, // left column
		{line(530, 900, 210)},                      // right column, 30 from the left one
		{line(100, 900, 400)},                      // below both
	}
	g := gutters(blocks)
	if g[0] != 30 || g[1] != 30 || !math.IsInf(g[2], 1) {
		t.Errorf("gutters %v, want [30 30 +Inf]", g)
	}
}

// TestWordMetrics: a word's ascent reaches no higher than its own top,
// rounded down to a step of ascents, so that its box stays on its ink;
// its descent is a thousandth.
func TestWordMetrics(t *testing.T) {
	for _, tc := range []struct {
		name   string
		top    int // the word's top; the line's baseline is 100, the size 50
		ascent int
	}{
		{"x-height word", 80, 354},             // 0.4 em
		{"ascender word", 60, 707},             // 0.8 em
		{"taller than the steps", 10, 1189},    // 1.8 em
		{"comma below the baseline", 102, 250}, // the least
	} {
		m := wordMetrics([4]int{0, tc.top, 10, 110}, 100, 50)
		if m != (fontMetrics{ascent: tc.ascent, descent: -1}) {
			t.Errorf("%s: metrics %+v, want ascent %d, descent -1", tc.name, m, tc.ascent)
		}
	}
}

// TestFontSetMaps: the fonts' CIDToGIDMap and ToUnicode reach only the
// highest code unit drawn, so that readers, which load them with every
// font dictionary (poppler on every page), read little.
func TestFontSetMaps(t *testing.T) {
	lines := []placedLine{{words: []lineWord{{text: utf16BE("Größe", false)}, {text: utf16BE("a", false)}}}}
	if got := topCode(lines); got != 0xf6 {
		t.Errorf("topCode %#x, want 0xf6 (ö)", got)
	}
	if got := topCode(nil); got != ' ' {
		t.Errorf("topCode of no lines %#x, want the space's", got)
	}
}

// TestUnicodeRanges: ToUnicode maps each code to itself up to the
// highest drawn, in ranges that vary only their last byte, as ISO
// 32000-1 9.10.3 asks (PDFBox maps nothing past a range's first 256
// codes otherwise: an em dash vanished from its text).
func TestUnicodeRanges(t *testing.T) {
	for _, c := range []struct {
		name  string
		top   uint16
		want  []string
		count int
	}{
		{"Latin-1", 0xf6, []string{"1 beginbfrange\n<0000> <00F6> <0000>\nendbfrange\n"}, 1},
		{"em dash", 0x2014, []string{"<0000> <00FF> <0000>\n<0100> <01FF> <0100>\n", "<2000> <2014> <2000>\nendbfrange\n"}, 33},
		{"past 100 ranges", 0xffff, []string{"100 beginbfrange\n<0000>", "endbfrange\n100 beginbfrange\n<6400> <64FF> <6400>\n", "endbfrange\n56 beginbfrange\n<C800>", "<FF00> <FFFF> <FF00>\n"}, 256},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := unicodeRanges(c.top)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("unicodeRanges(%#x) has no %q", c.top, w)
				}
			}
			if n := strings.Count(got, "\n<"); n != c.count {
				t.Errorf("unicodeRanges(%#x) has %d ranges, want %d", c.top, n, c.count)
			}
		})
	}
}
