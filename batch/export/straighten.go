package export

// export --straighten: a page turned in the image or deskewed is redrawn
// as the image OCR read, square, with its text layer square on it.
//
// No layer set on a slanted page's ink serves every reader: poppler's
// default mode cuts a slanted line wherever its baseline drifts and reads
// the pieces in an order of its own (a third of the phrases of a page
// skewed by a degree lost), PDFBox reads a page turned in the image in
// content order as the glyphs fall. A square layer on a square image
// reads as an upright page does. So, when asked, each such page's image
// is replaced: MuPDF renders the page at the resolution OCR read it,
// exactly as the OCR did; the page steps' map (result.Canvas: the quarter
// turns and the deskew rotations) is applied to the render in one
// resampling (bilinear; a quarter turn alone moves pixels and resamples
// nothing), onto the canvas OCR read, its corners brought in the paper's
// colour; the result is encoded losslessly (Flate with PNG's Up
// predictor, 8 bits a channel, gray when the render has no colour) and
// drawn as the whole of a new page of the canvas's size at the same
// resolution, /Rotate 0. The words' boxes are in that canvas's pixels, so
// the layer is set with no rotation at all. The source's bytes stay the
// file's first bytes (the update supersedes the page's dictionary), and
// export keeps the source file beside the PDF.
//
// A page with annotations is not straightened (they would no longer sit
// where they belong), nor one whose render does not have the size OCR's
// had: those keep their own image and the layer on their slant.

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"math"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/ocr/result"
)

// PageRenderer draws the pages of one PDF, as MuPDF does (go-fitz's
// Document is one).
type PageRenderer interface {
	ImageDPI(index int, dpi float64) (*image.RGBA, error)
	Close() error
}

// OpenPages opens a PDF's bytes for rendering. Only a program that links
// MuPDF sets it (refbatch, whose export child straightens): the read
// side (handover, refbench) links no engine, and asks no page
// straightened.
var OpenPages func(src []byte) (PageRenderer, error)

// straightens is whether --straighten redraws page p, whose frame is f:
// an OCR'd page with words whose canvas is not its render as it is
// (turned in the image, or deskewed).
func straightens(p result.PageResult, f PageFrame) bool {
	if p.TextSource != result.TextFromOCR || len(p.Words) == 0 || p.DPI <= 0 || p.Width <= 0 || p.Height <= 0 {
		return false
	}
	m := renderToCanvas(p, f)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	return !(near(m[0], 1) && near(m[1], 0) && near(m[2], 0) && near(m[3], 1))
}

// straightened is page p's reading as it lies on its straightened page:
// its canvas is the page, at p's resolution, with no turn.
func straightened(p result.PageResult) (result.PageResult, PageFrame) {
	s := 72 / float64(p.DPI)
	w, h := float64(p.Width)*s, float64(p.Height)*s
	q := p
	q.Canvas = &result.Canvas{RenderWidth: p.Width, RenderHeight: p.Height, Matrix: [6]float64(Identity)}
	return q, PageFrame{Width: w, Height: h, Visible: [4]float64{0, 0, w, h}}
}

// canvasImage is a straightened page's pixels: 1 (gray) or 3 (RGB)
// channels, 8 bits each, rows top to bottom.
type canvasImage struct {
	w, h, channels int
	pix            []byte
}

// renderCanvas renders page index (0-based) of doc at p's resolution and
// maps the render onto p's canvas; false when the render is not the size
// OCR's was.
func renderCanvas(doc PageRenderer, index int, p result.PageResult, f PageFrame) (*canvasImage, bool, error) {
	img, err := doc.ImageDPI(index, float64(p.DPI))
	if err != nil {
		return nil, false, fmt.Errorf("rendering page %d to straighten it: %w", index+1, err)
	}
	rw, rh := renderSize(f.Width, f.Height, p.DPI)
	if p.Canvas != nil {
		rw, rh = p.Canvas.RenderWidth, p.Canvas.RenderHeight
	}
	if b := img.Bounds(); b.Min != (image.Point{}) || b.Dx() != rw || b.Dy() != rh {
		return nil, false, nil
	}
	return resample(img, renderToCanvas(p, f).Invert(), p.Width, p.Height), true, nil
}

// resample draws the w×h canvas whose pixel centres toRender maps onto
// img, bilinearly; what falls outside img is the paper's colour.
func resample(img *image.RGBA, toRender Matrix, w, h int) *canvasImage {
	gray := isGray(img)
	c := &canvasImage{w: w, h: h, channels: 3}
	if gray {
		c.channels = 1
	}
	c.pix = make([]byte, w*h*c.channels)
	paper := paperColour(img)
	rw, rh := img.Rect.Dx(), img.Rect.Dy()
	at := func(x, y, ch int) float64 {
		if x < 0 || y < 0 || x >= rw || y >= rh {
			return float64(paper[ch])
		}
		return float64(img.Pix[y*img.Stride+4*x+ch])
	}
	k := 0
	for y := range h {
		for x := range w {
			// The pixel's centre in the render, as a position between
			// the render's pixel centres.
			u, v := toRender.Apply(float64(x)+0.5, float64(y)+0.5)
			u, v = u-0.5, v-0.5
			x0, y0 := int(math.Floor(u)), int(math.Floor(v))
			fx, fy := u-float64(x0), v-float64(y0)
			for ch := range c.channels {
				top := at(x0, y0, ch)*(1-fx) + at(x0+1, y0, ch)*fx
				bottom := at(x0, y0+1, ch)*(1-fx) + at(x0+1, y0+1, ch)*fx
				c.pix[k] = uint8(math.Round(top*(1-fy) + bottom*fy))
				k++
			}
		}
	}
	return c
}

// isGray is whether every pixel of img has no colour.
func isGray(img *image.RGBA) bool {
	for i := 0; i+3 < len(img.Pix); i += 4 {
		if img.Pix[i] != img.Pix[i+1] || img.Pix[i] != img.Pix[i+2] {
			return false
		}
	}
	return true
}

// paperColour is each channel's median over a grid of about 128 pixels
// across img: most of a page is paper.
func paperColour(img *image.RGBA) [3]uint8 {
	rw, rh := img.Rect.Dx(), img.Rect.Dy()
	step := max(1, rw/128)
	var vals [3][]uint8
	for y := 0; y < rh; y += step {
		for x := 0; x < rw; x += step {
			for ch := range vals {
				vals[ch] = append(vals[ch], img.Pix[y*img.Stride+4*x+ch])
			}
		}
	}
	out := [3]uint8{255, 255, 255}
	for ch, v := range vals {
		if len(v) > 0 {
			slices.Sort(v)
			out[ch] = v[len(v)/2]
		}
	}
	return out
}

// encode writes c as an image XObject, Flate with PNG's Up predictor on
// every row: lossless, and far smaller than the bare samples of a scan.
func (u *update) encode(c *canvasImage) types.IndirectRef {
	row := c.w * c.channels
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.DefaultCompression)
	line := make([]byte, 1+row)
	line[0] = 2 // PNG's Up: each byte less the one above it
	for y := range c.h {
		cur := c.pix[y*row : (y+1)*row]
		for i, v := range cur {
			if y > 0 {
				v -= c.pix[(y-1)*row+i]
			}
			line[1+i] = v
		}
		zw.Write(line)
	}
	zw.Close()
	cs := types.Name("DeviceRGB")
	if c.channels == 1 {
		cs = "DeviceGray"
	}
	return u.rawStream(types.Dict{
		"Type": types.Name("XObject"), "Subtype": types.Name("Image"),
		"Width": types.Integer(c.w), "Height": types.Integer(c.h),
		"ColorSpace": cs, "BitsPerComponent": types.Integer(8),
		"DecodeParms": types.Dict{"Predictor": types.Integer(15), "Colors": types.Integer(c.channels),
			"BitsPerComponent": types.Integer(8), "Columns": types.Integer(c.w)},
	}, z.Bytes(), "FlateDecode")
}

// straightPage is a straightened page's new image and its size in points.
type straightPage struct {
	image types.IndirectRef
	w, h  float64
}

// straightImageName is the straightened image's name in its page's
// resources, which are the page's own and hold nothing else but fonts.
const straightImageName = "RefbatchPage"

// redraw makes page the straightened page sp: its boxes the canvas's
// size, /Rotate 0, its resources the image's alone (the caller adds the
// fonts), its content the image drawn over the whole page. It returns
// the content stream that draws the image.
func (u *update) redraw(page types.Dict, sp *straightPage) (types.IndirectRef, types.Dict) {
	box := types.NewNumberArray(0, 0, sp.w, sp.h)
	page["MediaBox"], page["CropBox"], page["Rotate"] = box, box, types.Integer(0)
	for _, k := range []string{"BleedBox", "TrimBox", "ArtBox", "Thumb", "Group"} {
		delete(page, k)
	}
	res := types.Dict{"XObject": types.Dict{straightImageName: sp.image}}
	draw := u.stream(types.Dict{}, fmt.Appendf(nil, "q %s 0 0 %s 0 0 cm /%s Do Q\n", num(sp.w), num(sp.h), straightImageName))
	return draw, res
}

// hasAnnots is whether page n (1-based) has annotations.
func hasAnnots(ctx *model.Context, n int) bool {
	d, _, _, err := ctx.PageDict(n, false)
	if err != nil {
		return true
	}
	o, ok := d.Find("Annots")
	if !ok || o == nil {
		return false
	}
	a, err := ctx.DereferenceArray(o)
	return err != nil || len(a) > 0
}

// straighten renders, maps and writes the image of each page of src
// --straighten redraws, by index; see the top of the file for those it
// leaves.
func (u *update) straighten(ctx *model.Context, src []byte, pages []result.PageResult, frames []PageFrame) (map[int]*straightPage, error) {
	out := map[int]*straightPage{}
	var doc PageRenderer
	defer func() {
		if doc != nil {
			doc.Close()
		}
	}()
	for i, p := range pages {
		if !straightens(p, frames[i]) || hasAnnots(ctx, i+1) {
			continue
		}
		if doc == nil {
			if OpenPages == nil {
				return nil, fmt.Errorf("straightening pages needs MuPDF, which this program does not link")
			}
			d, err := OpenPages(src)
			if err != nil {
				return nil, fmt.Errorf("opening the source to straighten its pages: %w", err)
			}
			doc = d
		}
		c, ok, err := renderCanvas(doc, i, p, frames[i])
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		_, f := straightened(p)
		out[i] = &straightPage{image: u.encode(c), w: f.Width, h: f.Height}
	}
	return out, nil
}
