package main

import (
	"compress/zlib"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// The embedded font covers printable ASCII, in WinAnsiEncoding.
const (
	firstChar = ' '
	lastChar  = '~'
)

// pdfFont is Go Regular ready to embed as a TrueType font: the whole font
// file, compressed, and the metrics the font dictionaries need, in the
// PDF's 1/1000 em.
type pdfFont struct {
	Name                       string
	Widths                     string // FirstChar..LastChar, space-separated
	BBox                       string
	Ascent, Descent, CapHeight int
	Length1                    int // the font file's uncompressed length
	Data                       []byte
}

var (
	fontOnce sync.Once
	fontData pdfFont
	fontErr  error
)

// embeddedFont returns Go Regular prepared for embedding, computed once.
func embeddedFont() (pdfFont, error) {
	fontOnce.Do(func() { fontData, fontErr = loadPDFFont() })
	return fontData, fontErr
}

func loadPDFFont() (pdfFont, error) {
	f, err := sfnt.Parse(goregular.TTF)
	if err != nil {
		return pdfFont{}, fmt.Errorf("parsing goregular: %w", err)
	}
	var buf sfnt.Buffer
	upem := int(f.UnitsPerEm())
	// At a size of one em per unit, advances and bounds come out in font
	// units (as 26.6 fixed point).
	ppem := fixed.I(upem)
	per1000 := func(v fixed.Int26_6) int {
		return int((int64(v) * 1000 / 64) / int64(upem))
	}
	var widths []string
	for c := firstChar; c <= lastChar; c++ {
		gi, err := f.GlyphIndex(&buf, c)
		if err != nil || gi == 0 {
			return pdfFont{}, fmt.Errorf("goregular has no glyph for %q", c)
		}
		adv, err := f.GlyphAdvance(&buf, gi, ppem, font.HintingNone)
		if err != nil {
			return pdfFont{}, fmt.Errorf("goregular advance of %q: %w", c, err)
		}
		widths = append(widths, fmt.Sprint(per1000(adv)))
	}
	bounds, err := f.Bounds(&buf, ppem, font.HintingNone)
	if err != nil {
		return pdfFont{}, fmt.Errorf("goregular bounds: %w", err)
	}
	m, err := f.Metrics(&buf, ppem, font.HintingNone)
	if err != nil {
		return pdfFont{}, fmt.Errorf("goregular metrics: %w", err)
	}
	z, err := deflate(goregular.TTF, zlib.BestCompression)
	if err != nil {
		return pdfFont{}, err
	}
	// sfnt's y axis points down, the PDF's up.
	return pdfFont{
		Name:      "GoRegular",
		Widths:    strings.Join(widths, " "),
		BBox:      fmt.Sprintf("%d %d %d %d", per1000(bounds.Min.X), -per1000(bounds.Max.Y), per1000(bounds.Max.X), -per1000(bounds.Min.Y)),
		Ascent:    per1000(m.Ascent),
		Descent:   -per1000(m.Descent),
		CapHeight: per1000(m.CapHeight),
		Length1:   len(goregular.TTF),
		Data:      z,
	}, nil
}
