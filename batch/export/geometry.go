package export

// The geometry of a page: from the pixels of the canvas Tesseract read back
// to the page as a viewer displays it, and on to PDF user space.
//
// The chain, from the source PDF to a word box:
//
//  1. The page's visible area is its CropBox clipped to its MediaBox, in
//     user space (points, y up). A viewer turns it clockwise by /Rotate
//     and shows it from its top left corner: the displayed page.
//  2. MuPDF renders the displayed page at the page's DPI: pixel (i, j)
//     covers points [i, i+1)·72/DPI across and [j, j+1)·72/DPI down. The
//     render's top left corner is the displayed page's.
//  3. The page steps turn the render by quarter turns and deskew it by
//     rotating it on an enlarged canvas (result.Canvas records the affine map).
//  4. Tesseract's word boxes are in that canvas's pixels.
//
// Each step is an affine map, so their composition is one, and a word's
// box maps to a rectangle (turned, when the page was deskewed or turned
// in the image) on the displayed page and in user space.

import (
	"math"

	"github.com/refbatch/refbatch/ocr/result"
)

// Box is a word box on the page as a viewer displays it (after /Rotate), in
// PDF points, origin top left.
type Box struct{ X0, Y0, X1, Y1 float64 }

// PageFrame is what a page's geometry needs, read from the source PDF by
// [ReadFrames].
type PageFrame struct {
	// Width and Height of the page as displayed (after /Rotate), in points.
	Width, Height float64
	// Visible is the page's CropBox clipped to its MediaBox (the MediaBox
	// when there is no CropBox), in user space: llx, lly, urx, ury with
	// llx < urx and lly < ury.
	Visible [4]float64
	// Rotate is the page's /Rotate (inherited or its own), normalised to
	// 0, 90, 180 or 270: how far clockwise a viewer turns the page.
	Rotate int
}

// Matrix is an affine map [a b c d e f] in PDF's order: it takes (x, y) to
// (a·x + c·y + e, b·x + d·y + f).
type Matrix [6]float64

// Identity maps every point to itself.
var Identity = Matrix{1, 0, 0, 1, 0, 0}

// Apply maps the point (x, y).
func (m Matrix) Apply(x, y float64) (float64, float64) {
	return m[0]*x + m[2]*y + m[4], m[1]*x + m[3]*y + m[5]
}

// Then returns the map that applies m and then n.
func (m Matrix) Then(n Matrix) Matrix {
	return Matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// Invert returns the inverse map; a singular m yields the identity (no
// map built here is singular).
func (m Matrix) Invert() Matrix {
	det := m[0]*m[3] - m[1]*m[2]
	if det == 0 {
		return Identity
	}
	a, b, c, d := m[3]/det, -m[1]/det, -m[2]/det, m[0]/det
	return Matrix{a, b, c, d, -(m[4]*a + m[5]*c), -(m[4]*b + m[5]*d)}
}

// DisplayedToUser maps the displayed page (points from its top left, y
// down) to the PDF user space of the page whose frame is f.
func DisplayedToUser(f PageFrame) Matrix {
	x0, y0, x1, y1 := f.Visible[0], f.Visible[1], f.Visible[2], f.Visible[3]
	switch f.Rotate {
	case 90:
		// The page's left edge is shown at the top: right is up, down is right.
		return Matrix{0, 1, 1, 0, x0, y0}
	case 180:
		return Matrix{-1, 0, 0, 1, x1, y0}
	case 270:
		return Matrix{0, -1, -1, 0, x1, y1}
	}
	return Matrix{1, 0, 0, -1, x0, y1}
}

// CanvasToDisplayed maps the pixels of page p's canvas (the image its word
// boxes are in) to its displayed page, whose frame is f. An artifact made
// before the canvas was recorded is mapped by reconstructing the page
// steps from its Rotation and SkewDegrees (see reconstructCanvas).
func CanvasToDisplayed(p result.PageResult, f PageFrame) Matrix {
	if p.DPI <= 0 {
		return Identity
	}
	s := 72 / float64(p.DPI)
	return renderToCanvas(p, f).Invert().Then(Matrix{s, 0, 0, s, 0, 0})
}

// renderToCanvas is the map of page p's steps from its render to its
// canvas: the artifact's, or rebuilt (see CanvasToDisplayed).
func renderToCanvas(p result.PageResult, f PageFrame) Matrix {
	if p.Canvas != nil {
		return Matrix(p.Canvas.Matrix)
	}
	return reconstructCanvas(p, f)
}

// CanvasToUser maps the pixels of page p's canvas to PDF user space.
func CanvasToUser(p result.PageResult, f PageFrame) Matrix {
	return CanvasToDisplayed(p, f).Then(DisplayedToUser(f))
}

// DisplayedBox maps a word's canvas-pixel box (artifact) onto the
// displayed page: the smallest upright box holding the mapped rectangle,
// which is the word's own box unless the page was deskewed.
func DisplayedBox(p result.PageResult, frame PageFrame, canvasBox [4]int) Box {
	return boundsOf(CanvasToDisplayed(p, frame), canvasBox)
}

// boundsOf is the upright bounding box of box mapped by m.
func boundsOf(m Matrix, box [4]int) Box {
	out := Box{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, c := range [4][2]int{{0, 1}, {2, 1}, {0, 3}, {2, 3}} {
		x, y := m.Apply(float64(box[c[0]]), float64(box[c[1]]))
		out.X0, out.Y0 = min(out.X0, x), min(out.Y0, y)
		out.X1, out.Y1 = max(out.X1, x), max(out.Y1, y)
	}
	return out
}

// renderSize is the size in pixels of MuPDF's render of the displayed
// page w×h points at dpi: the page's box scaled and rounded outwards
// (fz_round_rect, which forgives 0.001 of a pixel).
func renderSize(w, h float64, dpi int) (int, int) {
	s := float64(dpi) / 72
	return int(math.Ceil(w*s - 0.001)), int(math.Ceil(h*s - 0.001))
}

// reconstructCanvas rebuilds the canvas map of a page whose artifact did
// not record it. The page steps deskew before turning the page upright
// and, after a quarter turn, may deskew again, and SkewDegrees is the sum
// (rounded to 0.01°). With no turn, or a half turn, the order is known.
// After a quarter turn the split is the one whose canvas size matches
// the artifact's Width and Height best, all before the turn winning ties,
// then all after: exact for the common cases, close for the rest.
func reconstructCanvas(p result.PageResult, f PageFrame) Matrix {
	w, h := renderSize(f.Width, f.Height, p.DPI)
	skew, turn := p.SkewDegrees, ((p.Rotation%360)+360)%360
	if turn == 0 || turn == 180 {
		m, _, _ := stepMatrix(w, h, skew, turn, 0)
		return m
	}
	splits := []float64{skew, 0}
	for a := -17.0; a <= 17; a += 0.05 {
		splits = append(splits, a)
	}
	best, bestErr := Identity, math.Inf(1)
	for _, first := range splits {
		m, cw, ch := stepMatrix(w, h, first, turn, skew-first)
		if e := math.Abs(float64(cw-p.Width)) + math.Abs(float64(ch-p.Height)); e < bestErr {
			best, bestErr = m, e
		}
	}
	return best
}

// stepMatrix is the canvas map of the page steps on a w×h render: a
// deskew by first degrees, a clockwise turn, a deskew by second degrees;
// with the canvas's final size. Deskews under 0.005° are no step.
func stepMatrix(w, h int, first float64, turn int, second float64) (Matrix, int, int) {
	m := Identity
	skew := func(deg float64) {
		if math.Abs(deg) < 0.005 {
			return
		}
		r := deg * math.Pi / 180
		// ocr_rotate's canvas, computed in single precision there.
		cos, sin := math.Cos(math.Abs(r)), math.Sin(math.Abs(r))
		nw := int(math.Ceil(float64(w)*cos + float64(h)*sin))
		nh := int(math.Ceil(float64(w)*sin + float64(h)*cos))
		m = m.Then(skewMatrix(w, h, nw, nh, deg))
		w, h = nw, nh
	}
	skew(first)
	m = m.Then(turnMatrix(w, h, turn))
	if turn == 90 || turn == 270 {
		w, h = h, w
	}
	skew(second)
	return m, w, h
}

// skewMatrix is the deskew step's map from a w×h image to the wnew×hnew
// one: the border that centres the image on the larger canvas, then
// Leptonica's rotation by deg (clockwise positive, y down) about the
// canvas's pixel (wnew/2, hnew/2). It mirrors the ocr package's own.
func skewMatrix(w, h, wnew, hnew int, deg float64) Matrix {
	left, top := max(0, (wnew-w)/2), max(0, (hnew-h)/2)
	cx, cy := float64(wnew/2)+0.5, float64(hnew/2)+0.5
	sin, cos := math.Sincos(deg * math.Pi / 180)
	dx, dy := float64(left)-cx, float64(top)-cy
	return Matrix{cos, sin, -sin, cos, cx + cos*dx - sin*dy, cy + sin*dx + cos*dy}
}

// turnMatrix is the map of a clockwise turn by deg (a multiple of 90) of
// a w×h image.
func turnMatrix(w, h, deg int) Matrix {
	fw, fh := float64(w), float64(h)
	switch deg {
	case 90:
		return Matrix{0, 1, -1, 0, fh, 0}
	case 180:
		return Matrix{-1, 0, 0, -1, fw, fh}
	case 270:
		return Matrix{0, -1, 1, 0, 0, fw}
	}
	return Identity
}
