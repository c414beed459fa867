package ocr

import (
	"image"
	"slices"

	"github.com/otiai10/gosseract/v2"
)

// Columns: read a two-column section column by column.
//
// Tesseract reads a page as one column of text of varying sizes (page
// segmentation mode 4), which keeps a table's rows together: on the
// evaluation corpus it misread fewer characters than automatic layout,
// which splits a table into columns read one after the other. But a
// section set in two columns of prose is then read line by line across
// both, each line of the left column followed by the line beside it.
//
// The words Tesseract read credibly show such a section: rows of exactly
// two runs of words, side by side, apart by more than a word space (a
// gutter), each run a good part of the row's width and several words
// long, for three rows or more whose gutters line up. The columns may be
// of any widths, the gutter of any size from about an em, and the section
// may start below or end above full-width print. A table's rows have three
// cells or more, or short ones, and do not qualify; nor does a row whose
// print crosses the gutter. When Tesseract's own lines in that band cross
// the gutter, the band's words are put in column order (see readColumns).

const (
	// minColumnRows is how many rows in a band a column section needs.
	minColumnRows = 3
	// minColumnShare is the least share of its row's width each of the two
	// runs of a column row must cover, and minColumnRun the least width in
	// the row's heights (six or so words): a table's cells are narrower.
	minColumnShare = 0.15
	minColumnRun   = 6
	// minGutterHeights is the narrowest gutter, in word heights (the
	// tallest word of the row, ascenders to descenders, about an em): a
	// word space is a quarter to two thirds of one, even in a monospaced
	// face, and a justified line's widest spaces do not line up over rows.
	minGutterHeights = 1.0
)

// columnBand is a two-column section: rows y0 to y1, split at gutter,
// from x0 to x1, in page pixels; lo to hi is the gap between the columns'
// print that every row of two runs leaves.
type columnBand struct {
	x0, y0, x1, y1 int
	gutter         int
	lo, hi         int
}

// colRow is a row of words (those that overlap vertically) with its runs
// of print: words closer than a gutter are one run.
type colRow struct {
	y0, y1, x0, x1 int
	h              int      // the tallest word's height
	segs           [][2]int // the words' x0, x1, left to right
	runs           [][2]int // x0, x1, left to right
}

// gutter returns the gap between the row's two runs when the row is one of
// a two-column section's: exactly two runs, each at least minColumnShare
// of the row's width and minColumnRun heights. ok is false otherwise.
func (r colRow) gutter() (lo, hi int, ok bool) {
	if len(r.runs) != 2 {
		return 0, 0, false
	}
	width := float64(r.x1 - r.x0)
	for _, run := range r.runs {
		if w := float64(run[1] - run[0]); w < minColumnShare*width || w < minColumnRun*float64(r.h) {
			return 0, 0, false
		}
	}
	return r.runs[0][1], r.runs[1][0], true
}

// clear reports whether no word of the row crosses x.
func (r colRow) clear(x int) bool {
	for _, s := range r.segs {
		if s[0] < x && s[1] > x {
			return false
		}
	}
	return true
}

// sides reports whether the row has print left of x, and right of it.
func (r colRow) sides(x int) (left, right bool) {
	return r.x0 < x, r.x1 > x
}

// colRows groups word boxes into rows, top to bottom.
func colRows(boxes [][4]int) []colRow {
	sorted := slices.Clone(boxes)
	slices.SortFunc(sorted, func(a, b [4]int) int { return (a[1] + a[3]) - (b[1] + b[3]) })
	var rows []colRow
	for i := 0; i < len(sorted); {
		// A word joins the row when it shares half its height, or half
		// the row's, with the row so far: short words ("a", "on") sit
		// between a tall word's top and bottom.
		y0, y1 := sorted[i][1], sorted[i][3]
		seg := [][4]int{sorted[i]}
		j := i + 1
		for ; j < len(sorted); j++ {
			b := sorted[j]
			h := min(y1-y0, b[3]-b[1])
			if overlap := min(y1, b[3]) - max(y0, b[1]); 2*overlap < h {
				break
			}
			seg = append(seg, b)
			y0, y1 = min(y0, b[1]), max(y1, b[3])
		}
		i = j
		slices.SortFunc(seg, func(a, b [4]int) int { return a[0] - b[0] })
		r := colRow{y0: seg[0][1], y1: seg[0][3], x0: seg[0][0], x1: seg[0][2]}
		for _, sg := range seg {
			r.y0, r.y1, r.x1 = min(r.y0, sg[1]), max(r.y1, sg[3]), max(r.x1, sg[2])
			r.h = max(r.h, sg[3]-sg[1])
			r.segs = append(r.segs, [2]int{sg[0], sg[2]})
		}
		for _, sg := range seg {
			if n := len(r.runs); n > 0 && float64(sg[0]-r.runs[n-1][1]) <= minGutterHeights*float64(r.h) {
				r.runs[n-1][1] = max(r.runs[n-1][1], sg[2])
				continue
			}
			r.runs = append(r.runs, [2]int{sg[0], sg[2]})
		}
		rows = append(rows, r)
	}
	return rows
}

// columnBands finds the two-column sections among the word boxes: a core
// of at least minColumnRows rows of two wide runs whose gutters line up
// (what they share is still a gutter wide),
// with rows between them that stay clear of the gutter (a paragraph's
// short last line, a gutter narrower than a row's own gap); then the row
// just above when it has a run on each side of the gutter (the columns'
// headings), and the rows below that stay clear of it and follow at the
// core's line pitch (the columns' ends), as long as a column that ended
// does not start again (a table or paragraph on one side, below the
// columns, is not theirs). A gutter that holds a blob (a stamp over a
// paragraph splits its lines as a gutter would) is no gutter.
func columnBands(boxes [][4]int, blobs [][4]int) []columnBand {
	rows := colRows(boxes)
	var bands []columnBand
	for i := 0; i < len(rows); {
		lo, hi, ok := rows[i].gutter()
		if !ok {
			i++
			continue
		}
		first, last, n := i, i, 1
		j := i + 1
		for ; j < len(rows); j++ {
			r := rows[j]
			if l, h, ok := r.gutter(); ok && float64(min(hi, h)-max(lo, l)) >= minGutterHeights*float64(r.h) {
				lo, hi, last = max(lo, l), min(hi, h), j
				n++
				continue
			}
			if !r.clear((lo + hi) / 2) {
				break
			}
		}
		if n < minColumnRows {
			i = max(j, i+1)
			continue
		}
		g := (lo + hi) / 2
		last = columnEnds(rows, first, last, g)
		first = columnHeading(rows, first, g)
		b := columnBand{x0: rows[first].x0, y0: rows[first].y0, x1: rows[first].x1, y1: rows[first].y1, gutter: g, lo: lo, hi: hi}
		for _, r := range rows[first : last+1] {
			b.x0, b.x1 = min(b.x0, r.x0), max(b.x1, r.x1)
			b.y0, b.y1 = min(b.y0, r.y0), max(b.y1, r.y1)
		}
		i = last + 1
		if slices.ContainsFunc(blobs, func(o [4]int) bool { return o[0] < hi && lo < o[2] && o[1] < b.y1 && b.y0 < o[3] }) {
			continue
		}
		bands = append(bands, b)
	}
	return bands
}

// columnHeading returns the band's first row: the row above the core's
// first when it has a run on each side of the gutter g, close above.
func columnHeading(rows []colRow, first, g int) int {
	k := first - 1
	if k >= 0 && len(rows[k].runs) == 2 && rows[k].clear(g) && rows[k].runs[0][1] <= g && rows[k].runs[1][0] >= g &&
		rows[first].y0-rows[k].y1 <= 2*rows[k].h {
		return k
	}
	return first
}

// columnEnds returns the band's last row: the rows below the core's last
// that stay clear of the gutter g and follow at the core's line pitch (a
// heading after a blank line is not the columns'), until a side that
// ended has print again.
func columnEnds(rows []colRow, first, last, g int) int {
	centre := func(r colRow) int { return r.y0 + r.y1 } // twice the centre
	pitches := make([]int, 0, last-first)
	for k := first + 1; k <= last; k++ {
		pitches = append(pitches, centre(rows[k])-centre(rows[k-1]))
	}
	slices.Sort(pitches)
	pitch := pitches[len(pitches)/2]
	leftOn, rightOn := true, true
	for last+1 < len(rows) {
		r := rows[last+1]
		if !r.clear(g) || 4*(centre(r)-centre(rows[last])) > 5*pitch {
			break
		}
		l, rt := r.sides(g)
		if (l && !leftOn) || (rt && !rightOn) {
			break
		}
		leftOn, rightOn = l, rt
		last++
	}
	return last
}

// wordBoxes returns the boxes of the words.
func wordBoxes(words []Word) [][4]int {
	out := make([][4]int, len(words))
	for i, w := range words {
		out[i] = w.Box
	}
	return out
}

// crossesGutter reports whether one of Tesseract's lines holds words on
// both sides of the band's gutter.
func crossesGutter(boxes []gosseract.BoundingBox, b columnBand) bool {
	type key struct{ block, par, line int }
	side := map[key]int{} // 1 left, 2 right, 3 both
	for _, w := range boxes {
		cx, cy := (w.Box.Min.X+w.Box.Max.X)/2, (w.Box.Min.Y+w.Box.Max.Y)/2
		if cy < b.y0 || cy >= b.y1 || cx < b.x0 || cx >= b.x1 {
			continue
		}
		k := key{w.BlockNum, w.ParNum, w.LineNum}
		if cx < b.gutter {
			side[k] |= 1
		} else {
			side[k] |= 2
		}
		if side[k] == 3 {
			return true
		}
	}
	return false
}

// columnBlock numbers the blocks of columns read alone.
const columnBlock = 1 << 21

// inBand reports whether a word's centre lies in the band.
func (b columnBand) inBand(w gosseract.BoundingBox) bool {
	cx, cy := (w.Box.Min.X+w.Box.Max.X)/2, (w.Box.Min.Y+w.Box.Max.Y)/2
	return cy >= b.y0 && cy < b.y1 && cx >= b.x0 && cx < b.x1
}

// straddles reports whether one of the band's words lies across its
// gutter, reaching the print on both sides: Tesseract read ink of both
// columns as one word, which putting the words in column order cannot
// undo. A speck read in the gutter is no such word.
func straddles(boxes []gosseract.BoundingBox, b columnBand) bool {
	return slices.ContainsFunc(boxes, func(w gosseract.BoundingBox) bool {
		return b.inBand(w) && w.Box.Min.X < b.lo && w.Box.Max.X > b.hi
	})
}

// readColumns puts each two-column band the reading r ran across in
// column order, and returns the reading with the band's words replaced
// and how many bands had to be read again. Tesseract's words are sound
// where its lines merely run across the gutter: each word is on one side,
// so the band's words are split at the gutter, the left column's lines
// first, each side keeping Tesseract's order. Only where a word lies
// across the gutter is each column read alone (cut out with a margin of
// paper), which costs a second reading of the band.
func (e *engine) readColumns(p *prepared, r recognition, bands []columnBand) (_ recognition, changed bool, reread int, err error) {
	for k, b := range bands {
		if !crossesGutter(r.boxes, b) {
			continue
		}
		var cols []gosseract.BoundingBox
		if straddles(r.boxes, b) {
			if cols, err = e.readBand(p, b, k); err != nil {
				return r, false, 0, err
			}
			reread++
		} else {
			for c := range 2 {
				for _, w := range r.boxes {
					if b.inBand(w) && ((w.Box.Min.X+w.Box.Max.X)/2 < b.gutter) == (c == 0) {
						w.BlockNum += columnBlock + 1000*(2*k+c)
						cols = append(cols, w)
					}
				}
			}
		}
		// The band's words go; the columns' take the place of the first.
		at := slices.IndexFunc(r.boxes, b.inBand)
		if at < 0 {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(r.boxes), b.inBand)
		at = min(at, len(kept))
		r.boxes = slices.Insert(kept, at, cols...)
		changed = true
	}
	if changed {
		r.words, r.text, r.mean = assemble(r.boxes)
	}
	return r, changed, reread, nil
}

// readBand reads each column of band b (the k-th) alone, the left first,
// and returns their words in page pixels.
func (e *engine) readBand(p *prepared, b columnBand, k int) ([]gosseract.BoundingBox, error) {
	var cols []gosseract.BoundingBox
	for c, rect := range [][4]int{{b.x0, b.y0, b.gutter, b.y1}, {b.gutter, b.y0, b.x1, b.y1}} {
		crop, origin := columnCrop(p.img, rect, p.paper)
		q, err := e.recognise(crop, p.dpi)
		if err != nil {
			return nil, err
		}
		for _, w := range q.boxes {
			w.Box = w.Box.Add(origin)
			w.BlockNum += columnBlock + 1000*(2*k+c)
			cols = append(cols, w)
		}
	}
	return cols, nil
}

// columnCrop cuts rect out of img with a small margin of paper around it,
// so that no letter of the other column is cut in half at its edge.
func columnCrop(img *grayImage, rect [4]int, paper uint8) (*grayImage, image.Point) {
	x0, y0 := max(0, rect[0]), max(0, rect[1])
	x1, y1 := min(img.w, rect[2]), min(img.h, rect[3])
	m := max(4, (y1-y0)/50)
	w, h := x1-x0+2*m, y1-y0+2*m
	crop := newGrayImage(w, h)
	for i := range crop.pix {
		crop.pix[i] = paper
	}
	for y := y0; y < y1; y++ {
		copy(crop.pix[(y-y0+m)*w+m:], img.pix[y*img.w+x0:y*img.w+x1])
	}
	return crop, image.Point{X: x0 - m, Y: y0 - m}
}
