package view

// The child side of a Pool: ServeMain renders pages with MuPDF.

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"runtime"

	"github.com/gen2brain/go-fitz"

	"github.com/refbatch/refbatch/ocr/child"
)

// ServeMain is the view child's entry point, called by the binary's hidden
// view command. It returns the process exit code: 0 when the parent
// closed the request pipe, 1 on a failure, 2 when run by hand.
func ServeMain() int {
	// MuPDF on one thread, as the OCR worker keeps it.
	runtime.LockOSThread()
	var v viewer
	defer v.close()
	err := child.ServeMain(func(s child.Setup) (struct{}, error) {
		child.SetResidentCap(1 << 30)
		return struct{}{}, s.Apply()
	}, v.serve)
	return child.ExitCode("refbatch view child", err)
}

// viewer is the child's state: the document open, by key.
type viewer struct {
	doc *fitz.Document
	key string
}

func (v *viewer) close() {
	if v.doc != nil {
		v.doc.Close()
		v.doc, v.key = nil, ""
	}
}

// storeLimit caps MuPDF's resource cache, as the OCR worker's does.
const storeLimit = 32 << 20

func (v *viewer) serve(req request) reply {
	fail := func(format string, args ...any) reply {
		return reply{Key: v.key, Err: fmt.Sprintf(format, args...)}
	}
	if req.PDF != nil {
		v.close()
		fitz.MaxStore = storeLimit
		doc, err := fitz.NewFromMemory(req.PDF)
		if err != nil {
			if doc != nil {
				doc.Close()
			}
			return fail("MuPDF cannot open the document")
		}
		v.doc, v.key = doc, req.Key
	}
	if v.doc == nil || v.key != req.Key {
		return fail("the document is not open")
	}
	n := v.doc.NumPage()
	if req.Page < 0 || req.Page >= n {
		// Counted from 0 as asked: req.Page+1 overflows for the largest.
		return fail("page %d (counted from 0) out of range: the document has %d, 0 to %d", req.Page, n, n-1)
	}
	bound, err := v.doc.Bound(req.Page)
	if err != nil || bound.Dx() <= 0 || bound.Dy() <= 0 {
		return fail("MuPDF cannot read the size of page %d", req.Page+1)
	}
	g := req.Geometry
	w, h := float64(bound.Dx()), float64(bound.Dy())
	if g.Rotate == 90 || g.Rotate == 270 {
		w, h = h, w
	}
	dpi, k := fitDPI(w, h, req.Width), 0.0
	if g.DPI > 0 {
		// The canvas OCR read, scaled: rendered at the scale's DPI.
		k = g.canvasScale(req.Width)
		dpi = float64(g.DPI) * k
	}
	rendered, err := v.doc.ImageDPI(req.Page, dpi)
	if err != nil {
		return fail("MuPDF cannot render page %d", req.Page+1)
	}
	var img *image.RGBA
	if g.DPI > 0 {
		img = onCanvas(rendered, g, k)
	} else {
		img = turn(rendered, g.Rotate)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		return fail("encoding page %d: %v", req.Page+1, err)
	}
	return reply{JPEG: buf.Bytes(), Width: img.Rect.Dx(), Height: img.Rect.Dy(), Pages: n, Key: v.key}
}

// fitDPI is the resolution that renders a page of w×h points width
// pixels wide, within maxDPI and MaxPixels.
func fitDPI(w, h float64, width int) float64 {
	dpi := min(float64(width)*72/w, maxDPI)
	if px := (w * dpi / 72) * (h * dpi / 72); px > MaxPixels {
		dpi *= math.Sqrt(MaxPixels / px)
	}
	return dpi
}

// turn returns img turned clockwise by deg (0, 90, 180 or 270).
func turn(img *image.RGBA, deg int) *image.RGBA {
	if deg == 0 {
		return img
	}
	b := img.Rect
	w, h := b.Dx(), b.Dy()
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	if deg != 180 {
		out = image.NewRGBA(image.Rect(0, 0, h, w))
	}
	for y := range h {
		row := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		for x := range w {
			var dx, dy int
			switch deg {
			case 90:
				dx, dy = h-1-y, x
			case 180:
				dx, dy = w-1-x, h-1-y
			default: // 270
				dx, dy = y, w-1-x
			}
			copy(out.Pix[dy*out.Stride+dx*4:dy*out.Stride+dx*4+4], row[x*4:x*4+4])
		}
	}
	return out
}
