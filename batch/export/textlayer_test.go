package export

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTextLayerSpaces: between every two words of a line the layer draws
// one real space character, the last pair's included and words whose
// boxes overlap too, stretched to the gap; none after a line's last word.
// Readers put spaces back from these characters (pdftotext, pdf.js);
// one dropped is two words read as one.
func TestTextLayerSpaces(t *testing.T) {
	utf16 := func(s string) []byte {
		var b []byte
		for _, r := range s {
			b = append(b, byte(r>>8), byte(r))
		}
		return b
	}
	lines := []placedLine{
		{matrix: [6]float64{1, 0, 0, 1, 72, 700}, size: 10, words: []lineWord{
			{text: utf16("Dear"), start: 0, width: 20},
			{text: utf16("Dr"), start: 25, width: 10},
			{text: utf16("Smith"), start: 34, width: 25}, // overlaps "Dr"
		}},
		{matrix: [6]float64{1, 0, 0, 1, 72, 680}, size: 10, words: []lineWord{{text: utf16("Re"), start: 0, width: 10}}},
	}
	layer := string(textLayer(lines, map[fontMetrics]string{{}: "F1"}))
	objects := strings.Split(layer, "BT\n")[1:]
	if len(objects) != 2 {
		t.Fatalf("%d text objects, want 2:\n%s", len(objects), layer)
	}
	space := regexp.MustCompile(`(?m)^(\S+) Tz\n<0020> Tj$`)
	tz := func(gap float64) string { return num(100 * gap / (10 * glyphAdvance)) }
	for i, want := range [][]string{{tz(5), tz(minSpace * 10)}, nil} {
		var got []string
		for _, m := range space.FindAllStringSubmatch(objects[i], -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, want) {
			t.Errorf("line %d: spaces stretched %v, want %v:\n%s", i+1, got, want, objects[i])
		}
		if strings.Contains(objects[i][strings.LastIndex(objects[i], "> Tj"):], "<0020>") {
			t.Errorf("line %d ends with a space", i+1)
		}
	}
}
