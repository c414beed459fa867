package view

// How a page is turned before it is shown: as OCR turned and straightened
// it, so that the boxes of the words it read sit on their ink.

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// Geometry is how a rendered page is turned before it is shown.
//
// With DPI 0 the render is turned clockwise by Rotate (0, 90, 180 or
// 270), as OCR turned the page upright: how pages read before their
// canvas was recorded are shown. With DPI set, the image shown is the
// canvas OCR read (ocr/result's Canvas): Matrix [a b c d e f] takes the
// point (x, y) of MuPDF's render of the page at DPI to (a·x + c·y + e,
// b·x + d·y + f) on a Width×Height canvas, turns and deskew rotations
// included; the image shown is that canvas scaled to the width asked, so
// a box in the canvas's pixels, scaled, is where its ink is.
type Geometry struct {
	Rotate        int
	DPI           int
	Matrix        [6]float64
	Width, Height int
}

// Check refuses a geometry no page reading makes: a turn that is not a
// quarter turn, a map that is not finite or that shrinks or swells the
// page (a page step only turns it), a canvas or resolution out of reason.
func (g Geometry) Check() error {
	if g.DPI == 0 {
		if g.Rotate%90 != 0 || g.Rotate < 0 || g.Rotate >= 360 {
			return fmt.Errorf("a page turns by 0, 90, 180 or 270 degrees, not %d", g.Rotate)
		}
		return nil
	}
	for _, v := range g.Matrix {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
			return errors.New("a page's canvas map is six finite numbers")
		}
	}
	if det := g.Matrix[0]*g.Matrix[3] - g.Matrix[1]*g.Matrix[2]; math.Abs(det) < 0.5 || math.Abs(det) > 2 {
		return errors.New("a page's canvas map turns the page; it does not scale it")
	}
	if g.DPI < 1 || g.DPI > 2400 || g.Width < 1 || g.Height < 1 || g.Width > 1<<17 || g.Height > 1<<17 {
		return errors.New("a page's canvas is 1 to 131072 pixels a side, read at 1 to 2400 dpi")
	}
	return nil
}

// canvasScale is the scale from the canvas to the image shown width
// pixels wide, within maxDPI and MaxPixels.
func (g Geometry) canvasScale(width int) float64 {
	k := min(float64(width)/float64(g.Width), maxDPI/float64(g.DPI))
	if px := k * k * float64(g.Width) * float64(g.Height); px > MaxPixels {
		k *= math.Sqrt(MaxPixels / px)
	}
	return k
}

// onCanvas maps render, MuPDF's render of the page at k times g.DPI, onto
// g's canvas scaled by k: each pixel of the image shown is taken back
// through the map to the render and sampled there (bilinear); what falls
// outside the render is white, as the paper around a scan shows.
func onCanvas(render *image.RGBA, g Geometry, k float64) *image.RGBA {
	w, h := max(1, int(math.Round(float64(g.Width)*k))), max(1, int(math.Round(float64(g.Height)*k)))
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	m := g.Matrix
	det := m[0]*m[3] - m[1]*m[2]
	// The inverse of m, in the same order: canvas to render at DPI.
	ia, ib, ic, id := m[3]/det, -m[1]/det, -m[2]/det, m[0]/det
	ie, iF := -(m[4]*ia + m[5]*ic), -(m[4]*ib + m[5]*id)
	rb := render.Rect
	rw, rh := rb.Dx(), rb.Dy()
	for y := range h {
		cy := (float64(y) + 0.5) / k
		row := out.Pix[y*out.Stride:]
		for x := range w {
			cx := (float64(x) + 0.5) / k
			// The render's pixel centres are at i+0.5.
			u := (ia*cx+ic*cy+ie)*k - 0.5
			v := (ib*cx+id*cy+iF)*k - 0.5
			px := sample(render, rw, rh, u, v)
			copy(row[x*4:x*4+4], px[:])
		}
	}
	return out
}

// sample is render's colour at (u, v), between its pixel centres,
// white off the render.
func sample(render *image.RGBA, rw, rh int, u, v float64) [4]byte {
	white := [4]byte{255, 255, 255, 255}
	if u < -0.5 || v < -0.5 || u > float64(rw)-0.5 || v > float64(rh)-0.5 {
		return white
	}
	x0, y0 := int(math.Floor(u)), int(math.Floor(v))
	fx, fy := u-float64(x0), v-float64(y0)
	at := func(x, y int) []byte {
		x, y = min(max(x, 0), rw-1), min(max(y, 0), rh-1)
		o := render.PixOffset(render.Rect.Min.X+x, render.Rect.Min.Y+y)
		return render.Pix[o : o+4]
	}
	p00, p10, p01, p11 := at(x0, y0), at(x0+1, y0), at(x0, y0+1), at(x0+1, y0+1)
	var c [4]byte
	for i := range 3 {
		top := float64(p00[i])*(1-fx) + float64(p10[i])*fx
		bot := float64(p01[i])*(1-fx) + float64(p11[i])*fx
		c[i] = byte(math.Round(top*(1-fy) + bot*fy))
	}
	c[3] = 255
	return c
}
