package export

// The invisible text layer's font: Tesseract's glyphless font (the layer
// itself is set line by line, see pdflines.go).
//
// The font is the one Tesseract's own PDF renderer uses: pdf.ttf from its
// tessdata folder, a TrueType font whose one glyph draws nothing, embedded
// as a Type 0 font with 2-byte codes (Identity-H) that are the words'
// UTF-16 code units. Every code maps to that glyph (CIDToGIDMap), is half
// an em wide (DW 500), and means itself in Unicode (ToUnicode), so text
// extraction gives back the words. The lines are drawn in text rendering
// mode 3 (neither filled nor stroked), which viewers, printers and
// pdftoppm all leave unpainted.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// num formats a number for a content stream: at most 4 decimals, no
// exponent, no trailing zeros.
func num(v float64) string {
	s := strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}

// utf16BE encodes s as UTF-16BE, with a byte order mark when bom.
func utf16BE(s string, bom bool) []byte {
	units := utf16.Encode([]rune(s))
	out := make([]byte, 0, 2*len(units)+2)
	if bom {
		out = append(out, 0xfe, 0xff)
	}
	for _, u := range units {
		out = append(out, byte(u>>8), byte(u))
	}
	return out
}

// toUnicode maps every 2-byte code up to a top to the UTF-16 code unit it
// is, with the ranges of unicodeRanges (%s).
const toUnicode = `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
%sendcmap
CMapName currentdict /CMap defineresource pop
end
end
`

// unicodeRanges are toUnicode's bfrange sections mapping each code up to
// top to itself: a range per first byte, since a bfrange may vary only
// its last byte (ISO 32000-1 9.10.3). One range from 0000 to top, as the
// layer wrote before, left PDFBox (Apache Tika's reader) without a
// mapping for every code past 00FF: dashes and curly quotes vanished
// from its text.
func unicodeRanges(top uint16) string {
	var ranges []string
	for hi := 0; hi <= int(top)>>8; hi++ {
		lo := hi << 8
		ranges = append(ranges, fmt.Sprintf("<%04X> <%04X> <%04X>\n", lo, min(lo|0xFF, int(top)), lo))
	}
	var b strings.Builder
	for len(ranges) > 0 { // at most 100 a section
		n := min(len(ranges), 100)
		fmt.Fprintf(&b, "%d beginbfrange\n%sendbfrange\n", n, strings.Join(ranges[:n], ""))
		ranges = ranges[n:]
	}
	return b.String()
}

// fontMetrics are a glyphless font's declared ascent and descent, in
// thousandths of an em (the descent negative). Readers draw a glyph's box
// from them: pdftotext -bbox from the baseline up by the ascent and down
// by the descent, times the size. The layer sets a block of lines at one
// size (see pdflines.go), often taller than a word's ink, and gives each
// word the font whose ascent stays within its ink (wordMetrics), so that
// the box a reader gives the word lies on it.
type fontMetrics struct{ ascent, descent int }

// fontSet writes the glyphless font once per metrics asked for, each a
// Type 0 font over the one embedded pdf.ttf, CIDToGIDMap and ToUnicode.
// Readers load each font dictionary a page names, and poppler does so
// again on every page: what they load is kept small (a few metrics, see
// ascents; maps only as long as the highest code drawn), so that the
// layer costs readers about what one font with full-range maps did.
type fontSet struct {
	u                    *update
	file, cidToGID, cmap types.IndirectRef
	fonts                map[fontMetrics]types.IndirectRef
}

// newFontSet writes the objects every font shares, for codes up to top.
func (u *update) newFontSet(top uint16) (*fontSet, error) {
	ttf, err := glyphlessTTF()
	if err != nil {
		return nil, err
	}
	fs := &fontSet{u: u, fonts: map[fontMetrics]types.IndirectRef{}}
	fs.file = u.stream(types.Dict{"Length1": types.Integer(len(ttf))}, ttf)
	// Every CID drawn to glyph 1, the font's empty glyph (PDF/A forbids
	// showing .notdef, glyph 0, even invisibly).
	fs.cidToGID = u.stream(types.Dict{}, bytes.Repeat([]byte{0, 1}, int(top)+1))
	fs.cmap = u.stream(types.Dict{}, fmt.Appendf(nil, toUnicode, unicodeRanges(top)))
	return fs, nil
}

// topCode is the highest UTF-16 code unit lines draw, the space's at least.
func topCode(lines []placedLine) uint16 {
	top := uint16(' ')
	for _, l := range lines {
		for _, w := range l.words {
			for k := 0; k+1 < len(w.text); k += 2 {
				top = max(top, uint16(w.text[k])<<8|uint16(w.text[k+1]))
			}
		}
	}
	return top
}

// font returns the reference of the Type 0 font with metrics m, writing
// its objects the first time.
func (fs *fontSet) font(m fontMetrics) types.IndirectRef {
	if ref, ok := fs.fonts[m]; ok {
		return ref
	}
	u := fs.u
	desc := u.alloc()
	u.object(desc, 0, types.Dict{
		"Type":        types.Name("FontDescriptor"),
		"FontName":    types.Name("GlyphLessFont"),
		"Flags":       types.Integer(5), // fixed pitch, symbolic
		"FontBBox":    types.Array{types.Integer(0), types.Integer(m.descent), types.Integer(500), types.Integer(m.ascent)},
		"ItalicAngle": types.Integer(0),
		"Ascent":      types.Integer(m.ascent),
		"Descent":     types.Integer(m.descent),
		"CapHeight":   types.Integer(m.ascent),
		"StemV":       types.Integer(80),
		"FontFile2":   fs.file,
	}.PDFString())
	cid := u.alloc()
	u.object(cid, 0, types.Dict{
		"Type":     types.Name("Font"),
		"Subtype":  types.Name("CIDFontType2"),
		"BaseFont": types.Name("GlyphLessFont"),
		"CIDSystemInfo": types.Dict{
			"Registry": types.StringLiteral("Adobe"), "Ordering": types.StringLiteral("Identity"),
			"Supplement": types.Integer(0),
		},
		"FontDescriptor": *types.NewIndirectRef(desc, 0),
		"CIDToGIDMap":    fs.cidToGID,
		"DW":             types.Integer(1000 * glyphAdvance),
	}.PDFString())
	font := u.alloc()
	u.object(font, 0, types.Dict{
		"Type":            types.Name("Font"),
		"Subtype":         types.Name("Type0"),
		"BaseFont":        types.Name("GlyphLessFont"),
		"Encoding":        types.Name("Identity-H"),
		"DescendantFonts": types.Array{*types.NewIndirectRef(cid, 0)},
		"ToUnicode":       fs.cmap,
	}.PDFString())
	ref := *types.NewIndirectRef(font, 0)
	fs.fonts[m] = ref
	return ref
}

// ErrNoGlyphlessFont says Tesseract's pdf.ttf was not found.
var ErrNoGlyphlessFont = errors.New("tesseract's pdf.ttf was not found in its tessdata folder (set TESSDATA_PREFIX)")

// tessdataDirs are where Tesseract's packages put tessdata, after
// TESSDATA_PREFIX (the folder itself, or its parent).
var tessdataDirs = []string{
	"/usr/share/tesseract-ocr/5/tessdata",
	"/usr/share/tesseract-ocr/4.00/tessdata",
	"/usr/share/tessdata",
	"/usr/local/share/tessdata",
	"/opt/homebrew/share/tessdata",
}

var (
	ttfOnce sync.Once
	ttfData []byte
	ttfErr  error
)

// glyphlessTTF reads pdf.ttf once.
func glyphlessTTF() ([]byte, error) {
	ttfOnce.Do(func() {
		var dirs []string
		if p := os.Getenv("TESSDATA_PREFIX"); p != "" {
			dirs = append(dirs, p, filepath.Join(p, "tessdata"))
		}
		for _, d := range append(dirs, tessdataDirs...) {
			b, err := os.ReadFile(filepath.Join(d, "pdf.ttf"))
			// The real file is 572 bytes; anything far larger is not it.
			if err == nil && len(b) > 12 && len(b) < 1<<20 {
				ttfData = b
				return
			}
		}
		ttfErr = ErrNoGlyphlessFont
	})
	return ttfData, ttfErr
}
