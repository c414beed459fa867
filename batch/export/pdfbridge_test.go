package export

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBridges: a gap wider than colSpacing sizes between two words on one
// baseline is drawn as a bridge (the space glyph inside a /Span whose
// ActualText is two spaces), starting and ending bridgeSide sizes from
// the words; a narrower gap, or one between words whose baselines differ
// (a skewed line's), as a plain space filling it. Poppler drops a lone
// space and cuts a row at a gap of over a size into cells it reads in an
// order of its own; the bridge, a word it keeps, holds the row together.
func TestBridges(t *testing.T) {
	const size = 10.0
	bridge := regexp.MustCompile(`^/Span <</ActualText <FEFF00200020>>> BDC\n(\S+) Tz\n\[(\S+) <0020>\] TJ\nEMC\n$`)
	for _, tc := range []struct {
		gap    float64
		level  bool
		bridge bool
	}{
		{gap: 6, level: true},
		{gap: colSpacing * size, level: true},
		{gap: 40, level: true, bridge: true},
		{gap: 40, level: false},
	} {
		var b bytes.Buffer
		writeSpace(&b, tc.gap, size, tc.level)
		m := bridge.FindStringSubmatch(b.String())
		if (m != nil) != tc.bridge {
			t.Errorf("gap %v, level %v: bridged %v, want %v:\n%s", tc.gap, tc.level, m != nil, tc.bridge, b.String())
			continue
		}
		if m == nil {
			if want := num(100*tc.gap/(size*glyphAdvance)) + " Tz\n<0020> Tj\n"; b.String() != want {
				t.Errorf("gap %v: %q, want %q", tc.gap, b.String(), want)
			}
			continue
		}
		tz, _ := strconv.ParseFloat(m[1], 64)
		kern, _ := strconv.ParseFloat(m[2], 64)
		start := -kern / 1000 * size * tz / 100
		end := start + glyphAdvance*size*tz/100
		if d := bridgeSide * size; !within(start, d) || !within(end, tc.gap-d) {
			t.Errorf("gap %v: bridge from %.3f to %.3f, want %.3f to %.3f", tc.gap, start, end, d, tc.gap-d)
		}
	}
}

// TestLevel: words drawn each with its own origin are bridged only when
// their baselines meet; a line set whole always is.
func TestLevel(t *testing.T) {
	l := placedLine{size: 10, perWord: true, matrix: [6]float64{1, 0, 0, 1, 0, 0}, wordAxes: [4]float64{1, 0, 0, 1},
		words: []lineWord{{origin: [2]float64{0, 100}}, {origin: [2]float64{80, 100.05}}, {origin: [2]float64{160, 101.5}}}}
	if !l.level(0) || l.level(1) {
		t.Errorf("level: %v %v, want true false", l.level(0), l.level(1))
	}
	l.perWord = false
	if !l.level(1) {
		t.Errorf("a line set whole is not level")
	}
	if s := string(textLayer([]placedLine{l}, map[fontMetrics]string{{}: "F1"})); strings.Count(s, "BDC") != 0 {
		t.Errorf("words with no gap between them bridged:\n%s", s)
	}
}

func within(a, b float64) bool { return a-b < 1e-3 && b-a < 1e-3 }
