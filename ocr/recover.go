package ocr

import (
	"image"
	"slices"

	"github.com/otiai10/gosseract/v2"
)

// Recovery: read again what the first reading left out.
//
// A line the coverage measurement finds mostly unread is, nearly always,
// print too faint for Tesseract's global threshold. Lines close together
// are read again as one block: the block is cut out of the page with a
// margin, the words already read in it are painted over with paper (so
// they are not read twice), its contrast is stretched so that its own
// darkest ink is black and its paper white, and Tesseract reads it alone,
// where its threshold is set by that ink and nothing else. The words it
// finds, with their boxes moved back into the page and their confidences,
// join the reading as paragraphs of their own, placed in reading order
// before the first line of the page that starts below them.

const (
	// minRecoverShare is the uncovered share from which a page is read
	// again. Below it the page pays only the measurement: stray marks in
	// line with text leave clean pages a share of 0–1%.
	minRecoverShare = 0.01
	// minRecoveredConf is the least confidence a recovered word needs
	// whatever the policy's cover confidence: a stretched crop of noise
	// reads as junk at 0–20.
	minRecoveredConf = 30
	// A recovered word of fewer than shortRecovered letters and digits
	// is kept only at minShortRecoveredConf or more: a stretched crop of
	// noise, a stain or a page's edge reads as short junk ("Ey", "oni",
	// "2") at 30–60, which made pages read worse than without recovery,
	// while faint print comes back as words, most of them longer.
	shortRecovered        = 4
	minShortRecoveredConf = 65
	// minStretch is the least contrast a block must have between its ink
	// and its paper to be worth reading.
	minStretch = 16
	// recoveredBlock numbers the recovered blocks after any block
	// Tesseract gives a page.
	recoveredBlock = 1 << 20
)

// unreadBlock is a block of mostly unread lines found by one look.
type unreadBlock struct {
	box   [4]int
	level int // the look's (see textLine)
}

// unreadBlocks merges the mostly unread lines of c into blocks: lines of
// the same look whose boxes are less than a line's height apart vertically
// and overlap horizontally. It returns them top to bottom.
func unreadBlocks(c coverage) []unreadBlock {
	var blocks []unreadBlock
	for _, i := range c.uncovered {
		l := c.lines[i]
		b := l.box
		h := b[3] - b[1]
		merged := false
		for k, blk := range blocks {
			a := blk.box
			if blk.level == l.level && b[1]-a[3] <= h && a[1]-b[3] <= h && b[0] < a[2] && a[0] < b[2] {
				blocks[k].box = union4(a, b)
				merged = true
				break
			}
		}
		if !merged {
			blocks = append(blocks, unreadBlock{box: b, level: l.level})
		}
	}
	// The faint look's blocks first, then the lighter cut's: a block over
	// the same lines is then read with what the earlier recovered painted
	// over.
	rank := func(level int) int {
		if level == 0 {
			return -1
		}
		return 256 - level
	}
	slices.SortFunc(blocks, func(a, b unreadBlock) int {
		if d := rank(a.level) - rank(b.level); d != 0 {
			return d
		}
		return a.box[1] - b.box[1]
	})
	return blocks
}

// recoverText reads again the unread blocks of the prepared page p, whose
// reading r left the coverage c, and returns the reading with what it
// recovered merged in, and what it added and dropped. A word found is
// kept only when its confidence is the policy's cover confidence or more
// and no word of ordinary height, nor a credible one, lies at the same
// place (see samePlace): the same word read credibly again confirms a
// word read under the cut (see repeats), and a tall word read under the
// cut (junk read into a stamp over print) is replaced.
func (e *engine) recoverText(p *prepared, r recognition, c coverage) (recognition, Recovery, error) {
	var found []gosseract.BoundingBox
	var replaced []replacement // words read under the cut that a credible reading replaces
	var counts Recovery
	cut := max(minRecoveredConf, float64(e.cfg.CoverConfidence))
	// The words already read credibly are painted over in each crop, but
	// not the tall ones: those are a stamp's letters, or junk read into
	// one, over print that was not read. Words read under the cut are
	// read again: a credible repeat confirms them.
	read := credibleWords(ordinaryWords(r.words), cut)
	seen := slices.Clone(r.words) // what a recovered word may repeat
	limit := tallLimit(r.words)
	tall := func(w Word) bool { return limit > 0 && float64(w.Box[3]-w.Box[1]) > limit }
	for k, b := range unreadBlocks(c) {
		crop, origin, ok := recoveryCrop(p.img, b, read, p.paper)
		if !ok {
			continue
		}
		q, err := e.recognise(crop, p.dpi)
		if err != nil {
			return r, counts, err
		}
		for _, box := range q.boxes {
			if AlnumCount(box.Word) == 0 {
				continue
			}
			box.Box = box.Box.Add(origin)
			wb := [4]int{box.Box.Min.X, box.Box.Min.Y, box.Box.Max.X, box.Box.Max.Y}
			switch {
			case box.Confidence < cut:
				counts.DroppedLowConfidence++
				continue
			}
			if i := repeats(box.Word, wb, seen); i >= 0 {
				counts.DroppedRepeat++
				if seen[i].Conf < cut {
					w := Word{Text: seen[i].Text, Conf: box.Confidence, Box: seen[i].Box}
					r.confirmed = append(r.confirmed, w)
					read = append(read, w)
				}
				continue
			}
			if AlnumCount(box.Word) < shortRecovered && box.Confidence < minShortRecoveredConf {
				counts.DroppedLowConfidence++ // junk read into noise or a stain
				continue
			}
			places := samePlace(wb, seen)
			if slices.ContainsFunc(places, func(i int) bool { return seen[i].Conf >= cut || !tall(seen[i]) }) ||
				(len(places) > 0 && box.Confidence < CredibleConf) {
				// That ink was read already, and only a credible word
				// replaces junk.
				counts.DroppedRepeat++
				continue
			}
			for _, i := range places {
				replaced = append(replaced, replacement{box: seen[i].Box, by: len(found)})
				seen[i].Text = ""
				counts.Replaced++
			}
			box.BlockNum += recoveredBlock + 1000*k
			found = append(found, box)
			read = append(read, Word{Text: box.Word, Box: wb})
			seen = append(seen, Word{Text: box.Word, Conf: box.Confidence, Box: wb})
		}
	}
	found, replaced, lone := dropLoneShort(found, replaced)
	counts.DroppedLowConfidence += lone
	counts.Added = len(found)
	// mergeReading inserts block by block, in the order found: put the
	// blocks back in page order first.
	slices.SortStableFunc(found, func(a, b gosseract.BoundingBox) int { return a.BlockNum - b.BlockNum })
	if len(found) == 0 {
		return r, counts, nil
	}
	page := slices.DeleteFunc(slices.Clone(r.boxes), func(b gosseract.BoundingBox) bool {
		bb := [4]int{b.Box.Min.X, b.Box.Min.Y, b.Box.Max.X, b.Box.Max.Y}
		return b.Confidence < cut && slices.ContainsFunc(replaced, func(r replacement) bool { return r.box == bb })
	})
	merged := mergeReading(page, found)
	out := recognition{boxes: merged, confirmed: r.confirmed}
	out.words, out.text, out.mean = assemble(merged)
	return out, counts, nil
}

// tallLimit is the height over which a word is tall: tallWord times the
// median word height; 0 when no word has a height.
func tallLimit(words []Word) float64 {
	var heights []int
	for _, w := range words {
		if h := w.Box[3] - w.Box[1]; h > 0 {
			heights = append(heights, h)
		}
	}
	if len(heights) == 0 {
		return 0
	}
	slices.Sort(heights)
	return tallWord * float64(heights[len(heights)/2])
}

// ordinaryWords returns the words no taller than tallWord times the
// median word height.
func ordinaryWords(words []Word) []Word {
	limit := tallLimit(words)
	if limit == 0 {
		return nil
	}
	var out []Word
	for _, w := range words {
		if float64(w.Box[3]-w.Box[1]) <= limit {
			out = append(out, w)
		}
	}
	return out
}

// recoveryCrop cuts block blk out of img with a margin of half a line,
// paints the words already read in it with paper, and stretches its
// contrast; for a block a dark look found, it first paints over
// everything lighter than that look's level, the overlay above the print.
// It returns the crop, where its origin lies in the page, and false when
// the block has no contrast left to read.
func recoveryCrop(img *grayImage, blk unreadBlock, read []Word, paper uint8) (*grayImage, image.Point, bool) {
	b := blk.box
	m := (b[3] - b[1]) / 2
	x0, y0 := max(0, b[0]-m), max(0, b[1]-m)
	x1, y1 := min(img.w, b[2]+m), min(img.h, b[3]+m)
	w, h := x1-x0, y1-y0
	if w < 4 || h < 4 {
		return nil, image.Point{}, false
	}
	crop := newGrayImage(w, h)
	for y := range h {
		copy(crop.pix[y*w:(y+1)*w], img.pix[(y0+y)*img.w+x0:(y0+y)*img.w+x1])
	}
	for _, wd := range read {
		wb := wd.Box
		pad := (wb[3] - wb[1]) / 5
		for y := max(y0, wb[1]-pad); y < min(y1, wb[3]+pad); y++ {
			row := crop.pix[(y-y0)*w : (y-y0+1)*w]
			for x := max(x0, wb[0]-pad); x < min(x1, wb[2]+pad); x++ {
				row[x-x0] = paper
			}
		}
	}
	if blk.level > 0 {
		for i, v := range crop.pix {
			if int(v) >= blk.level {
				crop.pix[i] = paper
			}
		}
	}
	var hist [256]int
	for _, v := range crop.pix {
		hist[v]++
	}
	lo, hi := percentile(hist, 0.005), percentile(hist, paperPercentile)
	if hi-lo < minStretch {
		return nil, image.Point{}, false
	}
	var lut [256]byte
	for v := range lut {
		lut[v] = uint8(min(255, max(0, 255*(v-lo)/(hi-lo))))
	}
	for i, v := range crop.pix {
		crop.pix[i] = lut[v]
	}
	return crop, image.Point{X: x0, Y: y0}, true
}

// percentile returns the gray value below which share of hist's pixels
// lie.
func percentile(hist [256]int, share float64) int {
	total := 0
	for _, n := range hist {
		total += n
	}
	want, seen := int(share*float64(total)), 0
	for v, n := range hist {
		seen += n
		if seen > want {
			return v
		}
	}
	return 255
}

// mergeReading inserts the recovered boxes into the page's reading. A
// box that continues a line of the reading (see lineFor) joins that line
// where it lies from left to right: print a stamp or a stain hid in the
// middle of a line is read back into it. The others go block by block
// before the first line that starts below the block's top; a block below
// every line goes at the end.
func mergeReading(page, found []gosseract.BoundingBox) []gosseract.BoundingBox {
	out := slices.Clone(page)
	var rest []gosseract.BoundingBox
	for _, f := range found {
		start, end, ok := lineFor(out, f.Box)
		if !ok {
			rest = append(rest, f)
			continue
		}
		at := end
		for i := start; i < end; i++ {
			if out[i].Box.Min.X > f.Box.Min.X {
				at = i
				break
			}
		}
		f.BlockNum, f.ParNum, f.LineNum = out[start].BlockNum, out[start].ParNum, out[start].LineNum
		out = slices.Insert(out, at, f)
	}
	found = rest
	for start := 0; start < len(found); {
		end := start + 1
		top := found[start].Box.Min.Y
		for end < len(found) && found[end].BlockNum == found[start].BlockNum {
			top = min(top, found[end].Box.Min.Y)
			end++
		}
		at := len(out)
		for i, b := range out {
			newLine := i == 0 || b.BlockNum != out[i-1].BlockNum || b.ParNum != out[i-1].ParNum || b.LineNum != out[i-1].LineNum
			if newLine && b.Box.Min.Y > top {
				at = i
				break
			}
		}
		out = slices.Insert(out, at, found[start:end]...)
		start = end
	}
	return out
}

// lineFor returns the line of the reading (the indexes start to end of
// its words) that box b continues. A line's band is its words' median top
// to median bottom (a junk word read into a stamp can be several lines
// tall); b continues it when it shares at least half of the lower one's
// height with the band, is from half to twice its height, and lies within
// two of those heights of the line's ends. Of several, the one it shares
// most height with.
func lineFor(reading []gosseract.BoundingBox, b image.Rectangle) (start, end int, ok bool) {
	best := 0
	var tops, bottoms []int
	for s := 0; s < len(reading); {
		e := s + 1
		for e < len(reading) && reading[e].BlockNum == reading[s].BlockNum && reading[e].ParNum == reading[s].ParNum && reading[e].LineNum == reading[s].LineNum {
			e++
		}
		tops, bottoms = tops[:0], bottoms[:0]
		x0, x1 := reading[s].Box.Min.X, reading[s].Box.Max.X
		for _, w := range reading[s:e] {
			tops, bottoms = append(tops, w.Box.Min.Y), append(bottoms, w.Box.Max.Y)
			x0, x1 = min(x0, w.Box.Min.X), max(x1, w.Box.Max.X)
		}
		slices.Sort(tops)
		slices.Sort(bottoms)
		y0, y1 := tops[len(tops)/2], bottoms[len(bottoms)/2]
		h := y1 - y0
		overlap := min(y1, b.Max.Y) - max(y0, b.Min.Y)
		near := b.Min.X <= x1+2*h && b.Max.X >= x0-2*h
		if h > 0 && near && 2*overlap >= min(h, b.Dy()) && 2*b.Dy() >= h && b.Dy() <= 2*h && overlap > best {
			start, end, ok, best = s, e, true, overlap
		}
		s = e
	}
	return start, end, ok
}
