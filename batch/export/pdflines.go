package export

// The invisible text layer, set line by line, the way readers that
// rebuild lines from glyph positions (poppler's pdftotext, MuPDF, pdf.js,
// desktop indexers) expect a line of text to be drawn:
//
//   - one text object (BT … ET) per recognised line, in the artifact's
//     reading order (Layout: Tesseract's blocks and lines, columns and
//     recovered blocks as they were read);
//   - one font size and one baseline per line: the baseline is the median
//     of its words' bottoms (most words have no descender), the size the
//     distance from it to the median of their tops, so every word's box
//     lies on the ink of its x-height at least;
//   - the line's text matrix turns it with the line: on a page deskewed,
//     its baseline keeps the slant the line has in the source. A line
//     that does not run left to right on the displayed page (a page
//     turned in the image or by /Rotate) is set square to the page on its
//     box's centre: poppler splits a slanted line that runs down or
//     backwards wherever its baseline drifts half a point; and since a
//     square line would miss its ink at its ends by its slant, each of
//     its words gets a text matrix of its own, square, on its box's
//     centre (the line's size and band, the word's place along it);
//   - each word starts where its box starts along the baseline (Td from
//     the line's start) and is stretched to its box's width with
//     horizontal scaling (Tz); between two words a real space character,
//     stretched to fill the gap, so that readers need no guess to put
//     spaces back.

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/refbatch/refbatch/ocr"
)

// glyphAdvance is every glyph's width in text space units (DW 500).
const glyphAdvance = 0.5

// lineKind says who read a line: Tesseract, or a person who typed it
// (a transcription, which the layer marks as such with a marked-content
// sequence around its lines rather than pass it off as OCR; see
// transcribed.go).
type lineKind int

const (
	lineOCR         lineKind = iota // read by Tesseract
	lineTranscribed                 // typed by a person
)

// placedLine is a line set on its baseline in user space.
type placedLine struct {
	kind   lineKind
	matrix [6]float64 // text matrix: unit vectors along and up the line, then its origin on the baseline
	size   float64    // font size, points
	words  []lineWord
	// perWord: each word has its own origin (a square line, see above).
	perWord bool
	// transcription numbers a transcribed line's transcription (from 1),
	// whose lines mark opens (BDC) once.
	transcription int
	mark          string
}

// lineWord is a word of a placed line.
type lineWord struct {
	text  []byte  // UTF-16BE code units
	start float64 // where the word starts, along the baseline from the line's origin, points
	width float64 // its box's width along the baseline, points
	// origin is the word's own origin in user space, with perWord.
	origin [2]float64
}

// placeLines places page p's OCR lines on the page whose frame is f; nil
// for a page read from its own text layer, or with no words.
func placeLines(p ocr.PageResult, f PageFrame) []placedLine {
	if p.TextSource != ocr.TextFromOCR || len(p.Words) == 0 || p.DPI <= 0 {
		return nil
	}
	m := CanvasToUser(p, f)
	d := CanvasToDisplayed(p, f)
	square := !(d[0] > 0 && math.Abs(d[1]) < d[0])
	var out []placedLine
	for _, block := range Layout(p) {
		for _, idx := range block {
			if l, ok := placeLine(p.Words, idx, m, square); ok {
				out = append(out, l)
			}
		}
	}
	return out
}

// placeLine sets the words idx, one line in the canvas, in user space
// by m; square sets it square to the page (see the top of the file).
func placeLine(words []ocr.Word, idx []int, m Matrix, square bool) (placedLine, bool) {
	var ws []ocr.Word
	for _, i := range idx {
		b := words[i].Box
		if words[i].Text != "" && b[2] > b[0] && b[3] > b[1] {
			ws = append(ws, words[i])
		}
	}
	if len(ws) == 0 {
		return placedLine{}, false
	}
	x0, x1 := ws[0].Box[0], ws[0].Box[2]
	tops, bottoms := make([]int, len(ws)), make([]int, len(ws))
	for k, w := range ws {
		x0, x1 = min(x0, w.Box[0]), max(x1, w.Box[2])
		tops[k], bottoms[k] = w.Box[1], w.Box[3]
	}
	base, top := float64(median(bottoms)), float64(median(tops))
	if base-top < 1 {
		top = base - 1
	}
	// Pixels along the canvas's x axis and up its y axis, in points.
	ox, oy := m.Apply(float64(x0), base)
	rx, ry := m.Apply(float64(x0)+1, base)
	ux, uy := m.Apply(float64(x0), base-1)
	sa, su := math.Hypot(rx-ox, ry-oy), math.Hypot(ux-ox, uy-oy)
	if sa == 0 || su == 0 {
		return placedLine{}, false
	}
	ax, ay, vx, vy := (rx-ox)/sa, (ry-oy)/sa, (ux-ox)/su, (uy-oy)/su
	size := (base - top) * su
	var centre func(x float64) (float64, float64) // where a box centred at canvas x, on the line's band, goes
	if square {
		centre = func(x float64) (float64, float64) { return m.Apply(x, (base+top)/2) }
		length := float64(x1-x0) * sa
		cx, cy := centre(float64(x0+x1) / 2)
		if math.Abs(ax) >= math.Abs(ay) {
			ax, ay = math.Copysign(1, ax), 0
		} else {
			ax, ay = 0, math.Copysign(1, ay)
		}
		// Up is along turned a quarter counterclockwise: the canvas maps
		// to the page without a flip.
		vx, vy = -ay, ax
		ox, oy = cx-ax*length/2-vx*size/2, cy-ay*length/2-vy*size/2
	}
	l := placedLine{kind: lineOCR, matrix: [6]float64{ax, ay, vx, vy, ox, oy}, size: size, perWord: square}
	for _, w := range ws {
		text := utf16BE(w.Text, false)
		if len(text) == 0 {
			continue
		}
		lw := lineWord{text: text, start: float64(w.Box[0]-x0) * sa, width: float64(w.Box[2]-w.Box[0]) * sa}
		if square {
			cx, cy := centre(float64(w.Box[0]+w.Box[2]) / 2)
			lw.origin = [2]float64{cx - ax*lw.width/2 - vx*size/2, cy - ay*lw.width/2 - vy*size/2}
		}
		l.words = append(l.words, lw)
	}
	return l, len(l.words) > 0
}

// median is the middle value of v (the lower of the two middle ones);
// v is sorted in place.
func median(v []int) int {
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

// minSpace is the narrowest a space between two words is drawn, as a
// share of the font size: words whose boxes touch or overlap still get a
// space readers see.
const minSpace = 0.05

// textLayer is the content stream that draws lines, invisibly, in the
// font named font: one text object per line.
func textLayer(lines []placedLine, font string) []byte {
	var b bytes.Buffer
	b.WriteString("Q\nq\n")
	open := 0 // the transcription whose marked-content sequence is open
	for _, l := range lines {
		if open != 0 && l.transcription != open {
			b.WriteString("EMC\n")
			open = 0
		}
		if l.transcription != 0 && open == 0 {
			b.WriteString(l.mark)
			open = l.transcription
		}
		b.WriteString("BT\n3 Tr\n/")
		b.WriteString(font)
		b.WriteByte(' ')
		b.WriteString(num(l.size))
		b.WriteString(" Tf\n")
		for _, v := range l.matrix {
			b.WriteString(num(v))
			b.WriteByte(' ')
		}
		b.WriteString("Tm\n")
		at := 0.0 // the line matrix's offset from the line's origin
		for k, w := range l.words {
			if l.perWord {
				m := l.matrix
				fmt.Fprintf(&b, "%s %s %s %s %s %s Tm\n", num(m[0]), num(m[1]), num(m[2]), num(m[3]), num(w.origin[0]), num(w.origin[1]))
			} else if d := w.start - at; d != 0 {
				fmt.Fprintf(&b, "%s 0 Td\n", num(d))
				at = w.start
			}
			n := float64(len(w.text) / 2)
			fmt.Fprintf(&b, "%s Tz\n<%X> Tj\n", num(100*w.width/(l.size*glyphAdvance*n)), w.text)
			if k+1 < len(l.words) {
				gap := max(l.words[k+1].start-w.start-w.width, minSpace*l.size)
				fmt.Fprintf(&b, "%s Tz\n<0020> Tj\n", num(100*gap/(l.size*glyphAdvance)))
			}
		}
		b.WriteString("ET\n")
	}
	if open != 0 {
		b.WriteString("EMC\n")
	}
	b.WriteString("Q\n")
	return b.Bytes()
}
