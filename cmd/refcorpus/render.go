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

// degrade turns a clean page into a plausible scan of it: paper and ink
// tone, skew, sparse noise, specks, and for bitonal pages a threshold.
// Noise is sparse rather than per-pixel because dense noise would make
// every page incompressible.
func degrade(r *rand.Rand, clean *image.Gray, ps pageStyle, dpi int) *image.Gray {
	paperLevel, ink := ps.Paper, ps.Ink
	if ps.Bitonal {
		paperLevel, ink = 255, 0
	}
	if paperLevel != 255 || ink != 0 {
		var lut [256]uint8
		for v := range lut {
			lut[v] = uint8(int(ink) + (int(paperLevel)-int(ink))*v/255)
		}
		for i, v := range clean.Pix {
			clean.Pix[i] = lut[v]
		}
	}
	out := clean
	if ps.Skew != 0 {
		out = image.NewGray(clean.Bounds())
		fill(out, paperLevel)
		rotate(out, clean, ps.Skew)
	}
	sparseNoise(r, out, ps.NoiseShare)
	b := out.Bounds()
	w, h := b.Dx(), b.Dy()
	radius := max(1, dpi/150)
	for range ps.Specks {
		cx, cy := r.IntN(w), r.IntN(h)
		rr := radius + r.IntN(radius+1)
		for y := max(0, cy-rr); y < min(h, cy+rr); y++ {
			for x := max(0, cx-rr); x < min(w, cx+rr); x++ {
				if (x-cx)*(x-cx)+(y-cy)*(y-cy) <= rr*rr {
					out.Pix[y*out.Stride+x] = ink + uint8(r.IntN(40))
				}
			}
		}
	}
	if ps.Bitonal {
		threshold(out, ps.Threshold)
	}
	return out
}

// rotate draws src onto dst turned by deg degrees about the page centre,
// with bilinear sampling; dst pixels that come from outside src keep their
// value. The arithmetic is fixed-point (16 fractional bits) so the result
// does not depend on how a platform rounds or fuses float operations.
func rotate(dst, src *image.Gray, deg float64) {
	sin, cos := math.Sincos(deg * math.Pi / 180)
	const one = 1 << 16
	c, s := int64(math.Round(cos*one)), int64(math.Round(sin*one))
	w, h := src.Bounds().Dx(), src.Bounds().Dy()
	for y := range h {
		dy2 := int64(2*y + 1 - h) // twice the offset of the pixel centre from the page centre
		row := dst.Pix[y*dst.Stride:]
		for x := range w {
			dx2 := int64(2*x + 1 - w)
			// The inverse turn: where in src this pixel's centre came from,
			// in 1/65536 px, measured from pixel centres. Image y grows
			// downwards, so a counter-clockwise turn on paper has these signs.
			u := (c*dx2-s*dy2)/2 + int64(w)*one/2 - one/2
			v := (s*dx2+c*dy2)/2 + int64(h)*one/2 - one/2
			x0, y0 := int(u>>16), int(v>>16)
			if x0 < 0 || y0 < 0 || x0+1 >= w || y0+1 >= h {
				continue
			}
			fx, fy := u&(one-1), v&(one-1)
			i := y0*src.Stride + x0
			p00, p10 := int64(src.Pix[i]), int64(src.Pix[i+1])
			p01, p11 := int64(src.Pix[i+src.Stride]), int64(src.Pix[i+src.Stride+1])
			top := p00*(one-fx) + p10*fx
			bot := p01*(one-fx) + p11*fx
			row[x] = uint8((top*(one-fy) + bot*fy + 1<<31) >> 32)
		}
	}
}

// fill sets every pixel of img to v.
// sparseNoise nudges a share of img's pixels, picked at random, by up to
// ±60 gray levels: a scanner's sensor noise. The sum of two uniform draws
// is a rough bell in integers.
func sparseNoise(r *rand.Rand, img *image.Gray, share float64) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	for range int(share * float64(w*h)) {
		i := r.IntN(w) + r.IntN(h)*img.Stride
		v := int(img.Pix[i]) + r.IntN(61) - 30 + r.IntN(61) - 30
		img.Pix[i] = uint8(max(0, min(255, v)))
	}
}

// threshold makes img 1-bit in place: white from t up, black below.
func threshold(img *image.Gray, t uint8) {
	for i, v := range img.Pix {
		if v >= t {
			img.Pix[i] = 255
		} else {
			img.Pix[i] = 0
		}
	}
}

// skewPlanes returns the ink plane, and the stamp plane when there is
// one, turned by deg degrees on white, as a scanner feeds a page askew.
func skewPlanes(ink, stampPlane *image.Gray, hasStamp bool, deg float64) (*image.Gray, *image.Gray) {
	turn := func(src *image.Gray) *image.Gray {
		out := image.NewGray(src.Bounds())
		fill(out, 255)
		rotate(out, src, deg)
		return out
	}
	ink = turn(ink)
	if hasStamp {
		stampPlane = turn(stampPlane)
	}
	return ink, stampPlane
}

func fill(img *image.Gray, v uint8) {
	for i := range img.Pix {
		img.Pix[i] = v
	}
}
