package admit

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// inlineSeen lexes content and returns each inline image's dictionary as
// the checks see it, and the text the stream shows.
func inlineSeen(content string) ([]string, int64, error) {
	var got []string
	shown, err := inlineImages(strings.NewReader(content), func(img inlineImage, _ *bufio.Reader) error {
		s := fmt.Sprintf("%gx%g bpc %d comps %d", img.w, img.h, img.bpc, img.comps)
		if len(img.filters) > 0 {
			s += " " + strings.Join(img.filters, ",")
		}
		for _, k := range slices.Sorted(maps.Keys(img.parms)) {
			s += fmt.Sprintf(" %s=%g", k, img.parms[k])
		}
		got = append(got, s)
		return nil
	})
	return got, shown, err
}

// TestInlineDictionaries: what an inline image's dictionary declares, in
// abbreviations and full names, as the renderer reads it.
func TestInlineDictionaries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, content string
		want          []string
	}{
		{"abbreviations", "BI /W 10 /H 20 /BPC 1 /CS /RGB ID \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00 EI",
			[]string{"10x20 bpc 1 comps 3"}},
		{"full names", "BI /Width 3 /Height 2 /BitsPerComponent 4 /ColorSpace /DeviceCMYK ID 012345678901 EI",
			[]string{"3x2 bpc 4 comps 4"}},
		{"no colour space or depth", "BI /W 1 /H 1 ID x EI", []string{"1x1 bpc 8 comps 0"}},
		{"an image mask", "BI /IM true /W 8 /H 1 ID x EI BI /ImageMask true /W 8 /H 1 ID x EI", []string{"8x1 bpc 1 comps 1", "8x1 bpc 1 comps 1"}},
		{"not an image mask", "BI /IM false /W 1 /H 1 /CS /G ID x EI", []string{"1x1 bpc 8 comps 1"}},
		{"gray spaces", "BI /CS /G ID x EI BI /CS /DeviceGray ID x EI BI /CS /CalGray ID x EI BI /CS /I ID x EI BI /CS /Indexed ID x EI",
			slices.Repeat([]string{"0x0 bpc 8 comps 1"}, 5)},
		{"RGB spaces", "BI /CS /DeviceRGB ID x EI BI /CS /CalRGB ID x EI", slices.Repeat([]string{"0x0 bpc 8 comps 3"}, 2)},
		{"CMYK", "BI /CS /CMYK ID x EI", []string{"0x0 bpc 8 comps 4"}},
		{"a named colour space", "BI /CS /CS0 ID x EI", []string{"0x0 bpc 8 comps 0"}},
		{"indexed arrays", "BI /CS [/I /RGB 1 <0000000000ff>] ID x EI BI /CS [/Indexed /G 0 <00>] ID x EI BI /CS [/RGB] ID x EI",
			[]string{"0x0 bpc 8 comps 1", "0x0 bpc 8 comps 1", "0x0 bpc 8 comps 0"}},
		{"filters", "BI /F [/AHx /Fl] ID 78 EI BI /Filter /DCT ID x EI BI /F [5 /RL] ID x EI",
			[]string{"0x0 bpc 8 comps 0 ASCIIHexDecode,FlateDecode", "0x0 bpc 8 comps 0 DCTDecode", "0x0 bpc 8 comps 0 RunLengthDecode"}},
		{"the last filter entry counts", "BI /F /DCT /F /CCF ID x EI", []string{"0x0 bpc 8 comps 0 CCITTFaxDecode"}},
		{"decode parameters that are not a dictionary", "BI /DP null /W 1 ID x EI BI /DP [1 2] /W 2 ID x EI", []string{"1x0 bpc 8 comps 0", "2x0 bpc 8 comps 0"}},
		{"decode parameters", "BI /DP << /K -1 /Columns 90 /Rows x >> ID x EI", []string{"0x0 bpc 8 comps 0 Columns=90 K=-1 Rows=0"}},
		{"the last decode parameters of an array", "BI /DecodeParms [null << /Columns 9 >>] ID x EI", []string{"0x0 bpc 8 comps 0 Columns=9"}},
		{"sizes that are not numbers", "BI /W nan /H abc /BPC 2.9 ID x EI", []string{"0x0 bpc 2 comps 0"}},
		{"a #xx escape", "BI /#57 7 /H#20 3 /#4 9 ID x EI", []string{"7x0 bpc 8 comps 0"}},
		{"a key longer than a token keeps", "BI /W" + strings.Repeat("x", 70) + " 7 ID x EI", []string{"0x0 bpc 8 comps 0"}},
		{"a key that is not a name", "BI 5 /W 7 ID x EI BI /W 2 ID x EI", []string{"2x0 bpc 8 comps 0"}},
		{"more entries than an array keeps", "BI " + strings.Repeat("/A 1 ", 256) + "ID x EI BI /W 3 ID x EI", []string{"0x0 bpc 8 comps 0", "3x0 bpc 8 comps 0"}},
		{"the most entries", "BI " + strings.Repeat("/A 1 ", 255) + "ID x EI BI " + strings.Repeat("/A 1 ", 254) + "/W 4 ID x EI", []string{"0x0 bpc 8 comps 0", "4x0 bpc 8 comps 0"}},
		{"BI in a comment, a string or a name", "% BI /W 9 ID x EI\r(BI /W 9 ID x EI) /BI <4249> BI /W 1 ID x EI", []string{"1x0 bpc 8 comps 0"}},
		{"a stray delimiter", ") } ] > BI /W 1 ID x EI", []string{"1x0 bpc 8 comps 0"}},
	} {
		got, _, err := inlineSeen(c.content)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// TestInlineData: an inline image's data is skipped to its end, whatever
// it holds, and lexing goes on after EI.
func TestInlineData(t *testing.T) {
	t.Parallel()
	// The data of each image ends in trap: a walk that stops short of
	// its end reads an image of 7 px wide in it.
	const trap = " EI BI /W 7 ID zzzzz"
	next := " BI /W 5 ID x EI"
	fill := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct{ name, content string }{
		{"unfiltered, by its size", "BI /W 20 /H 1 /CS /G /BPC 8 ID " + trap + " EI" + next},
		{"rows rounded up to bytes", "BI /W 66 /H 10 /CS /G /BPC 1 ID " + fill(70) + trap + " EI" + next},
		{"three components", "BI /W 4 /H 2 /CS /RGB /BPC 8 ID " + fill(4) + trap + " EI" + next},
		{"deep samples", "BI /W 5 /H 1 /CS /G /BPC 32 ID " + trap + " EI" + next},
		{"data longer than its size, then to EI", "BI /W 1 /H 1 /CS /G /BPC 8 ID xx BI /W 7 ID zz EI" + next},
		{"flate data, to its end", "BI /W 2 /H 2 /F /Fl ID " + string(stored([]byte(trap))) + " EI" + next},
		{"EI before a delimiter", "BI /W 1 /H 1 /F /AHx ID 00> EI(x)" + next},
		{"EI as a word only", "BI /W 1 /H 1 /F /AHx ID 0EI EIx BI /W 7 ID zz EI/" + next},
		{"E alone is data", "BI /W 1 /H 1 /F /AHx ID E  BI /W 7 ID zz EI" + next},
		{"EI at the end", "BI /W 1 /H 1 /F /AHx ID EI"},
	} {
		got, _, err := inlineSeen(c.content)
		n := 2
		if c.name == "EI at the end" {
			n = 1
		}
		if err != nil || len(got) != n || n == 2 && got[1] != "5x0 bpc 8 comps 0" {
			t.Errorf("%s: got %q, %v; want the image, then 5x0", c.name, got, err)
		}
	}
}

// stored is b in a zlib stream of stored blocks: its bytes as they are.
func stored(b []byte) []byte {
	var out bytes.Buffer
	w, _ := zlib.NewWriterLevel(&out, zlib.NoCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return out.Bytes()
}

// TestShownText: the text a content stream shows is its strings' bytes,
// and a stream past maxStreamText of it is a text bomb.
func TestShownText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		content string
		want    int64
	}{
		{"(abc) Tj", 4},
		{"(a\\)b) Tj", 4},
		{"(a(b)c) Tj", 6},
		{"<616263> Tj", 7},
		{"<< /A (x) >>", 2},
		{"% (not text)\n[(ab) 3 (c)] TJ", 5},
	} {
		if _, got, err := inlineSeen(c.content); err != nil || got != c.want {
			t.Errorf("%q: shown %d, %v; want %d", c.content, got, err, c.want)
		}
	}
	at := "(" + strings.Repeat("a", maxStreamText-1) + ")"
	if _, got, err := inlineSeen(at); err != nil || got != maxStreamText {
		t.Errorf("exactly the most text: shown %d, %v; want %d", got, err, maxStreamText)
	}
	if _, _, err := inlineSeen(at + "(a)"); !errors.Is(err, errTextBomb) {
		t.Errorf("a byte over: %v; want a text bomb", err)
	}
}

// TestInlineDataAfterID: a white-space character after ID is not data,
// anything else is: the data's end, and so the next image, depend on it.
func TestInlineDataAfterID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, content string
		want          []string
	}{
		{"data at once", "BI /W 2 /H 1 /CS /G ID(xEI BI /W 7 ID z EI EI BI /W 5 ID x EI",
			[]string{"2x1 bpc 8 comps 1", "7x0 bpc 8 comps 0", "5x0 bpc 8 comps 0"}},
		{"one space, then data", "BI /W 2 /H 1 /CS /G ID (xEI BI /W 7 ID z EI EI BI /W 5 ID x EI",
			[]string{"2x1 bpc 8 comps 1", "7x0 bpc 8 comps 0", "5x0 bpc 8 comps 0"}},
	} {
		got, _, err := inlineSeen(c.content)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}
