package ocr

// #include "native.h"
import "C"

import (
	"math"
	"slices"
)

// Coverage: does the reading account for the ink on the page?
//
// Tesseract binarises a page with one global threshold (Otsu's). Ink
// lighter than it, such as a note in light grey small print next to
// black type, becomes paper before layout analysis even starts, and the
// words that are read keep their high confidences: a page can lose a
// paragraph and still look certain. So after recognition the page's ink
// is found again, this time against the local paper, and set against the
// recognised words' boxes:
//
//  1. The page is reduced to about coverageDPI (each output pixel the
//     darkest of its block, so that thin strokes survive), its paper level
//     is estimated per quarter-inch tile (a high percentile, smoothed over
//     the neighbouring tiles, so that stained or coloured paper is paper),
//     and every pixel at least inkContrast darker than its tile's paper is
//     ink.
//  2. Ink is split into 8-connected components (Leptonica); those of the
//     size of characters or words are kept, and chained into lines:
//     neighbours that overlap vertically and are no further apart than a
//     word space. A line of three components or more (or one word-shaped
//     blob) that runs level, as print does on a deskewed page, is
//     text-like; rules, pictures, specks, signatures and tilted rubber
//     stamps are not.
//  3. The recognised words' boxes, a little enlarged, cover ink; the part
//     of each text-like line's components they do not cover is unread.
//
// The page's uncovered share is the unread area over the text-like area.
// Lines mostly unread are the regions recovery reads again (see
// recoverText). The measurement costs a few milliseconds a page.
const (
	// coverageDPI is the resolution the measurement works at: pages
	// rendered at 1.5 times it or more are reduced by an integer factor.
	// 6 pt type is still about 6 pixels high there.
	coverageDPI = 150
	// inkContrast is how much darker than its paper a pixel must be to be
	// ink: faint print measured 50–120 levels below its paper, JPEG noise
	// and paper grain up to about 15.
	inkContrast = 24
	// paperPercentile: the paper of a tile is this share of the way up
	// its sorted gray values. Text covers at most about a third of a
	// tile.
	paperPercentile = 0.8
)

// glyph sizes, as a share of an inch: a character or a word of print
// from 5 pt to 36 pt, letters without ascenders included.
const (
	minGlyphInch = 0.027
	maxGlyphInch = 0.5
	// maxLineSlope is the steepest line that counts as text: pages are
	// deskewed to within a degree, and rubber stamps are turned by 5
	// degrees or more.
	maxLineSlope = 0.06 // about 3.4 degrees
	// minCoverHeight is, in percent of a tall word's height, how tall ink
	// must be for the word to cover it: a lower-case letter without
	// ascender or descender is 35–45% of the height of its word's box.
	minCoverHeight = 30
	// ruleInch: a horizontal run of ink this long is a rule, an
	// underline or the dark edge of a scan, not print: a word of small
	// print is shorter, and has gaps between its letters.
	ruleInch = 0.6
	// minBlobFill is the least share of its box, in percent, a component
	// three times wider than high must fill: blurred print run together
	// fills 40–70% of its box, a signature's flourish or a broken rule,
	// a thin stroke across it, 15–35%.
	minBlobFill = 40
	// edgeInch: ink this close to the page's edge is the scanner's (a
	// dark border, the shadow of the sheet's edge), never print.
	edgeInch = 0.2
	// minGlyphFill is the least share of its box, in percent, a
	// component's ink must fill: letters fill 15–60% of theirs.
	minGlyphFill = 12
)

// textLine is a run of text-like components on one line, in page pixels.
type textLine struct {
	box       [4]int  // x0, y0, x1, y1 (exclusive)
	area      float64 // its ink over its height squared: about its characters
	uncovered float64 // of that, what no word covers
	// level: found among the ink darker than this (0: against the local
	// paper), under something lighter; recovery then reads only that ink.
	level int
}

// coverage is the result of measuring a page.
type coverage struct {
	textArea  float64    // characters of print
	unread    float64    // of them, how many no word covers
	lines     []textLine // text-like lines, in page pixels: the first look's, then those only the darker looks see
	uncovered []int      // indexes into lines of those a third unread or more
	// blobs are the first look's components too large for glyphs (but
	// smaller than half the page), in page pixels: a stamp, a signature,
	// a logo, a picture.
	blobs [][4]int
}

// share is the unread share of the page's text-like ink, 0 when it has
// none.
func (c coverage) share() float64 {
	if c.textArea == 0 {
		return 0
	}
	return c.unread / c.textArea
}

// measureCoverage finds the text-like ink of img, rendered at dpi, that
// the words' boxes (in img's pixels) do not cover. It takes three looks:
// at the ink against its local paper (faint print, and all the rest); at
// the ink darker than thresh, the page's global threshold; and at the ink
// darker than halfway from thresh to the page's darkest ink. The last two
// find print under a lighter overlay, such as a rubber stamp, which the
// first look sees merged with it into one blob too large for a glyph:
// their lines count where the first look has no line.
func measureCoverage(img *grayImage, dpi, thresh int, words []Word) coverage {
	return measureInk(newInkLook(img, dpi), thresh, words)
}

// measureInk is measureCoverage on the page's ink as ink sees it.
func measureInk(ink *inkLook, thresh int, words []Word) coverage {
	f, small, wdpi := ink.f, ink.small, ink.wdpi
	cover := newWordCover(words, f, small.w, small.h, ink.buf.blank(small.w*small.h))

	c, blobs := coverComps(ink.mask, ink.comps, small, cover, f, wdpi, 0)
	for _, b := range blobs {
		c.blobs = append(c.blobs, [4]int{b[0] * f, b[1] * f, b[2] * f, b[3] * f})
	}
	// The darker looks run only where the first one met a blob too large
	// for a glyph among lines of print: a stamp, or a picture.
	regions := blobsAmongPrint(blobs, c.lines, f)
	if len(regions) == 0 {
		return c
	}
	seen := len(c.lines)
	var hist [256]int
	for _, v := range small.pix {
		hist[v]++
	}
	deep := (percentile(hist, 0.002) + thresh) / 2
	for _, level := range []int{thresh, deep} {
		if level <= 0 || level > 255 {
			continue
		}
		dark := make([]byte, len(small.pix))
		for _, r := range regions {
			for y := max(0, r[1]); y < min(small.h, r[3]); y++ {
				row := small.pix[y*small.w : (y+1)*small.w]
				out := dark[y*small.w : (y+1)*small.w]
				for x := max(0, r[0]); x < min(small.w, r[2]); x++ {
					if int(row[x]) < level {
						out[x] = 1
					}
				}
			}
		}
		under, _ := coverPass(dark, small, cover, f, wdpi, level)
		for _, l := range under.lines {
			if overlapsAny(l.box, c.lines[:seen]) {
				continue // the first look counted this print
			}
			c.textArea += l.area
			c.unread += l.uncovered
			if 3*l.uncovered >= l.area {
				c.uncovered = append(c.uncovered, len(c.lines))
			}
			c.lines = append(c.lines, l)
			seen = len(c.lines) // the next look skips these too
		}
	}
	return c
}

// blobsAmongPrint returns the blobs (boxes on the reduced page) that
// overlap a line of print (lines in page pixels, reduced by f), enlarged
// by the height of such a line.
func blobsAmongPrint(blobs [][4]int, lines []textLine, f int) [][4]int {
	var out [][4]int
	for _, b := range blobs {
		for _, l := range lines {
			lb := [4]int{l.box[0] / f, l.box[1] / f, l.box[2] / f, l.box[3] / f}
			if meets(lb, b) {
				m := lb[3] - lb[1]
				out = append(out, [4]int{max(0, b[0]-m), max(0, b[1]-m), b[2] + m, b[3] + m})
				break
			}
		}
	}
	return out
}

// overlapsAny reports whether box b shares half its area or more with one
// of the lines.
func overlapsAny(b [4]int, lines []textLine) bool {
	area := (b[2] - b[0]) * (b[3] - b[1])
	for _, l := range lines {
		x0, y0, x1, y1 := max(b[0], l.box[0]), max(b[1], l.box[1]), min(b[2], l.box[2]), min(b[3], l.box[3])
		if x0 < x1 && y0 < y1 && 2*(x1-x0)*(y1-y0) >= area {
			return true
		}
	}
	return false
}

// coverPass measures the coverage of one look at the page: mask marks ink
// on the reduced page small (reduced by f, at wdpi), cut at level (0 for
// the look against the local paper); cover holds the words. Its lines are
// in page pixels. It also returns the blobs, components too tall for
// glyphs but smaller than half the page, on the reduced page.
func coverPass(mask []byte, small *grayImage, cover wordCover, f int, wdpi float64, level int) (c coverage, blobs [][4]int) {
	dropRules(mask, small.w, small.h, int(ruleInch*wdpi))
	return coverComps(mask, components(mask, small.w, small.h), small, cover, f, wdpi, level)
}

// coverComps is coverPass on mask with its rules dropped and comps its
// components.
func coverComps(mask []byte, comps [][4]int, small *grayImage, cover wordCover, f int, wdpi float64, level int) (c coverage, blobs [][4]int) {
	// Characters and words: glyph-sized, and filled like print. A rule,
	// or a frame, drawn a little askew has a glyph-sized box but little
	// ink in it. The ink in a box is counted on the mask, so a box that
	// overlaps another component's counts some of its ink too: a few
	// percent, for print.
	minH, maxH := max(3, int(minGlyphInch*wdpi+0.5)), int(maxGlyphInch*wdpi)
	edge := int(edgeInch * wdpi)
	var glyphs [][4]int
	var pixels, read []int
	for _, b := range comps {
		h, area := b[3]-b[1], (b[2]-b[0])*(b[3]-b[1])
		if h > maxH && b[2]-b[0] <= small.w/2 && h <= small.h/2 {
			blobs = append(blobs, b)
			continue
		}
		if h < minH || h > maxH {
			continue
		}
		if b[0] < edge || b[1] < edge || b[2] > small.w-edge || b[3] > small.h-edge {
			continue // a scan's dark edge, or a punch hole, not print
		}
		ink, covered := 0, 0
		for y := b[1]; y < b[3]; y++ {
			row := mask[y*small.w+b[0] : y*small.w+b[2]]
			cov := cover.raster[y*small.w+b[0] : y*small.w+b[2]]
			for x, m := range row {
				ink += int(m)
				covered += int(m & cov[x])
			}
		}
		fill := minGlyphFill
		if b[2]-b[0] >= 3*h {
			fill = minBlobFill // letters run together fill their box; a pen stroke does not
		}
		if ink > 0 && ink*100 >= fill*area {
			glyphs = append(glyphs, b)
			pixels = append(pixels, ink)
			read = append(read, covered)
		}
	}

	for _, line := range chainLines(glyphs) {
		if !textLike(line, glyphs) {
			continue
		}
		tl := textLine{level: level}
		tl.box = [4]int{math.MaxInt, math.MaxInt, 0, 0}
		// A character's ink grows with the square of the type's size: ink
		// over the line's height squared counts characters, so that a
		// line of 6 pt print weighs as much as one of 12 pt.
		heights := make([]int, len(line))
		for k, i := range line {
			heights[k] = glyphs[i][3] - glyphs[i][1]
		}
		slices.Sort(heights)
		unit := float64(heights[len(heights)/2] * heights[len(heights)/2])
		for _, i := range line {
			b := glyphs[i]
			unread := float64(pixels[i]-read[i]) / float64(pixels[i])
			if unread > 0 {
				page := [4]int{b[0] * f, b[1] * f, b[2] * f, b[3] * f}
				unread *= 1 - cover.tall.covered(page)
			}
			chars := float64(pixels[i]) / unit
			tl.area += chars
			tl.uncovered += unread * chars
			tl.box = union4(tl.box, b)
		}
		for k := range tl.box {
			tl.box[k] *= f
		}
		c.textArea += tl.area
		c.unread += tl.uncovered
		if 3*tl.uncovered >= tl.area {
			c.uncovered = append(c.uncovered, len(c.lines))
		}
		c.lines = append(c.lines, tl)
	}
	return c, blobs
}
