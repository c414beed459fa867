package export

// The invisible text layer, set line by line, the way readers that
// rebuild lines from glyph positions (poppler's pdftotext, MuPDF, pdf.js,
// desktop indexers) expect a line of text to be drawn:
//
//   - one text object (BT … ET) per recognised line, in the artifact's
//     reading order (Layout: Tesseract's blocks and lines, columns and
//     recovered blocks as they were read);
//   - one baseline per line, the median of its words' bottoms (most
//     words have no descender), and one font size per block of lines,
//     the same for every block of the page's body text: poppler keeps
//     lines in one block only when their sizes differ by under 5%, and
//     reads blocks in an order of its own (see blockEm, emScale); a line
//     poppler would split into cells, a table's row, takes sizes of its
//     own in turn (rowSizes), so that its cells do not merge into columns;
//   - each word in the font whose declared ascent reaches up its ink at
//     the line's size, in steps of 2^¼, a few fonts a document
//     (wordMetrics), so that the box a reader gives the word lies on its
//     ink whatever the size;
//   - a line keeps the slant it has in the source, word by word: each
//     word gets a text matrix of its own, square to the page, on its own
//     stretch of the line's baseline (the line's size, the word's place
//     along it), so that the words step along the slant and each stays
//     on its ink. Readers that cut a word wherever its glyphs' baseline
//     drifts (poppler, half a point; PDFBox, a glyph's height) see each
//     word whole, where a word drawn along the slant came out in pieces
//     (888 words in pdftotext for an artifact's 730). On a page
//     deskewed, the first word of a line keeps the line's slant in its
//     text matrix, so that pdf.js, which measures the move to a new line
//     in the frame of the text it reaches, starts a new line there rather
//     than run the last word of one line into the first of the next. A
//     line that does not run left to right on the displayed page (a page
//     turned in the image or by /Rotate) has every word square, the first
//     too;
//   - each word starts where its box starts along the baseline (Td from
//     the line's start) and is stretched to its box's width with
//     horizontal scaling (Tz); between two words a real space character,
//     stretched to fill the gap, so that readers need no guess to put
//     spaces back; over a wide gap a bridge poppler keeps (pdfbridge.go).

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/refbatch/refbatch/ocr/result"
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
	// perWord: each word has its own origin (see above), and its text
	// matrix wordAxes (the first word's, matrix's: see axes).
	perWord  bool
	wordAxes [4]float64
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
	// metrics reach from the baseline to the word's box's top and bottom.
	metrics fontMetrics
	// origin is the word's own origin in user space, with perWord.
	origin [2]float64
}

// placeLines places page p's OCR lines on the page whose frame is f; nil
// for a page read from its own text layer, or with no words.
func placeLines(p result.PageResult, f PageFrame) []placedLine {
	if p.TextSource != result.TextFromOCR || len(p.Words) == 0 || p.DPI <= 0 {
		return nil
	}
	m := CanvasToUser(p, f)
	square := squarePage(CanvasToDisplayed(p, f))
	var blocks [][]lineGeom
	var ems []float64
	for _, block := range Layout(p) {
		var gs []lineGeom
		for _, idx := range block {
			if g, ok := measureLine(p.Words, idx); ok {
				gs = append(gs, g)
				ems = append(ems, g.em)
			}
		}
		blocks = append(blocks, gs)
	}
	body := medianFloat(ems)
	gutters := gutters(blocks)
	var out []placedLine
	rows := 0
	for i, gs := range blocks {
		em := min(blockEm(gs, body)*emScale, gutters[i]/(colSpacing*rowSizes[1]))
		for _, g := range gs {
			size := em
			if g.maxGap > colSpacing*em {
				size *= rowSizes[rows%len(rowSizes)]
				rows++
			}
			if l, ok := placeLine(g, size, m, square); ok {
				out = append(out, l)
			}
		}
	}
	return out
}

// emScale is the font size over a block's line height. Poppler measures
// its tolerances in font sizes: a word joins a line's block when the gap
// between them is under 0.3 sizes, or under 1 size while the block has at
// most three lines (see colSpacing), two lines when their baselines are
// under 1.5 sizes apart. A line's height (ascenders to descenders) is
// about an em, and scanned print often spaces its words nearly 0.7 em
// apart; at 1.2 line heights a paragraph mostly stays one block while a
// table's columns, several ems apart, still split (on the eval corpus 1.2
// read best of 1, 1.2 and 1.4). The size does not make a
// word's box taller: its font's ascent keeps it on its ink (wordMetrics).
const emScale = 1.2

// colSpacing is the widest gap, as a share of the font size, that the
// layer counts on poppler bridging between two words of a line. Poppler's
// own rule has two steps: 0.3 sizes (its minColSpacing1), and 1 size
// (minColSpacing2) while at most three lines of the block have a word
// there; 0.7 lies between them, and the figures in the searchable-pdf
// topic were measured with it. A wider gap, a table's row's, is bridged
// on a level line (pdfbridge.go); unbridged, on a skewed line, it splits
// the line into blocks, which poppler merges with the cells above and
// below of the same size into columns, read column by column.
const colSpacing = 0.7

// rowSizes are the sizes, as shares of their block's, that lines poppler
// splits take in turn: each differs from the body text's and from the
// previous row's by more than poppler's 5%, so each cell stays a block of
// its own, not a column's lines. (Poppler's reading order still reads
// cells that are blocks of their own column by column where a column
// lies wholly left of the next: a block left of another comes first
// unless a block between them spans both.)
var rowSizes = [2]float64{1.08, 1.17}

// squarePage is whether lines are set square to the displayed page
// (see the top of the file): whether a line of the canvas, whose map to
// the displayed page is d, does not run left to right there.
func squarePage(d Matrix) bool {
	return !(d[0] > 0 && math.Abs(d[1]) < d[0])
}

// lineGeom is a line's words with a box, and its measures in canvas
// pixels: its extent along the line, its baseline (the median of its
// words' bottoms: most words have no descender) and its height from the
// highest top to the lowest bottom, an estimate of its font's em.
type lineGeom struct {
	ws     []result.Word
	x0, x1 int
	base   float64
	em     float64
	maxGap float64 // the widest gap between two words
}

// measureLine measures the words idx, one line in the canvas.
func measureLine(words []result.Word, idx []int) (lineGeom, bool) {
	var g lineGeom
	for _, i := range idx {
		b := words[i].Box
		if words[i].Text != "" && b[2] > b[0] && b[3] > b[1] {
			g.ws = append(g.ws, words[i])
		}
	}
	if len(g.ws) == 0 {
		return g, false
	}
	g.x0, g.x1 = g.ws[0].Box[0], g.ws[0].Box[2]
	bottoms, heights := make([]int, len(g.ws)), make([]int, len(g.ws))
	for k, w := range g.ws {
		if k > 0 {
			g.maxGap = max(g.maxGap, float64(w.Box[0]-g.ws[k-1].Box[2]))
		}
		g.x0, g.x1 = min(g.x0, w.Box[0]), max(g.x1, w.Box[2])
		bottoms[k], heights[k] = w.Box[3], w.Box[3]-w.Box[1]
	}
	// The line's height leaves out words more than twice as tall as its
	// median word: a stamp, a rule or a bracket read into the line would
	// set its size, and so its whole block's, several times the text's.
	tall := 2 * median(heights)
	top, bottom := math.MaxInt, math.MinInt
	for _, w := range g.ws {
		if w.Box[3]-w.Box[1] <= tall {
			top, bottom = min(top, w.Box[1]), max(bottom, w.Box[3])
		}
	}
	g.base = float64(median(bottoms))
	g.em = max(float64(bottom-top), 1)
	return g, true
}

// placeLine sets the line g in user space by m, at the font size em
// (canvas pixels); square sets it square to the page (see the top of the
// file).
func placeLine(g lineGeom, em float64, m Matrix, square bool) (placedLine, bool) {
	// Pixels along the canvas's x axis and up its y axis, in points.
	ox, oy := m.Apply(float64(g.x0), g.base)
	rx, ry := m.Apply(float64(g.x0)+1, g.base)
	ux, uy := m.Apply(float64(g.x0), g.base-1)
	sa, su := math.Hypot(rx-ox, ry-oy), math.Hypot(ux-ox, uy-oy)
	if sa == 0 || su == 0 {
		return placedLine{}, false
	}
	ax, ay := (rx-ox)/sa, (ry-oy)/sa
	alongX, alongY := ax, ay // the canvas's x axis on the page
	// The words' axes, square to the page.
	wx, wy := math.Copysign(1, ax), 0.0
	if math.Abs(ax) < math.Abs(ay) {
		wx, wy = 0, math.Copysign(1, ay)
	}
	slanted := ax != wx || ay != wy
	if square {
		ax, ay = wx, wy
	}
	// Up is along turned a quarter counterclockwise: the canvas maps to
	// the page without a flip.
	vx, vy := -ay, ax
	l := placedLine{kind: lineOCR, matrix: [6]float64{ax, ay, vx, vy, ox, oy}, size: em * su,
		perWord: slanted || square, wordAxes: [4]float64{wx, wy, -wy, wx}}
	for _, w := range g.ws {
		text := utf16BE(w.Text, false)
		if len(text) == 0 {
			continue
		}
		lw := lineWord{text: text, start: float64(w.Box[0]-g.x0) * sa, width: float64(w.Box[2]-w.Box[0]) * sa,
			metrics: wordMetrics(w.Box, g.base, em)}
		if l.perWord {
			// Its own stretch of the baseline, centred on its box's.
			a := l.axes(len(l.words))
			cx, cy := m.Apply(float64(w.Box[0]+w.Box[2])/2, g.base)
			lw.origin = [2]float64{cx - a[0]*lw.width/2, cy - a[1]*lw.width/2}
		}
		l.words = append(l.words, lw)
	}
	starts := make([]float64, len(l.words))
	for k, w := range l.words {
		starts[k] = w.start
	}
	keepApart(l.words, l.size)
	if l.perWord {
		// A word keepApart starts later starts as much further along the
		// line.
		for k := range l.words {
			d := l.words[k].start - starts[k]
			l.words[k].origin[0] += alongX * d
			l.words[k].origin[1] += alongY * d
		}
	}
	return l, len(l.words) > 0
}

// axes are word k's text matrix's axes: wordAxes, the first's matrix's.
func (l *placedLine) axes(k int) [4]float64 {
	if k == 0 {
		return [4]float64(l.matrix[:4])
	}
	return l.wordAxes
}

// ascents are the glyphless font's ascents, in thousandths of an em,
// that a word may take: steps of 2^¼ from 0.25 to 1.19 em, so that a
// word's box reaches at least 84% of its ink's height above the
// baseline, and few enough that a document needs at most ten font
// dictionaries (readers load each one, poppler on every page that names
// it; the eval corpus's documents use 1 to 10, most 6 to 10), whose
// maps are short (see fontSet).
var ascents = [...]int{250, 297, 354, 420, 500, 595, 707, 841, 1000, 1189}

// wordMetrics are the font metrics whose ascent reaches from the baseline
// base up to the top of box, rounded down to a step of ascents, at the
// font size em (both in canvas pixels): the box a reader draws then lies
// within the word's own ink above the baseline. Rounded down, not to the
// nearest step, and to the word's own top, not its line's: on the eval
// corpus's degraded documents that kept more words on ink than either
// (the line's top left specks and faint strokes out of some words and
// took in paper above others). The descent is a thousandth (readers
// ignore a 0): a descender's ink is below a word's baseline, the rest of
// the word above it, and a box reaching down to the lowest speck Tesseract
// put into the word fell off the ink of faded pages (R-0056).
func wordMetrics(box [4]int, base, em float64) fontMetrics {
	h := (base - float64(box[1])) / em * 1000
	m := fontMetrics{ascent: ascents[0], descent: -1}
	for _, a := range ascents {
		if float64(a) <= h {
			m.ascent = a
		}
	}
	return m
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

// textLayer is the content stream that draws lines, invisibly, with the
// fonts named by their metrics in names: one text object per line.
func textLayer(lines []placedLine, names map[fontMetrics]string) []byte {
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
		b.WriteString("BT\n3 Tr\n")
		for _, v := range l.matrix {
			b.WriteString(num(v))
			b.WriteByte(' ')
		}
		b.WriteString("Tm\n")
		at := 0.0 // the line matrix's offset from the line's origin
		font := ""
		for k, w := range l.words {
			if l.perWord {
				m := l.axes(k)
				fmt.Fprintf(&b, "%s %s %s %s %s %s Tm\n", num(m[0]), num(m[1]), num(m[2]), num(m[3]), num(w.origin[0]), num(w.origin[1]))
			} else if d := w.start - at; d != 0 {
				fmt.Fprintf(&b, "%s 0 Td\n", num(d))
				at = w.start
			}
			if f := names[w.metrics]; f != font {
				fmt.Fprintf(&b, "/%s %s Tf\n", f, num(l.size))
				font = f
			}
			n := float64(len(w.text) / 2)
			fmt.Fprintf(&b, "%s Tz\n<%X> Tj\n", num(100*w.width/(l.size*glyphAdvance*n)), w.text)
			if k+1 < len(l.words) {
				writeSpace(&b, l.words[k+1].start-w.start-w.width, l.size, l.level(k))
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
