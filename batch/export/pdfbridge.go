package export

// The space between two words of a line, and the bridge over a wide one.
//
// Poppler's default mode (pdftotext, and the desktop indexers built on
// it) drops every space character it is drawn (a glyph whose text is one
// white-space character only ends the word), and rebuilds lines from the
// gaps between words: a word joins its neighbour's block when the gap is
// under 0.3 font sizes, or under 1 size while at most three lines of the
// block have one there. A table's row, whose cells lie several sizes
// apart, became a block per cell; poppler then ordered the cells by its
// table detection, which a speck read as a word beside a cell defeats,
// and read such tables column by column (eval R-0067: "Heart rate" and
// "Blood pressure" after the last row's other cells).
//
// A gap wider than colSpacing sizes is drawn as a bridge: the space glyph,
// stretched to the gap less bridgeSide sizes at each end, inside a
// marked-content sequence /Span <</ActualText (two spaces)>>. Poppler
// takes the two spaces as the text of that glyph, which it does not drop
// (only a lone white-space character is dropped), so the bridge is a word
// of its own, under 0.3 sizes from the words either side of it: the row
// stays one line of one block, and its words keep the boxes they had.
// Readers that do not apply ActualText (pdf.js, PDFBox) see the space
// glyph, as before. The gaps narrower than colSpacing sizes (between the
// words of a sentence) are drawn as before, so poppler's text there keeps
// single spaces.
//
// Only words on one baseline are bridged. A skewed line's words step
// along its slant (see pdflines.go), a row's far end a line or more from
// its start; bridged, its words fell into the lines above and below in
// poppler's blocks (eval R-0028's third page, skewed 2.9°: 26 of its 76
// phrases found before, 22 bridged), where unbridged they stay cells.

import (
	"bytes"
	"fmt"
	"math"
)

// bridgeSide is the gap, as a share of the font size, left between a
// bridge and the words either side of it: over poppler's 0.1 (a wider
// gap starts a new word, so the bridge does not join the word's box) and
// under its 0.3 (a narrower gap joins the block).
const bridgeSide = 0.15

// bridgeText is the ActualText of a bridge: two spaces (UTF-16BE with a
// byte order mark), which poppler keeps where it drops one.
const bridgeText = "<FEFF00200020>"

// writeSpace draws the space between two words gap points apart (the
// text position at the first's end) on a line at font size size; level
// says whether the two words share a baseline (see level).
func writeSpace(b *bytes.Buffer, gap, size float64, level bool) {
	gap = max(gap, minSpace*size)
	if gap <= colSpacing*size || !level {
		fmt.Fprintf(b, "%s Tz\n<0020> Tj\n", num(100*gap/(size*glyphAdvance)))
		return
	}
	side := bridgeSide * size
	tz := 100 * (gap - 2*side) / (size * glyphAdvance)
	// A TJ number moves the text position back by a thousandth of the
	// size, times the horizontal scaling.
	fmt.Fprintf(b, "/Span <</ActualText %s>> BDC\n%s Tz\n[%s <0020>] TJ\nEMC\n",
		bridgeText, num(tz), num(-1000*side/(size*tz/100)))
}

// maxDrift is how far apart, as a share of the font size, two words'
// baselines may lie and still count as one (level): rounding, no slant.
const maxDrift = 0.01

// level is whether word k of l and the next lie on one baseline: on a
// line set whole (one text matrix), or drawn word by word whose origins
// differ by under maxDrift sizes across the words' axes.
func (l *placedLine) level(k int) bool {
	if !l.perWord {
		return true
	}
	a := l.axes(k + 1)
	o, p := l.words[k].origin, l.words[k+1].origin
	drift := (p[0]-o[0])*a[2] + (p[1]-o[1])*a[3]
	return math.Abs(drift) <= maxDrift*l.size
}
