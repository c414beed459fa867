package pdfcheck

// Ink: where a word's box lies on the print of the page's render.

import (
	"bytes"
	"fmt"
	"image"
	"os"
	"strconv"
)

// loadGray reads the binary PGM (P5, 8 bits) pdftoppm -gray writes:
// a PNG would cost pdftoppm five times the CPU to compress, and this
// package as much again to decompress, for the same pixels.
func loadGray(name string) (*image.Gray, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	// The header: P5, width, height and the largest value, apart by
	// whitespace, the last followed by one whitespace byte and then the
	// pixels (pdftoppm writes no comments).
	var fields [4]string
	rest := data
	for i := range fields {
		rest = bytes.TrimLeft(rest, " \t\r\n")
		end := bytes.IndexAny(rest, " \t\r\n")
		if end < 0 {
			return nil, fmt.Errorf("%s: not a PGM", name)
		}
		fields[i], rest = string(rest[:end]), rest[end+1:]
	}
	w, errW := strconv.Atoi(fields[1])
	h, errH := strconv.Atoi(fields[2])
	if fields[0] != "P5" || fields[3] != "255" || errW != nil || errH != nil || w < 1 || h < 1 || len(rest) != w*h {
		return nil, fmt.Errorf("%s: not an 8-bit binary PGM", name)
	}
	return &image.Gray{Pix: rest, Stride: w, Rect: image.Rect(0, 0, w, h)}, nil
}

// MinInkContrast and MaxInkContrast bound how much darker than the paper
// around it a pixel must be to count as ink (of 255 gray levels): more
// than a scan's grain, and no more than the edge of a stroke is.
const (
	MinInkContrast = 16
	MaxInkContrast = 32
)

// inkLevel is the gray level under which a pixel near the box r counts as
// ink. It looks at r grown by its height on every side (the box's word and
// its neighbours, and paper around them): the paper is its 90th
// percentile, the ink its 2nd, and the level lies halfway between, but
// at least MinInkContrast and at most MaxInkContrast under the paper. A
// level of the window's own, so that faint print (grey 200 on white), a
// faded scan (ink at 140 on paper at 170) and bold print on the same page
// all count, where one level for the whole page takes only the darkest
// print for ink.
func inkLevel(img *image.Gray, r image.Rectangle) int {
	m := r.Dy()
	w := image.Rect(r.Min.X-m, r.Min.Y-m, r.Max.X+m, r.Max.Y+m).Intersect(img.Bounds())
	var hist [256]int
	for y := w.Min.Y; y < w.Max.Y; y++ {
		for _, v := range img.Pix[img.PixOffset(w.Min.X, y):img.PixOffset(w.Max.X, y)] {
			hist[v]++
		}
	}
	percentile := func(p int) int {
		rank, n := w.Dx()*w.Dy()*p/100, 0
		for v, c := range hist {
			if n += c; n > rank {
				return v
			}
		}
		return 255
	}
	paper, ink := percentile(90), percentile(2)
	return paper - min(MaxInkContrast, max(MinInkContrast, (paper-ink)/2))
}

// OnInkBox reports whether the box b (xMin, yMin, xMax, yMax in pixels of
// img) lies on ink, as wordsOnInk counts it: pixels darker than the level
// of the ink around it (inkLevel).
func OnInkBox(img *image.Gray, b [4]float64) bool {
	r := image.Rect(int(b[0]), int(b[1]), int(b[2]+0.999), int(b[3]+0.999)).Intersect(img.Bounds())
	if r.Empty() {
		return false
	}
	ink := inkLevel(img, r)
	rows, cols := make([]bool, r.Dy()), make([]bool, r.Dx())
	dark := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if int(img.GrayAt(x, y).Y) < ink {
				dark++
				rows[y-r.Min.Y], cols[x-r.Min.X] = true, true
			}
		}
	}
	count := func(v []bool) (n int) {
		for _, b := range v {
			if b {
				n++
			}
		}
		return n
	}
	return float64(dark) >= 0.03*float64(r.Dx()*r.Dy()) && 2*count(rows) >= len(rows) && 2*count(cols) >= len(cols)
}
