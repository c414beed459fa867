package ocr

import (
	"math"
	"slices"

	"github.com/refbatch/refbatch/ocr/result"
)

// What a handwritten region is. Every referral is signed and many are
// stamped on arrival; a tick, a ring round a word, a stroke through
// one are made by hand too. None of them is a note, and only a note that
// was not read needs a person. A region is told by the cues a person
// uses, in this order:
//
//  1. A stamp: its letters sit inside a frame (a large ring or box of
//     ink round them, at any angle, closed or ruled lines the scan
//     broke: see ruledFrame), or they are capitals of one size
//     whose centres lie on a straight line at any angle, as a rubber
//     stamp prints them and no hand writes them.
//  2. A signature: where it sits and what it is. Next to the printed
//     signs of a sign-off (a valediction such as "Yours sincerely" above
//     it, a "Signed:" label before it, the signer's printed name under,
//     over or before it) a region of one row of writing is a signature,
//     however many strokes and however wide. Without them, a row of one
//     to four strokes is, and so is the one row of writing that ends the
//     letter (below its body, above its footer, nothing written under
//     it): a note's row is words, and a note of one row left unread
//     where the letter's signature goes is rare where every letter is
//     signed.
//  3. A mark: a region narrower than two written words, as tall as it is
//     wide (a ring, a drawing), or of at most two unread pieces (a tick,
//     a stroke through print).
//  4. Otherwise a note: rows of word-sized pieces.
//
// The thresholds are scale-free (inches, or the region's own heights)
// and were set on refcorpus's calibration families, then measured on its
// held-out families (refbatch help handwriting).
const (
	// signBelowInch is how far below a valediction or above a printed
	// name a signature may reach; signLabelInch how far after a
	// "Signed:" label or a printed name on its line it may start.
	signBelowInch = 1.6
	signNameInch  = 0.6
	signLabelInch = 1.2
	// signStrokes is the most strokes a signature with no sign-off beside
	// it has.
	signStrokes = 4
	// stampWander is the most the centres of a stamp's capitals stray
	// from their straight line, in their median height; stampGlyphs is
	// the least number of them that makes a line of a stamp.
	stampWander = 0.06
	stampGlyphs = 4
	// stampTurn is the least angle, in degrees, of a stamp's lines told
	// by their letters alone: a hand writes level within a degree or
	// two, a stamp is struck at any angle, and a level stamp's capitals
	// Tesseract reads (a region read whole is no region).
	stampTurn = 3
	// stampMaxTurn is, in degrees, the most a stamp's rows are looked for
	// turned (see stampRows): a stamp is struck at up to about 25°.
	stampMaxTurn = 30
	// labelLevel: see printRuns.
	labelLevel = 0.35
	labelTall  = 1.6
	// printCap is the tallest a piece of print is, in the print's
	// height: its capitals, not a hand's larger letters (see rows).
	printCap = 1.25
	// rowGap, twoRows: see rows.
	rowGap  = 0.6
	twoRows = 2.2
	// flatStroke: a piece this many times wider than tall is a line
	// drawn (a rule, an underline, a flourish), no written word.
	flatStroke = 8
	// printTall: see printLines.
	printTall = 1.3
	// frameInch, frameHollow, frameGlyphs: see findFrames.
	frameInch   = 0.45
	frameHollow = 25
	frameGlyphs = 4
)

// Region kinds, as result records them.
const (
	KindNote      = result.KindNote
	KindSignature = result.KindSignature
	KindStamp     = result.KindStamp
	KindMark      = result.KindMark
)

// handTrace, when set (by a test), is told each region's kind and the
// cues it was told by.
var handTrace func(r handRegion, kind string, rows, strokes int, signed, stamp bool)

// kindOf returns what region k of regions is, given the page's words
// (all of them, with their confidences) and its credible cover.
func (look *handLook) kindOf(k int, regions []handRegion, words []Word, cover []byte) string {
	r := regions[k]
	stamp := r.stamp
	rows, strokes, crossed := look.rowsCrossed(r, cover)
	regions[k].rows = rows
	var others, near [][4]int // the other writing (a stamp is none); every other region
	for i, o := range regions {
		if i != k && !o.stamp {
			others = append(others, o.box)
		}
		if i != k {
			near = append(near, o.box)
		}
	}
	signed := rows <= 1 && (crossed || signedOff(r.box, others, look.printLines(words), look.wdpi*float64(look.f), look.small.h*look.f, false))
	kind := KindNote
	switch {
	case stamp:
		kind = KindStamp
	case signed:
		kind = KindSignature
	case rows <= 1 && look.overPrint(r, words):
		kind = KindMark // a stroke through print, a ring round it, in another ink
	case !look.note(r, cover, crossing(regions, k)):
		kind = KindMark
		if !look.onPrint(r, words) {
			kind = KindSignature
		}
	case rows <= 1 && strokes <= signStrokes:
		kind = KindSignature
	case rows <= 1 && lastBelow(r.box, others, look.printLines(words), look.small.h*look.f) && !look.unreadNear(r.box, r.lines[0].ink, near, look.printLines(words), cover):
		kind = KindSignature
	}
	if kind == KindNote && look.ruledFrame(r) {
		kind = KindStamp // its letters in a ruled frame, broken
	}
	if handTrace != nil {
		handTrace(r, kind, rows, strokes, signed, stamp)
	}
	return kind
}

// rows counts the rows of writing of region r that hold two word-like
// pieces or more, and the word-like pieces of the whole region: its
// strokes. A word-like piece is at least half the region's median
// height tall (not a dot, not a speck), at most six times as wide as it
// is tall (not an underline, not a flourish), and not print: neither
// under credible words (cover), nor in a printed label left unread (see
// printRuns), nor a stamp's frame or inside one: a signature runs into
// its printed name and label, and a stamp struck over it. Pieces
// are in
// one row when their centres, taken top to bottom, are less than rowGap
// of their median height apart: two written lines that chained into one
// are two rows (a line's step is about twice a capital's height, and a
// cursive word's whole height is about its line's step). Six pieces or
// more whose tops and bottoms (the 20th and 80th percentiles) span
// twoRows of their median height are two rows whatever their centres: a
// row of letters spans about one and a half.
func (look *handLook) rows(r handRegion, cover []byte) (rows, pieces int) {
	rows, pieces, _ = look.rowsCrossed(r, cover)
	return rows, pieces
}

// rowsCrossed is rows, and whether the region's strokes cross a line of
// print (see crossedPrint).
func (look *handLook) rowsCrossed(r handRegion, cover []byte) (rows, pieces int, crossed bool) {
	printed := map[[4]int]bool{}
	for _, l := range r.lines {
		look.printRuns(l.comps, printed)
		crossed = look.crossedPrint(l.comps, printed) || crossed
		for k, b := range l.comps {
			if 2*look.coveredInk(b, cover) >= l.inks[k] || look.framed(b) {
				printed[b] = true // read: print a signature ran into; a stamp
			}
		}
	}
	var hs []float64
	for _, l := range r.lines {
		for _, b := range l.comps {
			if !printed[b] {
				hs = append(hs, float64(b[3]-b[1]))
			}
		}
	}
	mh := median(hs)
	// Where strokes twice the print's height or taller are written,
	// pieces of the print's own height make no row of their own: they are
	// what is left of a printed name the strokes ran into.
	small := 0.0
	if ph := look.printH; ph > 0 && slices.ContainsFunc(hs, func(h float64) bool { return h >= 2*ph }) {
		small = printCap * ph
	}
	var ys, wh, tops, bottoms []float64 // the word-like pieces' centres, heights, tops and bottoms
	for _, l := range r.lines {
		for _, b := range l.comps {
			w, h := float64(b[2]-b[0]), float64(b[3]-b[1])
			if h >= mh/2 && w <= 6*h && !printed[b] {
				pieces++
				if h <= small {
					continue
				}
				ys, wh = append(ys, float64(b[1]+b[3])/2), append(wh, h)
				tops, bottoms = append(tops, float64(b[1])), append(bottoms, float64(b[3]))
			}
		}
	}
	if len(ys) == 0 {
		return 0, pieces, crossed
	}
	mw := median(wh)
	if len(tops) >= 6 {
		// Rows whose letters rise and fall into each other: the pieces'
		// tops and bottoms span two rows.
		slices.Sort(tops)
		slices.Sort(bottoms)
		if bottoms[len(bottoms)*4/5]-tops[len(tops)/5] >= twoRows*mw {
			return 2, pieces, crossed
		}
	}
	step := rowGap * mw
	slices.Sort(ys)
	n := 1
	for i := 1; i <= len(ys); i++ {
		if i < len(ys) && ys[i]-ys[i-1] < step {
			n++
			continue
		}
		if n >= 2 {
			rows++
		}
		n = 1
	}
	return rows, pieces, crossed
}

// printRuns marks in printed the components of boxes (left to right)
// that make a printed label left unread before a signature: a run of
// three glyphs or more of the print's height (half to labelTall times
// it: the print's height is its median component's, and capitals and
// ascenders are taller), their centres level within labelLevel of it and each close to the
// next, that starts the line and is followed by a stroke twice the
// print's height or taller. A label that a signature runs into is read
// with it as junk, and is no stroke of it.
func (look *handLook) printRuns(boxes [][4]int, printed map[[4]int]bool) {
	ph := look.printH
	if ph == 0 || len(boxes) < 4 {
		return
	}
	glyph := func(b [4]int) bool {
		h := float64(b[3] - b[1])
		return h >= ph/2 && h <= labelTall*ph
	}
	cy := func(b [4]int) float64 { return float64(b[1]+b[3]) / 2 }
	j := 1
	for j < len(boxes) && glyph(boxes[j-1]) && glyph(boxes[j]) &&
		math.Abs(cy(boxes[j])-cy(boxes[0])) <= labelLevel*ph && float64(boxes[j][0]-boxes[j-1][2]) <= 0.6*ph {
		j++
	}
	// Dots (a colon) may end the label.
	for j < len(boxes) && float64(boxes[j][3]-boxes[j][1]) < ph/2 {
		j++
	}
	if j >= 3 && j < len(boxes) && float64(boxes[j][3]-boxes[j][1]) >= 2*ph {
		for _, b := range boxes[:j] {
			printed[b] = true
		}
	}
}

// readWhole reports whether credible words cover handReadLine of every
// line of region r.
func (look *handLook) readWhole(r handRegion, cover []byte) bool {
	for _, l := range r.lines {
		if ink, covered := look.lineInk(l, cover); float64(covered) < handReadLine*float64(ink) {
			return false
		}
	}
	return true
}

// crossedPrint marks in printed the glyphs of boxes (a line's
// components) that a long stroke crosses, when three or more of the
// print's height (half to labelTall times it), level within labelLevel
// of it, each lie a third or more under the box of one stroke twice the
// print's height and three times as wide: a signature's flourish through
// the printed name or label it signs, which Tesseract then leaves
// unread. A hand's own letters stand beside its tall letters, not under
// them. It reports whether it marked any.
func (look *handLook) crossedPrint(boxes [][4]int, printed map[[4]int]bool) bool {
	ph := look.printH
	if ph == 0 {
		return false
	}
	crossed := false
	for _, t := range boxes {
		if th, tw := float64(t[3]-t[1]), float64(t[2]-t[0]); th < 2*ph || tw < 3*ph {
			continue
		}
		var under [][4]int
		var ys []float64
		for _, g := range boxes {
			h := float64(g[3] - g[1])
			if g == t || h < ph/2 || h > labelTall*ph {
				continue
			}
			x0, y0, x1, y1 := max(g[0], t[0]), max(g[1], t[1]), min(g[2], t[2]), min(g[3], t[3])
			if x0 < x1 && y0 < y1 && 3*(x1-x0)*(y1-y0) >= (g[2]-g[0])*(g[3]-g[1]) {
				under, ys = append(under, g), append(ys, float64(g[1]+g[3])/2)
			}
		}
		m, level := median(ys), 0
		for _, g := range under {
			if math.Abs(float64(g[1]+g[3])/2-m) <= labelLevel*ph {
				level++
			}
		}
		if level < 3 {
			continue
		}
		for _, g := range under {
			printed[g] = true
		}
		crossed = true
	}
	return crossed
}

// lineInk is line l's ink and the part of it under cover, in pixels of
// the reduced page.
func (look *handLook) lineInk(l handLine, cover []byte) (ink, covered int) {
	for k, b := range l.comps {
		ink += l.inks[k]
		covered += look.coveredInk(b, cover)
	}
	return ink, covered
}

// overPrint reports whether most of the ink of region r, on a page of
// several inks, lies on print of another ink: inside the boxes of words
// read (at any confidence: print struck through reads badly) whose ink
// is mostly not r's (a blue stroke through a black heading, a ring round
// a printed word). A note's words read, credibly or as junk, are of its
// own ink; a note is not written over print.
func (look *handLook) overPrint(r handRegion, words []Word) bool {
	if look.inks == nil {
		return false
	}
	class := byte(r.lines[0].ink)
	f, w, cls := look.f, look.small.w, look.inks.cls
	total := 0
	for _, l := range r.lines {
		for _, n := range l.inks {
			total += n
		}
	}
	on := 0
	for _, wd := range words {
		if AlnumCount(wd.Text) == 0 {
			continue
		}
		b := [4]int{wd.Box[0] / f, wd.Box[1] / f, min(w, (wd.Box[2]+f-1)/f), min(look.small.h, (wd.Box[3]+f-1)/f)}
		x0, y0 := max(b[0], r.box[0]/f), max(b[1], r.box[1]/f)
		x1, y1 := min(b[2], (r.box[2]+f-1)/f), min(b[3], (r.box[3]+f-1)/f)
		if x0 >= x1 || y0 >= y1 {
			continue
		}
		mine, other := 0, 0
		for y := b[1]; y < b[3]; y++ {
			for x := b[0]; x < b[2]; x++ {
				switch v := cls[y*w+x]; {
				case v == class:
					mine++
				case v != 0:
					other++
				}
			}
		}
		if other <= mine {
			continue
		}
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				if cls[y*w+x] == class {
					on++
				}
			}
		}
	}
	return 2*on >= total
}
