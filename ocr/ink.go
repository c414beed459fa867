package ocr

// #include "native.h"
import "C"

import (
	"math"
	"slices"
	"unsafe"
)

// The coverage step's parts that find ink and what covers it: rules
// dropped, the page reduced, ink told from paper, the words' cover, and
// the ink's components chained into lines.

// dropRules clears every horizontal run of ink minLen pixels long or more
// from the w×h mask: rules, underlines, a scan's dark edge. It is a
// morphological opening by a line minLen long, keeping what it removes.
func dropRules(mask []byte, w, h, minLen int) {
	if minLen >= 2 && len(mask) > 0 {
		C.ocr_drop_rules((*C.l_uint8)(unsafe.Pointer(&mask[0])), C.l_int32(w), C.l_int32(h), C.l_int32(minLen))
	}
}

// minReduce returns g reduced by factor into out (its buffer reused),
// each output pixel the darkest of its factor×factor block; g itself for
// a factor of 1.
func (g *grayImage) minReduce(factor int, out *grayImage) *grayImage {
	if factor <= 1 {
		return g
	}
	w, h := g.w/factor, g.h/factor
	out.resize(w, h)
	if factor == 2 && w > 0 && h > 0 {
		// The common case (300 dpi), in C: a tenth of the time.
		C.ocr_min_reduce2((*C.l_uint8)(unsafe.Pointer(&g.pix[0])), C.l_int32(g.w), C.l_int32(g.h), (*C.l_uint8)(unsafe.Pointer(&out.pix[0])))
		return out
	}
	for oy := range h {
		dst := out.pix[oy*w : (oy+1)*w]
		for i := range dst {
			dst[i] = 255
		}
		for dy := range factor {
			row := g.pix[(oy*factor+dy)*g.w:]
			for ox := range dst {
				m := dst[ox]
				for _, v := range row[ox*factor : ox*factor+factor] {
					m = min(m, v)
				}
				dst[ox] = m
			}
		}
	}
	return out
}

// inkMask marks the pixels of g at least inkContrast darker than the
// paper of their tile (tile×tile pixels): 1 is ink. It reuses buf's
// memory when large enough; every byte is set.
func inkMask(g *grayImage, tile int, buf []byte) []byte {
	n := g.w * g.h
	mask := grow(buf, n)
	if len(mask) == 0 {
		return mask
	}
	tx, ty := (g.w+tile-1)/tile, (g.h+tile-1)/tile
	paper := make([]C.l_int32, tx*ty)
	C.ocr_tile_levels((*C.l_uint8)(unsafe.Pointer(&g.pix[0])), C.l_int32(g.w), C.l_int32(g.h), C.l_int32(tile),
		C.l_float32(paperPercentile), &paper[0])
	// A tile covered by a dense paragraph, a logo or a picture can have
	// no paper of its own: take the median of it and its neighbours.
	smooth := make([]C.l_int32, len(paper))
	var near []C.l_int32
	for j := range ty {
		for i := range tx {
			near = near[:0]
			for dj := -1; dj <= 1; dj++ {
				for di := -1; di <= 1; di++ {
					if x, y := i+di, j+dj; x >= 0 && y >= 0 && x < tx && y < ty {
						near = append(near, paper[y*tx+x])
					}
				}
			}
			slices.Sort(near)
			smooth[j*tx+i] = near[len(near)/2]
		}
	}
	C.ocr_ink_mask((*C.l_uint8)(unsafe.Pointer(&g.pix[0])), C.l_int32(g.w), C.l_int32(g.h), C.l_int32(tile), C.l_int32(tx),
		&smooth[0], C.l_int32(inkContrast), (*C.l_uint8)(unsafe.Pointer(&mask[0])))
	return mask
}

// wordCover is where the recognised words lie. Each box is enlarged by
// a fifth of its height on every side (Tesseract's boxes hug the glyphs;
// faint strokes reach past them). Words of ordinary size cover every ink
// pixel under them: they are rasterised on the reduced page. Words more
// than tallWord times the median height (a heading, or the letters of a
// rubber stamp and the junk Tesseract reads into one) cover only ink at
// least minCoverHeight of their own height: a stamp's boxes are several
// lines tall, and must not pass the lines of print under them for read.
type wordCover struct {
	raster []byte // 1 under an ordinary word, on the reduced page
	tall   wordIndex
}

// tallWord is how many times the median word height makes a word tall.
const tallWord = 2.5

// newWordCover rasterises words on the w×h page reduced by f, into
// raster, w×h bytes and cleared.
func newWordCover(words []Word, f, w, h int, raster []byte) wordCover {
	var heights []int
	for _, wd := range words {
		if b := wd.Box; b[2] > b[0] && b[3] > b[1] {
			heights = append(heights, b[3]-b[1])
		}
	}
	if len(heights) == 0 {
		return wordCover{raster: raster}
	}
	slices.Sort(heights)
	limit := tallWord * float64(heights[len(heights)/2])
	c := wordCover{raster: raster}
	var tall []Word
	for _, wd := range words {
		b := wd.Box
		if b[2] <= b[0] || b[3] <= b[1] {
			continue // a text layer's words have no boxes
		}
		if float64(b[3]-b[1]) > limit {
			tall = append(tall, wd)
			continue
		}
		paintWord(c.raster, b, f, w, h)
	}
	c.tall = newWordIndex(tall)
	return c
}

// paintWord marks box b, a fifth of its height larger on every side, on
// the w×h raster of a page reduced by f.
func paintWord(raster []byte, b [4]int, f, w, h int) {
	pad := (b[3] - b[1]) / 5
	x0, y0 := max(0, (b[0]-pad)/f), max(0, (b[1]-pad)/f)
	x1, y1 := min(w, (b[2]+pad+f-1)/f), min(h, (b[3]+pad+f-1)/f)
	for y := y0; y < y1; y++ {
		row := raster[y*w : (y+1)*w]
		for x := x0; x < x1; x++ {
			row[x] = 1
		}
	}
}

// credibleCover is the raster of every credible word, tall ones included,
// on the w×h page reduced by f: the handwriting step's view of what is
// read. A heading set large, read credibly, is read, however tall; the
// coverage step's caution about tall words (junk read into a stamp) does
// not apply to words read at the handwriting step's confidence. raster
// is w×h bytes, cleared.
func credibleCover(words []Word, f, w, h int, raster []byte) []byte {
	for _, wd := range words {
		if b := wd.Box; b[2] > b[0] && b[3] > b[1] {
			paintWord(raster, b, f, w, h)
		}
	}
	return raster
}

// wordIndex holds tall words' boxes, enlarged as above, sorted by their
// tops.
type wordIndex struct {
	boxes   [][4]int // enlarged
	heights []int    // as recognised
	maxH    int      // the tallest enlarged box
}

func newWordIndex(words []Word) wordIndex {
	var ix wordIndex
	for _, w := range words {
		b := w.Box
		pad := (b[3] - b[1]) / 5
		ix.boxes = append(ix.boxes, [4]int{b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad})
		ix.heights = append(ix.heights, b[3]-b[1])
	}
	order := make([]int, len(ix.boxes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return ix.boxes[a][1] - ix.boxes[b][1] })
	boxes, heights := make([][4]int, len(order)), make([]int, len(order))
	for k, i := range order {
		boxes[k], heights[k] = ix.boxes[i], ix.heights[i]
		ix.maxH = max(ix.maxH, ix.boxes[i][3]-ix.boxes[i][1])
	}
	ix.boxes, ix.heights = boxes, heights
	return ix
}

// covered returns the share of box b (page pixels) that words at most
// 100/minCoverHeight times its height cover.
func (ix wordIndex) covered(b [4]int) float64 {
	h := b[3] - b[1]
	area := (b[2] - b[0]) * h
	if area <= 0 || len(ix.boxes) == 0 {
		return 0
	}
	// The first word whose top is low enough to reach b.
	i, _ := slices.BinarySearchFunc(ix.boxes, b[1]-ix.maxH, func(w [4]int, y int) int { return w[1] - y })
	inter := 0
	for ; i < len(ix.boxes) && ix.boxes[i][1] < b[3]; i++ {
		w := ix.boxes[i]
		if 100*h < minCoverHeight*ix.heights[i] {
			continue
		}
		x0, y0, x1, y1 := max(b[0], w[0]), max(b[1], w[1]), min(b[2], w[2]), min(b[3], w[3])
		if x0 < x1 && y0 < y1 {
			inter += (x1 - x0) * (y1 - y0)
		}
	}
	return min(1, float64(inter)/float64(area))
}

// chainLines groups glyph boxes into lines: two boxes are on one line
// when they overlap vertically by at least 40% of the smaller one's
// height, and the gap between them is at most 1.5 times the taller one's
// height (a word space, not a column's gutter). It returns the lines as
// lists of indexes, left to right.
func chainLines(boxes [][4]int) [][]int {
	order := make([]int, len(boxes))
	for i := range order {
		order[i] = i
	}
	// By x0, then by the rest of the box: the lines do not depend on the
	// order the boxes came in.
	slices.SortFunc(order, func(a, b int) int { return slices.Compare(boxes[a][:], boxes[b][:]) })
	parent := make([]int, len(boxes))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for oi, i := range order {
		a := boxes[i]
		ha := a[3] - a[1]
		for _, j := range order[oi+1:] {
			b := boxes[j]
			hb := b[3] - b[1]
			if gap := b[0] - a[2]; gap > 3*max(ha, hb)/2 {
				if gap > 9*ha/2 {
					break // sorted by x0, and at most 3 times taller: none further is near enough
				}
				continue
			}
			overlap := min(a[3], b[3]) - max(a[1], b[1])
			if 5*overlap >= 2*min(ha, hb) && 3*min(ha, hb) >= max(ha, hb) {
				if ra, rb := find(i), find(j); ra != rb {
					parent[ra] = rb
				}
			}
		}
	}
	groups := map[int][]int{}
	for _, i := range order {
		r := find(i)
		groups[r] = append(groups[r], i)
	}
	lines := make([][]int, 0, len(groups))
	for _, g := range groups {
		lines = append(lines, g)
	}
	// Top to bottom, for stable results.
	slices.SortFunc(lines, func(a, b []int) int {
		if d := boxes[a[0]][1] - boxes[b[0]][1]; d != 0 {
			return d
		}
		return boxes[a[0]][0] - boxes[b[0]][0]
	})
	return lines
}

// textLike reports whether a line of glyph boxes looks like print: three
// or more components, or two of which one is a blob at least three times
// as wide as high (blurred small print runs its letters together), on a
// line within maxLineSlope of level. A lone component is never a line:
// pen strokes (a signature's flourish) are.
func textLike(line []int, boxes [][4]int) bool {
	if len(line) < 3 {
		if len(line) != 2 {
			return false
		}
		a, b := boxes[line[0]], boxes[line[1]]
		return a[2]-a[0] >= 3*(a[3]-a[1]) || b[2]-b[0] >= 3*(b[3]-b[1])
	}
	// The least squares slope of the boxes' centres. Ascenders and
	// descenders move a short word's centres by a third of a glyph, so a
	// line is also level when the slope moves its ends apart by less than
	// half a glyph's height.
	var n, sx, sy, sxx, sxy, sh float64
	x0, x1 := math.MaxInt, 0
	for _, i := range line {
		b := boxes[i]
		x, y := float64(b[0]+b[2])/2, float64(b[1]+b[3])/2
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
		sh += float64(b[3] - b[1])
		x0, x1 = min(x0, b[0]), max(x1, b[2])
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return true
	}
	slope := math.Abs((n*sxy - sx*sy) / den)
	return slope <= maxLineSlope || slope*float64(x1-x0) <= sh/n/2
}

// union4 is the box holding boxes a and b.
func union4(a, b [4]int) [4]int {
	return [4]int{min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])}
}

// meets reports whether boxes a and b share a pixel.
func meets(a, b [4]int) bool { return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3] }
