package main

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// paper is a page size in inches.
type paper struct {
	Name string
	W, H float64
}

var papers = []paper{
	{Name: "Letter", W: 8.5, H: 11},
	{Name: "A4", W: 210 / 25.4, H: 297 / 25.4},
}

// margin is the page margin in inches.
const margin = 0.8

// fontSet holds the parsed Go fonts; parsing is done once per run.
type fontSet struct {
	regular, mono, bold *opentype.Font
}

func loadFonts() (fontSet, error) {
	var fs fontSet
	for _, f := range []struct {
		dst **opentype.Font
		ttf []byte
		nm  string
	}{{&fs.regular, goregular.TTF, "goregular"}, {&fs.mono, gomono.TTF, "gomono"}, {&fs.bold, gobold.TTF, "gobold"}} {
		parsed, err := opentype.Parse(f.ttf)
		if err != nil {
			return fontSet{}, fmt.Errorf("parsing %s: %w", f.nm, err)
		}
		*f.dst = parsed
	}
	return fs, nil
}

// docStyle is what stays the same on every page of one scan.
type docStyle struct {
	DPI    int
	Paper  paper
	BodyPt float64 // body text size in points, 10 to 12
	Mono   bool    // body text in Go Mono rather than Go Regular
}

// pageStyle is how one page was scanned.
type pageStyle struct {
	Bitonal    bool
	Skew       float64 // degrees, positive is counter-clockwise
	Threshold  uint8   // bitonal pages: grey level at or above which a pixel is white
	Paper      uint8   // grey pages: the paper's grey level
	Ink        uint8   // grey pages: the ink's grey level
	NoiseShare float64 // share of pixels that get noise
	Specks     int     // number of small dark specks
}

// newDocStyle picks a scan's DPI, paper and type from r.
func newDocStyle(r *rand.Rand, dpis []int) docStyle {
	return docStyle{
		DPI:    pick(r, dpis),
		Paper:  pick(r, papers),
		BodyPt: 10 + float64(r.IntN(5))*0.5,
		Mono:   r.IntN(4) == 0,
	}
}

// maxSkew is the largest skew in degrees. Measured with Tesseract 5.3 in
// its default page segmentation: from about 1.3 degrees clockwise it began
// to drop whole paragraphs of these pages, so good documents stay within 1.
const maxSkew = 1.0

// newPageStyle picks one page's degradations from r. Scans at 150 DPI or
// less are 8-bit grey, as low-resolution office scans usually are; finer
// scans are 1-bit, as document scanners in black-and-white mode make them.
// That also keeps grey pages, which compress far worse, small.
func newPageStyle(r *rand.Rand, dpi int) pageStyle {
	return pageStyle{
		Bitonal:    dpi > 150,
		Skew:       math.Round((r.Float64()*2-1)*maxSkew*10) / 10,
		Threshold:  uint8(130 + r.IntN(30)),
		Paper:      uint8(236 + r.IntN(15)),
		Ink:        uint8(10 + r.IntN(30)),
		NoiseShare: 0.002 + r.Float64()*0.006,
		Specks:     10 + r.IntN(50),
	}
}

// faces are the font faces for one page, sized for its DPI. Field values
// are always in Go Regular, which Tesseract read more reliably than Go Mono
// in the identity lines (Go Mono once gave "P-8526590" for "P-852650").
type faces struct {
	title, heading, label, value, body, small font.Face
	pt                                        map[font.Face]float64 // each face's size in points
}

func newFaces(fs fontSet, ds docStyle) (faces, error) {
	body := fs.regular
	if ds.Mono {
		body = fs.mono
	}
	// Without hinting Tesseract misread the slashed zero and the long
	// hyphen of the Go fonts about half as often as with full hinting.
	mk := func(f *opentype.Font, pt float64) (font.Face, error) {
		return opentype.NewFace(f, &opentype.FaceOptions{Size: pt, DPI: float64(ds.DPI), Hinting: font.HintingNone})
	}
	fc := faces{pt: map[font.Face]float64{}}
	var err error
	for _, s := range []struct {
		dst *font.Face
		f   *opentype.Font
		pt  float64
	}{
		{&fc.title, fs.bold, ds.BodyPt * 1.6},
		{&fc.heading, fs.bold, ds.BodyPt * 1.1},
		{&fc.label, fs.bold, ds.BodyPt},
		{&fc.value, fs.regular, ds.BodyPt},
		{&fc.body, body, ds.BodyPt},
		{&fc.small, fs.regular, ds.BodyPt * 0.9},
	} {
		if *s.dst, err = mk(s.f, s.pt); err != nil {
			return faces{}, fmt.Errorf("making a %.1f pt face: %w", s.pt, err)
		}
		fc.pt[*s.dst] = s.pt
	}
	return fc, nil
}

func (fc faces) Close() {
	for _, f := range []font.Face{fc.title, fc.heading, fc.label, fc.value, fc.body, fc.small} {
		if f != nil {
			f.Close()
		}
	}
}

// layout draws blocks onto a white page and returns the page and the text
// drawn, one line per drawn line, table cells separated by one space.
func layout(blocks []block, ds docStyle, fc faces) (*image.Gray, string, error) {
	img, l, err := layoutPage(blocks, ds, fc)
	return img, l.Text, err
}

// textRun is one piece of text as layoutPage drew it: X and Baseline in
// pixels from the page's top left corner, the face's size in points.
type textRun struct {
	X, Baseline int
	Pt          float64
	Text        string
}

// pageLayout is what layoutPage drew besides the pixels.
type pageLayout struct {
	Text string    // one line per drawn line, table cells separated by one space
	Runs []textRun // every piece of text, in drawing order
	End  int       // the first pixel row below the body (the footer excepted)
	Foot int       // the top of the footer, or the bottom margin without one
}

// layoutPage draws blocks onto a white page; see layout.
func layoutPage(blocks []block, ds docStyle, fc faces) (*image.Gray, pageLayout, error) {
	dpi := float64(ds.DPI)
	w, h := int(math.Round(ds.Paper.W*dpi)), int(math.Round(ds.Paper.H*dpi))
	img := image.NewGray(image.Rect(0, 0, w, h))
	fill(img, 255)
	left := int(margin * dpi)
	right := w - left
	bottom := h - int(margin*dpi)
	y := int(margin * dpi) // top of the next line
	var lines []string
	var pl pageLayout
	pl.Foot = bottom

	draw1 := func(face font.Face, x, top int, s string) int {
		m := face.Metrics()
		d := &font.Drawer{Dst: img, Src: image.Black, Face: face, Dot: fixed.P(x, top+m.Ascent.Ceil())}
		drawText(d, s)
		pl.Runs = append(pl.Runs, textRun{X: x, Baseline: top + m.Ascent.Ceil(), Pt: fc.pt[face], Text: s})
		return d.Dot.X.Ceil()
	}
	for _, b := range blocks {
		switch b.Kind {
		case blockTitle, blockHeading:
			face := fc.heading
			if b.Kind == blockTitle {
				face = fc.title
			}
			draw1(face, left, y, b.Text)
			lines = append(lines, b.Text)
			y += lineHeight(face)
		case blockField:
			// Label and value share a baseline even when their sizes differ.
			label, value, _ := strings.Cut(b.Text, ": ")
			la, va := fc.label.Metrics().Ascent.Ceil(), fc.value.Metrics().Ascent.Ceil()
			base := y + max(la, va)
			x := draw1(fc.label, left, base-la, label+":")
			draw1(fc.value, x+font.MeasureString(fc.value, " ").Ceil(), base-va, value)
			lines = append(lines, b.Text)
			y += max(lineHeight(fc.label), lineHeight(fc.value))
		case blockPara:
			for _, l := range wrap(fc.body, b.Text, right-left) {
				draw1(fc.body, left, y, l)
				lines = append(lines, l)
				y += lineHeight(fc.body)
			}
		case blockTable:
			gap := font.MeasureString(fc.body, "mmmm").Ceil()
			widths := make([]int, len(b.Rows[0]))
			for _, row := range b.Rows {
				for i, c := range row {
					widths[i] = max(widths[i], font.MeasureString(fc.label, c).Ceil(), font.MeasureString(fc.body, c).Ceil())
				}
			}
			for ri, row := range b.Rows {
				face := fc.body
				if ri == 0 {
					face = fc.label
				}
				x := left
				for i, c := range row {
					draw1(face, x, y, c)
					x += widths[i] + gap
				}
				lines = append(lines, strings.Join(row, " "))
				y += lineHeight(face)
				if ri == 0 {
					// A thin rule under the header, as printed forms have.
					rule := max(1, ds.DPI/150)
					for yy := y - lineHeight(face)/5; yy < y-lineHeight(face)/5+rule; yy++ {
						for xx := left; xx < x-gap; xx++ {
							img.Pix[yy*img.Stride+xx] = 0
						}
					}
				}
			}
		case blockGap:
			y += lineHeight(fc.body) / 2
		case blockFooter:
			top := bottom - fc.small.Metrics().Height.Ceil()
			if y > top {
				return nil, pl, fmt.Errorf("page content overflows into the footer by %d px", y-top)
			}
			pl.Foot = top
			draw1(fc.small, right-font.MeasureString(fc.small, b.Text).Ceil(), top, b.Text)
			lines = append(lines, b.Text)
		}
		if y > bottom {
			return nil, pl, fmt.Errorf("page content overflows the bottom margin by %d px", y-bottom)
		}
		if b.Kind != blockFooter {
			pl.End = y
		}
	}
	pl.Text = strings.Join(lines, "\n")
	return img, pl, nil
}

// lineHeight is the distance between the baselines of two lines of face.
func lineHeight(face font.Face) int {
	return int(math.Ceil(float64(face.Metrics().Height.Ceil()) * 1.25))
}

// drawText draws s at d's dot and advances it, drawing two glyphs the way
// a text face would. The Go fonts are made for code: their hyphen-minus is
// a minus sign 0.48 em wide and their zero is slashed, and Tesseract read
// them as "—" or "~" and as "9", "6" or "@". Over 80 documents at 150 and
// 200 DPI, rendered at 300 DPI, the participant ID or the date failed to
// read exactly on 9 with the fonts' own glyphs and on 1 with these.
// Referral forms are typed in text faces, so hyphens are drawn as a
// shorter bar and zeros as a plain oval, both sized from the face's glyphs.
func drawText(d *font.Drawer, s string) {
	start := 0
	for i, r := range s {
		if r != '-' && r != '0' {
			continue
		}
		d.DrawString(s[start:i])
		start = i + 1
		if !drawPlain(d, r) {
			d.DrawString(string(r))
		}
	}
	d.DrawString(s[start:])
}

// drawPlain draws a plain hyphen or zero at d's dot and advances it. It
// reports false if the face lacks the glyphs it measures.
func drawPlain(d *font.Drawer, r rune) bool {
	hb, hadv, ok := d.Face.GlyphBounds('-')
	if !ok {
		return false
	}
	dst, ok := d.Dst.(*image.Gray)
	if !ok {
		return false
	}
	stroke := fixed2f(hb.Max.Y - hb.Min.Y) // the face's horizontal stroke weight
	x0, y0 := fixed2f(d.Dot.X), fixed2f(d.Dot.Y)
	var z vector.Rasterizer
	var box image.Rectangle
	var adv fixed.Int26_6
	switch r {
	case '-':
		full := hb.Max.X - hb.Min.X
		w := full * 3 / 5 // 0.29 em, a text face's hyphen
		minX, maxX := x0+fixed2f(hb.Min.X), x0+fixed2f(hb.Min.X+w)
		minY, maxY := y0+fixed2f(hb.Min.Y), y0+fixed2f(hb.Max.Y)
		box = image.Rect(int(minX), int(minY), int(maxX)+2, int(maxY)+2)
		ox, oy := float32(box.Min.X), float32(box.Min.Y)
		z.Reset(box.Dx(), box.Dy())
		z.MoveTo(minX-ox, minY-oy)
		z.LineTo(maxX-ox, minY-oy)
		z.LineTo(maxX-ox, maxY-oy)
		z.LineTo(minX-ox, maxY-oy)
		z.ClosePath()
		adv = hadv - (full - w)
	case '0':
		zb, zadv, ok := d.Face.GlyphBounds('0')
		if !ok {
			return false
		}
		minX, maxX := x0+fixed2f(zb.Min.X), x0+fixed2f(zb.Max.X)
		minY, maxY := y0+fixed2f(zb.Min.Y), y0+fixed2f(zb.Max.Y)
		box = image.Rect(int(minX), int(minY), int(maxX)+2, int(maxY)+2)
		ox, oy := float32(box.Min.X), float32(box.Min.Y)
		cx, cy := (minX+maxX)/2-ox, (minY+maxY)/2-oy
		rx, ry := (maxX-minX)/2, (maxY-minY)/2
		z.Reset(box.Dx(), box.Dy())
		// The ring is an outer oval and an inner one traced the other
		// way round; the sides are heavier than the top and bottom, as
		// in most text faces.
		ellipse(&z, cx, cy, rx, ry, false)
		ellipse(&z, cx, cy, rx-1.3*stroke, ry-stroke, true)
		adv = zadv
	}
	box = box.Intersect(dst.Rect)
	if !box.Empty() {
		z.Draw(dst, box, image.Black, image.Point{})
	}
	d.Dot.X += adv
	return true
}

// ellipse adds an ellipse to z as four cubic Béziers, counter-clockwise
// on screen, or clockwise if reverse.
func ellipse(z *vector.Rasterizer, cx, cy, rx, ry float32, reverse bool) {
	const k = 0.5522848 // control-point distance for a quarter circle
	if reverse {
		ry = -ry
	}
	z.MoveTo(cx+rx, cy)
	z.CubeTo(cx+rx, cy+k*ry, cx+k*rx, cy+ry, cx, cy+ry)
	z.CubeTo(cx-k*rx, cy+ry, cx-rx, cy+k*ry, cx-rx, cy)
	z.CubeTo(cx-rx, cy-k*ry, cx-k*rx, cy-ry, cx, cy-ry)
	z.CubeTo(cx+k*rx, cy-ry, cx+rx, cy-k*ry, cx+rx, cy)
	z.ClosePath()
}

func fixed2f(v fixed.Int26_6) float32 {
	return float32(v) / 64
}

// wrap breaks text into lines no wider than width pixels.
func wrap(face font.Face, text string, width int) []string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(text) {
		next := w
		if cur != "" {
			next = cur + " " + w
		}
		if cur != "" && font.MeasureString(face, next).Ceil() > width {
			lines = append(lines, cur)
			next = w
		}
		cur = next
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
