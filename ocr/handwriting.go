package ocr

import (
	"slices"
)

// Handwriting: ink written by hand is text too.
//
// A note written on a referral ("allergic to penicillin") is read by
// Tesseract as junk, or not at all, and its strokes are not print: the
// coverage measurement, which looks for level lines of glyph-sized
// components, passes it by. So the page's ink is looked at once more for
// lines that are not level print:
//
//  1. The ink against its local paper (as coverage finds it) is split
//     into components of the size of handwritten letters and words, and
//     chained into lines as print is.
//  2. A line is handwritten when it is not like the page's print: its
//     letters are joined into strokes that fill little of their boxes
//     (cursive), or are much larger than the print's, or a little larger
//     on a baseline that wanders (see handLike). A long level line is print
//     (a heading, faded or not); capitals of one height are print (a
//     heading, a table's cells) unless, larger than the print, they are
//     left unread on a page whose print reads cleanly, or on a baseline
//     that wanders (a hand writing in capitals); capitals far larger
//     than the print and of one height are a stamp.
//     On a page of several inks (see colour.go), each ink's components
//     are chained alone, so a blue signature over a printed name or a
//     red stamp over a paragraph is a line of its own.
//  3. Handwritten lines of one ink close together make a region. A region of one
//     short line (a signature: a short, isolated mark) is not a note.
//
// Each region is read again line by line (the crop's contrast stretched,
// as recovery does) and only words read at handConf or more are kept: a
// region is read when such words cover most of its ink. See
// readHandwriting.
const (
	// handMaxInch is the tallest component a hand's word may be: loops
	// above and below reach further than print's ascenders.
	handMaxInch = 0.75
	// handStrokeFill is, in percent, the most of its box a joined stroke
	// fills: a cursive word fills 8–30% of its box, a word of blurred
	// print run together 40–70%.
	handStrokeFill = 34
	// handMinNoteInch is the least width of a one-line note: a signature
	// is 1 to 1.6 inches wide, a note's line two words or more.
	handMinNoteInch = 1.9
	// handMinInch is the least width of any note: two words of a hand
	// are 1.6 inches or more; a table's column of figures is narrower.
	handMinInch = 1.5
	// markInch is the least length of the longest stroke of a region
	// recorded that is no note: a tick is a quarter of an inch, the
	// specks of a noisy scan far less.
	markInch = 0.2
	// handConf is the least confidence of a word read in a handwritten
	// region: a hand Tesseract cannot read comes out at 20–70 as junk.
	handConf = 75
	// printWordShare: print's letters are, at the median, about 0.7 of
	// the height of the words Tesseract boxes.
	printWordShare = 0.75
)

// handLine is a line of ink, on the reduced page.
type handLine struct {
	box   [4]int
	comps [][4]int
	inks  []int // each component's ink pixels
	ink   int   // its ink's class (see inks), 1 on a page of one ink
}

// handLook is the page's ink as the handwriting step sees it.
type handLook struct {
	f     int // reduction factor
	wdpi  float64
	small *grayImage
	mask  []byte
	lines []handLine
	buf   *inkBuffers // the page's buffers, for the words' raster
	// the page's print: the median height of the
	// components of its lines read credibly
	printH float64
	// clean: credible words cover nearly all of handCleanPage of the
	// page's lines of four glyphs or more of the print's size (see
	// printReference)
	clean bool
	// frames are the components that may be a stamp's frame (see
	// findFrames), on the reduced page, found from ink when a region
	// first asks: most pages have none to ask
	ink        *inkLook
	frames     [][4]int
	framesDone bool
	// inks are the page's inks told apart by colour, nil on a page of
	// one ink (see inks)
	inks    *pageInks
	printed []printLine // the credible print's lines (see printLines)
}

// handFeatures are what tell a line of a hand from a line of print.
type handFeatures struct {
	joined  float64 // share of the ink in joined strokes
	wander  float64 // the components' bottoms off their fitted baseline, in median heights
	level   float64 // the same, the baseline fitted without descenders (see baselineWanders)
	height  float64 // median height over the print's
	covered float64 // share of the ink under credible words
	// uniform: three or more separate glyphs of one height (the 80th
	// percentile within 1.2 times the 20th), as capitals and digits are;
	// a hand's letters rise and fall.
	uniform bool
	median  float64 // the components' median height, on the reduced page
	// even is the share of the line's large glyphs (handHeight times the
	// print's or taller) within a tenth of their median height: a stamp's
	// capitals are one height, a hand's letters are not.
	even float64
}

// features measures line l; cover is the credible words, rasterised on
// the reduced page.
func (look *handLook) features(l handLine, cover []byte) handFeatures {
	var ft handFeatures
	total, joined, covered := 0, 0, 0
	heights := make([]float64, 0, len(l.comps))
	for k, b := range l.comps {
		w, h := b[2]-b[0], b[3]-b[1]
		total += l.inks[k]
		if w >= 3*h/2 && 100*l.inks[k] < handStrokeFill*w*h {
			joined += l.inks[k]
		}
		covered += look.coveredInk(b, cover)
		heights = append(heights, float64(h))
	}
	if total == 0 {
		return ft
	}
	ft.joined = float64(joined) / float64(total)
	ft.covered = min(1, float64(covered)/float64(total))
	mh := median(heights)
	ft.median = mh
	if look.printH > 0 {
		ft.height = mh / look.printH
	}
	first, level := baselineWanders(l.comps)
	ft.wander, ft.level = first/mh, level/mh
	ft.even = look.evenLarge(l)
	if len(heights) >= 3 && ft.joined < 0.2 {
		// heights is sorted by median
		lo, hi := heights[len(heights)/5], heights[len(heights)*4/5]
		ft.uniform = hi <= 1.2*lo
	}
	return ft
}

// handRegion is a region of handwritten lines, in page pixels, and what
// it is (see kindOf).
type handRegion struct {
	box   [4]int
	lines []handLine // on the reduced page
	feats []handFeatures
	kind  string
	stamp bool     // a stamp's lettering (see stamped)
	rows  int      // its rows of writing when first told (see rows)
	junk  [][4]int // words read in it under handConf, page pixels
}

// findHandwriting returns the handwritten regions of look's page, top to
// bottom, each with its kind; words are the page's words read, of which
// those at handConf or more are credible.
func (look *handLook) findHandwriting(words []Word) []handRegion {
	credible := credibleWords(words, handConf)
	cover := credibleCover(credible, look.f, look.small.w, look.small.h, look.buf.blank(look.small.w*look.small.h))
	look.printReference(cover, credible)
	var regions []handRegion
	for _, l := range look.lines {
		if ft := look.features(l, cover); handLike(l, ft, look.clean) {
			look.join(&regions, l, ft)
		}
	}
	for i := range regions {
		regions[i].stamp = look.stamped(regions[i])
	}
	for i := range regions {
		regions[i].kind = look.kindOf(i, regions, words, cover)
	}
	// A region read whole that is no note is print or text read: it is
	// in the reading, and no mark to record; nor are specks.
	least := int(markInch * look.wdpi)
	return slices.DeleteFunc(regions, func(r handRegion) bool {
		if r.kind == KindNote {
			return false
		}
		stroke := 0
		for _, l := range r.lines {
			for _, c := range l.comps {
				stroke = max(stroke, c[2]-c[0], c[3]-c[1])
			}
		}
		return stroke < least || look.readWhole(r, cover)
	})
}

// printReference sets the print's height: the median height of the
// components of the lines of four or more that credible words cover, and
// at least printWordShare of the credible words' median height. On a
// blurred page print's letters run together into words, a few lines of
// small print read well can set the first low, and larger print would
// pass for a hand.
func (look *handLook) printReference(cover []byte, credible []Word) {
	var heights []float64
	type seenLine struct {
		median float64
		read   bool
	}
	var seen []seenLine
	for _, l := range look.lines {
		if len(l.comps) < 4 {
			continue
		}
		ink, covered := look.lineInk(l, cover)
		hs := make([]float64, len(l.comps))
		for i, b := range l.comps {
			hs[i] = float64(b[3] - b[1])
		}
		read := 10*covered >= 9*ink
		seen = append(seen, seenLine{median(hs), read})
		if read {
			heights = append(heights, hs...)
		}
	}
	look.printH = median(heights)
	var words []float64
	for _, w := range ordinaryWords(credible) {
		words = append(words, float64(w.Box[3]-w.Box[1])/float64(look.f))
	}
	look.printH = max(look.printH, printWordShare*median(words))
	// The page reads cleanly when its print does: its lines of the
	// print's size, read. A line far larger is a heading or a hand, not
	// print whose reading is in question; counted, a note of three rows
	// under twelve lines of print read made the page degraded.
	lines, read := 0, 0
	for _, l := range seen {
		if look.printH > 0 && l.median >= handHeight*look.printH {
			continue
		}
		lines++
		if l.read {
			read++
		}
	}
	look.clean = lines > 0 && float64(read) >= handCleanPage*float64(lines)
}

// coveredInk counts the ink pixels of box b (reduced page) under cover.
func (look *handLook) coveredInk(b [4]int, cover []byte) int {
	n := 0
	for y := b[1]; y < b[3]; y++ {
		m, c := look.mask[y*look.small.w:], cover[y*look.small.w:]
		for x := b[0]; x < b[2]; x++ {
			n += int(m[x] & c[x])
		}
	}
	return n
}

// Handwritten lines: much larger than the page's print, joined, or a
// little larger on a baseline that wanders. The spread of the letters'
// heights tells nothing: print's run from its x-height to its capitals,
// and unread print has no reference to be measured against.
const (
	handHeight = 1.35
	handJoined = 0.4
	// a line handLarger times the print's height on a baseline handWander
	// of its height off level is a hand: print of that size, a heading,
	// stands on its line.
	handLarger = 1.15
	handWander = 0.12
	// handChained: a line this many times as tall as its median
	// component is rows of print chained through a tall mark (a stamp, a
	// logo); a note's two lines run together are about 4 times.
	handChained = 4.5
	// stampHeight, stampEven: a line whose large glyphs, stampHeight
	// times the print's height or more at the median, are stampEven or
	// more of one height (see evenLarge) is a stamp's lettering (30 pt
	// capitals over 12 pt print are about 3.2 times its median glyph); a
	// hand's large letters are 44–47% of one height.
	stampHeight = 2.5
	stampEven   = 0.6
	// handCleanPage is the share of a page's lines read from which its
	// print reads cleanly.
	handCleanPage = 0.8
	// handReadLine is the share of a line credible words cover from which
	// the line is read.
	handReadLine = 0.9
	// capsWander, capsMinGlyphs: on a page whose print does not read
	// cleanly (degraded), capitals larger than the print and unread are a
	// hand when their baseline wanders by capsWander of their height or
	// more over capsMinGlyphs glyphs or more: printed capitals (a
	// heading, a stamp) stand on their line, 0.013–0.035 off it even
	// blurred and specked, while a hand's words each sit on their own,
	// 0.05–0.08 off (Humor Sans at 100 to 300 dpi, blurred or not).
	capsWander    = 0.05
	capsMinGlyphs = 5
)

// handLike reports whether a line of features ft may be written by hand.
// A long line of separate letters on a level baseline is print: a
// heading, faded or not, or a line of larger print on a blurred page.
func handLike(l handLine, ft handFeatures, clean bool) bool {
	// On a page whose print reads cleanly, capitals larger than it and
	// left unread are a hand that writes in capitals; on a degraded page
	// they are when their baseline wanders, as print's does not.
	capitals := ft.uniform && ft.height >= handHeight && ft.covered < handReadLine &&
		(clean || (ft.wander >= capsWander && len(l.comps) >= capsMinGlyphs))
	if len(l.comps) >= 12 && ft.level < 0.04 && ft.joined < 0.2 && !capitals {
		return false // level print, read or faded: a heading
	}
	if ft.height >= stampHeight && ft.even >= stampEven && ft.joined < 0.2 {
		return false // a stamp: capitals far larger than the print, of one height
	}
	if ft.uniform && !capitals {
		return false // capitals or digits: a table's cells, a heading
	}
	if h := l.box[3] - l.box[1]; float64(h) > handChained*ft.median {
		return false // rows of print chained through a tall mark
	}
	return ft.height >= handHeight || ft.joined >= handJoined || (ft.height >= handLarger && ft.wander >= handWander)
}

// note reports whether region r is a note: some of its lines are not read
// credibly, and it is not a signature. Ink under another ink's strokes
// (see crossing) is not counted unread: it is crossed out. A signature is a short mark: a
// region narrower than a note's line whose unread ink is at most four
// strokes, or any region whose unread ink is at most two; a region under
// handMinInch wide is no note either.
func (look *handLook) note(r handRegion, cover []byte, crossing [][4]int) bool {
	unread := 0
	for k, l := range r.lines {
		if r.feats[k].covered >= handReadLine {
			continue
		}
		for i, b := range l.comps {
			if 10*look.coveredInk(b, cover) < 9*l.inks[i] && !slices.ContainsFunc(crossing, func(c [4]int) bool { return meets(b, c) }) {
				unread++
			}
		}
	}
	w := r.box[2] - r.box[0]
	narrow := w < int(handMinNoteInch*look.wdpi)*look.f
	if w < int(handMinInch*look.wdpi)*look.f {
		return false // a mark, a dotted rule down the page, a table's column
	}
	if r.box[3]-r.box[1] >= w {
		return false // as tall as it is wide: a drawing, not lines of a note
	}
	return unread >= 5 || (unread >= 3 && !narrow)
}
