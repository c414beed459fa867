package export

// The invisible text layer: Tesseract's glyphless font and one text
// object per word.
//
// The font is the one Tesseract's own PDF renderer uses: pdf.ttf from its
// tessdata folder, a TrueType font whose one glyph draws nothing, embedded
// as a Type 0 font with 2-byte codes (Identity-H) that are the words'
// UTF-16 code units. Every code maps to that glyph (CIDToGIDMap), is half
// an em wide (DW 500), and means itself in Unicode (ToUnicode), so text
// extraction gives back the words. The words are drawn in text rendering
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
	"sync"
	"unicode/utf16"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/ocr"
)

// glyphAdvance is every glyph's width in text space units (DW 500).
const glyphAdvance = 0.5

// placedWord is a word set on its box in user space: the font size is the
// box's height, the text matrix turns the word along the box (a page
// deskewed or turned in the image has its words at an angle), and the
// horizontal scaling stretches it to the box's width.
type placedWord struct {
	text   []byte     // UTF-16BE code units
	matrix [6]float64 // text matrix: unit vectors along and up the word, then its origin
	size   float64    // font size: the box's height, in points
	scale  float64    // horizontal scaling, percent
}

// placeWords places page p's OCR words on the page whose frame is f; nil
// for a page read from its own text layer, or with no words.
func placeWords(p ocr.PageResult, f PageFrame) []placedWord {
	if p.TextSource != ocr.TextFromOCR || len(p.Words) == 0 || p.DPI <= 0 {
		return nil
	}
	m := CanvasToUser(p, f)
	// The words run along the canvas's x axis. Where that is not left to
	// right on the displayed page (a page turned in the image or by
	// /Rotate), poppler's text extraction splits a slanted word wherever
	// its baseline drifts half a point, so such words are set square to
	// the page, on their box's centre: a word misses its slant by a
	// point or two at its ends, not its ink.
	d := CanvasToDisplayed(p, f)
	square := !(d[0] > 0 && math.Abs(d[1]) < d[0])
	var out []placedWord
	for _, w := range p.Words {
		b := w.Box
		if w.Text == "" || b[2] <= b[0] || b[3] <= b[1] {
			continue
		}
		// The box's bottom left corner is the word's origin on its baseline.
		ox, oy := m.Apply(float64(b[0]), float64(b[3]))
		rx, ry := m.Apply(float64(b[2]), float64(b[3]))
		ux, uy := m.Apply(float64(b[0]), float64(b[1]))
		along, up := math.Hypot(rx-ox, ry-oy), math.Hypot(ux-ox, uy-oy)
		text := utf16BE(w.Text, false)
		n := len(text) / 2
		if along == 0 || up == 0 || n == 0 {
			continue
		}
		ax, ay, vx, vy := (rx-ox)/along, (ry-oy)/along, (ux-ox)/up, (uy-oy)/up
		if square {
			cx, cy := (rx+ux)/2, (ry+uy)/2
			if math.Abs(ax) >= math.Abs(ay) {
				ax, ay = math.Copysign(1, ax), 0
			} else {
				ax, ay = 0, math.Copysign(1, ay)
			}
			// Up is along turned a quarter counterclockwise: the
			// canvas maps to the page without a flip.
			vx, vy = -ay, ax
			ox, oy = cx-ax*along/2-vx*up/2, cy-ay*along/2-vy*up/2
		}
		out = append(out, placedWord{
			text:   text,
			matrix: [6]float64{ax, ay, vx, vy, ox, oy},
			size:   up,
			scale:  100 * along / (up * glyphAdvance * float64(n)),
		})
	}
	return out
}

// textLayer is the content stream that draws words, invisibly, in the
// font named font.
func textLayer(words []placedWord, font string) []byte {
	var b bytes.Buffer
	b.WriteString("Q\nq\n")
	for _, w := range words {
		b.WriteString("BT\n3 Tr\n/")
		b.WriteString(font)
		b.WriteByte(' ')
		b.WriteString(num(w.size))
		b.WriteString(" Tf\n")
		b.WriteString(num(w.scale))
		b.WriteString(" Tz\n")
		for _, v := range w.matrix {
			b.WriteString(num(v))
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "Tm\n<%X> Tj\nET\n", w.text)
	}
	b.WriteString("Q\n")
	return b.Bytes()
}

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

// toUnicode maps every 2-byte code to the UTF-16 code unit it is.
const toUnicode = `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
1 beginbfrange
<0000> <FFFF> <0000>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end
`

// glyphlessFont writes the font's objects and returns the reference of
// its Type 0 dictionary.
func (u *update) glyphlessFont() (*types.IndirectRef, error) {
	ttf, err := glyphlessTTF()
	if err != nil {
		return nil, err
	}
	file := u.stream(types.Dict{"Length1": types.Integer(len(ttf))}, ttf)
	// Every CID to glyph 1, the font's empty glyph.
	gids := bytes.Repeat([]byte{0, 1}, 1<<16)
	cidToGID := u.stream(types.Dict{}, gids)
	cmap := u.stream(types.Dict{}, []byte(toUnicode))

	desc := u.alloc()
	u.object(desc, 0, types.Dict{
		"Type":        types.Name("FontDescriptor"),
		"FontName":    types.Name("GlyphLessFont"),
		"Flags":       types.Integer(5), // fixed pitch, symbolic
		"FontBBox":    types.Array{types.Integer(0), types.Integer(0), types.Integer(500), types.Integer(1000)},
		"ItalicAngle": types.Integer(0),
		"Ascent":      types.Integer(1000),
		"Descent":     types.Integer(-1),
		"CapHeight":   types.Integer(1000),
		"StemV":       types.Integer(80),
		"FontFile2":   file,
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
		"CIDToGIDMap":    cidToGID,
		"DW":             types.Integer(1000 * glyphAdvance),
	}.PDFString())
	font := u.alloc()
	u.object(font, 0, types.Dict{
		"Type":            types.Name("Font"),
		"Subtype":         types.Name("Type0"),
		"BaseFont":        types.Name("GlyphLessFont"),
		"Encoding":        types.Name("Identity-H"),
		"DescendantFonts": types.Array{*types.NewIndirectRef(cid, 0)},
		"ToUnicode":       cmap,
	}.PDFString())
	return types.NewIndirectRef(font, 0), nil
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
