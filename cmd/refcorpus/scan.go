package main

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// This file draws the pages of --degrade and --bad-all: every page gets a
// kind (how it was scanned and stored), a skew, and sometimes a quarter
// turn, a stamp over its text or a signature.

// Page kinds. Every kind also gets the light noise and specks of any scan.
const (
	kindBitonal     = "bitonal"      // 1-bit, /FlateDecode
	kindCCITT       = "ccitt"        // 1-bit, /CCITTFaxDecode Group 4
	kindGrey        = "grey"         // 8-bit grey, /FlateDecode
	kindLowContrast = "low_contrast" // 8-bit grey: grey paper, faded ink
	kindNoise       = "noise"        // 1-bit photocopy: dense speckle, sometimes a streak
	kindBlur        = "blur"         // 8-bit grey, out of focus, /DCTDecode at quality 60 to 80
	kindYellowed    = "yellowed"     // /DeviceRGB: aged, stained paper; /FlateDecode at 150 DPI, else /DCTDecode
	kindJPEG        = "jpeg"         // 8-bit grey /DCTDecode at quality 15 to 35

	// kindRaw is grey stored with no compression at all; only the
	// too_large input uses it.
	kindRaw = "raw"
)

// scanKinds are the kinds the deck deals to the pages of good documents.
var scanKinds = []string{kindBitonal, kindCCITT, kindGrey, kindLowContrast, kindNoise, kindBlur, kindYellowed, kindJPEG}

// turn is how a page is turned: Image is how far (clockwise, in degrees)
// the content is turned inside the stored image, Entry the page's /Rotate,
// which the renderer applies. The rendered page is turned by their sum.
type turn struct{ Image, Entry int }

// Shown is how far the rendered page is turned clockwise; 0 is upright.
func (t turn) Shown() int { return (t.Image + t.Entry) % 360 }

// turns are the turned cases: turned in the image only (the scanner fed
// the page sideways), turned in the image and put right by /Rotate (the
// scanner knew), and upright in the image but turned by a wrong /Rotate.
var turns = []turn{
	{90, 0}, {180, 0}, {270, 0},
	{90, 270}, {180, 180}, {270, 90},
	{0, 90}, {0, 180}, {0, 270},
}

// uprightPerTurned sets how often a page is upright: the turn deck holds
// each turned case once and this many upright pages per turned case, so
// one page in seven is turned.
const uprightPerTurned = 6

// Streams of the decks, far from documents' and extraStream's.
const (
	kindDeckStream = 1 << 40
	turnDeckStream = 2 << 40
)

// deck deals page kinds and turns to page slots in order: every cycle of
// slots holds each kind (and each turned case) the same number of times,
// shuffled by the seed, so that even a small corpus has them all.
type deck struct {
	seed  uint64
	kinds map[int][]int
	turns map[int][]int
}

func newDeck(seed uint64) *deck {
	return &deck{seed: seed, kinds: map[int][]int{}, turns: map[int][]int{}}
}

func (d *deck) kind(slot int) string {
	n := len(scanKinds)
	c := slot / n
	if d.kinds[c] == nil {
		d.kinds[c] = rng(d.seed, kindDeckStream+uint64(c)).Perm(n)
	}
	return scanKinds[d.kinds[c][slot%n]]
}

func (d *deck) turn(slot int) turn {
	n := len(turns) * (1 + uprightPerTurned)
	c := slot / n
	if d.turns[c] == nil {
		d.turns[c] = rng(d.seed, turnDeckStream+uint64(c)).Perm(n)
	}
	if i := d.turns[c][slot%n]; i < len(turns) {
		return turns[i]
	}
	return turn{}
}

// scanPlan is how a --degrade or --bad-all document is to be drawn. A
// document with a plan goes through renderScan; one without is drawn as
// the built-in sample's are.
type scanPlan struct {
	Kinds []string // one per page of the file, blank pages included
	Turns []turn   // one per page; missing means upright
	Blank int      // index of an inserted blank page, or -1
	// AllBlank draws no content at all: every page is blank.
	AllBlank bool
	// Upright forbids skew, turns and stamps, so that a text layer lies
	// on the drawn lines.
	Upright bool
	// TextLayer is "visible" for a born-digital page (text drawn with the
	// embedded font, no image), "invisible" for a scan with an OCR text
	// layer over it, or empty.
	TextLayer string
	// DPI, when set, is every page's DPI, whatever --dpi-set says.
	DPI int
	// KeepImages keeps each page's final image in rendered.Images.
	KeepImages bool
	// BodyPt, when set, is the body type size, whatever the document's
	// stream draws.
	BodyPt float64
	// Hard, for a --hard document, is how each page is degraded instead
	// of by its kind (see hard.go).
	Hard []hardPage
}

// scanMeta is one page's degradation, as the ground truth records it.
type scanMeta struct {
	Kind        string `json:"kind"`
	DPI         int    `json:"dpi"`
	Colour      string `json:"colour"`   // bitonal, grey or rgb
	Encoding    string `json:"encoding"` // flate, dct, ccitt_g4, raw or none
	JPEGQuality int    `json:"jpeg_quality,omitempty"`
	// Rotation is how far (clockwise, degrees) the content is turned
	// inside the stored image; RotateEntry is the page's /Rotate;
	// ShownRotation is how far the page is turned once rendered.
	Rotation      int    `json:"rotation"`
	RotateEntry   int    `json:"rotate_entry"`
	ShownRotation int    `json:"shown_rotation"`
	Blank         bool   `json:"blank,omitempty"`
	Table         bool   `json:"table,omitempty"`
	Stamp         string `json:"stamp,omitempty"` // the stamp's words; not part of the page's text
	Signature     bool   `json:"signature,omitempty"`
	TextLayer     string `json:"text_layer,omitempty"`
	// Degradation is how a --hard page was degraded.
	Degradation *hardPage `json:"degradation,omitempty"`
	// Coverage is how a --coverage page was drawn (see coverage.go).
	Coverage *coverMeta `json:"coverage,omitempty"`
}

// scanStyle is how one page is degraded, drawn from the document's
// stream.
type scanStyle struct {
	Kind       string
	DPI        int
	Skew       float64
	Threshold  uint8   // bitonal kinds
	Paper, Ink uint8   // grey tones
	NoiseShare float64 // light noise of every scan
	Specks     int
	Flips      float64 // noise kind: share of pixels speckled
	Streak     bool    // noise kind: a copier drum scratch
	BlurRadius int     // blur kind: box radius in pixels
	BlurPasses int
	Quality    int      // JPEG quality, for DCT pages
	PaperRGB   [3]uint8 // yellowed
	InkRGB     [3]uint8
	Stains     int
	OneBit     bool // hard kinds: cut to 1 bit
}

func (s scanStyle) bitonal() bool {
	return s.OneBit || s.Kind == kindBitonal || s.Kind == kindCCITT || s.Kind == kindNoise
}

// skewMagnitude draws a skew: half of the pages within 1 degree, three in
// ten between 1 and 2, the rest up to 3, either way, to a tenth.
func skewMagnitude(r *rand.Rand) float64 {
	var m float64
	switch u := r.Float64(); {
	case u < 0.5:
		m = r.Float64()
	case u < 0.8:
		m = 1 + r.Float64()
	default:
		m = 2 + r.Float64()
	}
	if r.IntN(2) == 0 {
		m = -m
	}
	return math.Round(m*10) / 10
}

func newScanStyle(r *rand.Rand, kind string, dpi int, upright bool) scanStyle {
	s := scanStyle{
		Kind:       kind,
		DPI:        dpi,
		Skew:       skewMagnitude(r),
		Threshold:  uint8(120 + r.IntN(50)),
		Paper:      uint8(228 + r.IntN(23)),
		Ink:        uint8(10 + r.IntN(36)),
		NoiseShare: 0.002 + r.Float64()*0.006,
		Specks:     10 + r.IntN(50),
	}
	if upright {
		s.Skew = 0
	}
	switch kind {
	case kindGrey, kindLowContrast, kindBlur, kindYellowed, kindRaw:
		// Noise is what makes Flate pages big: these get less of it.
		s.NoiseShare /= 5
	}
	switch kind {
	case kindLowContrast:
		s.Paper = uint8(190 + r.IntN(36))
		s.Ink = s.Paper - uint8(55+r.IntN(41))
	case kindNoise:
		s.Flips = 0.004 + r.Float64()*0.008
		s.Specks = 100 + r.IntN(200)
		s.Streak = r.IntN(2) == 0
	case kindBlur:
		s.BlurRadius = max(1, dpi/150)
		s.BlurPasses = 2 + r.IntN(2)
		// Blurred pages mostly come from cameras and phones, which save
		// JPEG; Flate would store every soft edge at great cost.
		s.Quality = 60 + r.IntN(21)
	case kindJPEG:
		s.Quality = 15 + r.IntN(21)
	case kindYellowed:
		s.PaperRGB = [3]uint8{uint8(228 + r.IntN(16)), uint8(212 + r.IntN(16)), uint8(160 + r.IntN(30))}
		s.InkRGB = [3]uint8{uint8(40 + r.IntN(30)), uint8(30 + r.IntN(25)), uint8(20 + r.IntN(20))}
		s.Stains = r.IntN(4)
		s.Quality = 40 + r.IntN(26)
	}
	return s
}

// stampWords are what office stamps say; a date below them is written
// the way stamps print it, never as YYYY-MM-DD, so it cannot pass for the
// referral date.
var stampWords = []string{"RECEIVED", "SCANNED", "COPY", "FILED", "ENTERED"}

// stamp is a rubber stamp: its words, where its centre falls, its angle
// and ink.
type stamp struct {
	Lines  []string
	CX, CY int
	Angle  float64
	Tone   uint8    // grey pages; on bitonal pages a light stamp vanishes under the threshold
	RGB    [3]uint8 // colour pages
	Misses float64  // share of the stamp's pixels the ink missed
}

func newStamp(r *rand.Rand, date string, left, right, top, end int) stamp {
	d, _ := time.Parse(time.DateOnly, date)
	d = d.AddDate(0, 0, 1+r.IntN(20))
	s := stamp{
		Lines:  []string{pick(r, stampWords), strings.ToUpper(d.Format("2 Jan 2006"))},
		CX:     left + (right-left)/4 + r.IntN((right-left)/2),
		CY:     top + r.IntN(max(1, end-top)),
		Angle:  float64(5+r.IntN(21)) * float64(1-2*r.IntN(2)),
		Tone:   uint8(60 + r.IntN(130)),
		RGB:    pick(r, [][3]uint8{{190, 35, 45}, {45, 70, 170}, {120, 50, 140}}),
		Misses: 0.05 + r.Float64()*0.25,
	}
	return s
}

// drawStamp draws s into plane (255 is no ink, 0 full ink).
func drawStamp(r *rand.Rand, plane *image.Gray, face font.Face, s stamp, dpi int) {
	m := face.Metrics()
	lineH := m.Height.Ceil()
	w := 0
	for _, l := range s.Lines {
		w = max(w, font.MeasureString(face, l).Ceil())
	}
	pad := dpi / 12
	bw, bh := w+2*pad, len(s.Lines)*lineH+2*pad
	side := int(math.Ceil(math.Hypot(float64(bw), float64(bh)))) + 4
	canvas := image.NewGray(image.Rect(0, 0, side, side))
	fill(canvas, 255)
	x0, y0 := (side-bw)/2, (side-bh)/2
	// A heavy outer frame and a thin inner one, as rubber stamps have.
	thick := max(2, dpi/60)
	frame := func(inset, t int) {
		for y := y0 + inset; y < y0+bh-inset; y++ {
			for x := x0 + inset; x < x0+bw-inset; x++ {
				if x < x0+inset+t || x >= x0+bw-inset-t || y < y0+inset+t || y >= y0+bh-inset-t {
					canvas.Pix[y*canvas.Stride+x] = 0
				}
			}
		}
	}
	frame(0, thick)
	frame(thick+max(2, dpi/100), max(1, thick/2))
	for i, l := range s.Lines {
		d := &font.Drawer{Dst: canvas, Src: image.Black, Face: face}
		d.Dot = fixed.P(x0+(bw-font.MeasureString(face, l).Ceil())/2, y0+pad+i*lineH+m.Ascent.Ceil())
		d.DrawString(l)
	}
	turned := image.NewGray(canvas.Bounds())
	fill(turned, 255)
	rotate(turned, canvas, s.Angle)
	ox, oy := s.CX-side/2, s.CY-side/2
	pb := plane.Bounds()
	for y := range side {
		for x := range side {
			v := turned.Pix[y*turned.Stride+x]
			if v == 255 {
				continue
			}
			// Uneven ink: the stamp misses some of its own pixels.
			if r.Float64() < s.Misses {
				continue
			}
			px, py := ox+x, oy+y
			if px < pb.Min.X || py < pb.Min.Y || px >= pb.Max.X || py >= pb.Max.Y {
				continue
			}
			i := py*plane.Stride + px
			plane.Pix[i] = min(plane.Pix[i], v)
		}
	}
}

// drawSignature scribbles a signature on a rule in the box (x, y, w, h):
// a Catmull-Rom curve through points that wander right with loops back,
// and a flourish under it, drawn with a round pen.
func drawSignature(r *rand.Rand, img *image.Gray, x, y, w, h, dpi int) {
	pen := max(1, dpi/110)
	rule := y + h
	for yy := rule; yy < rule+max(1, dpi/150); yy++ {
		for xx := x; xx < x+w; xx++ {
			img.Pix[yy*img.Stride+xx] = 0
		}
	}
	n := 10 + r.IntN(8)
	unit := float64(w) * 0.75 / float64(n)
	pts := make([][2]float64, 0, n+3)
	px := float64(x) + unit
	for range n {
		step := unit * (0.4 + 1.2*r.Float64())
		if r.IntN(4) == 0 {
			step = -unit * (0.3 + 0.5*r.Float64()) // a loop back
		}
		px = max(float64(x), px+step)
		pts = append(pts, [2]float64{px, float64(y) + float64(h)*(0.1+0.8*r.Float64())})
	}
	// The flourish: down past the last letter and back under the name.
	pts = append(pts,
		[2]float64{px + unit, float64(y) + float64(h)*0.9},
		[2]float64{px - float64(w)*0.3*r.Float64(), float64(y) + float64(h)*(0.85+0.1*r.Float64())},
		[2]float64{float64(x) + unit*(1+2*r.Float64()), float64(y) + float64(h)*0.8},
	)
	curve(img, pts, pen)
}

// curve draws a Catmull-Rom spline through pts with a round pen.
func curve(img *image.Gray, pts [][2]float64, pen int) {
	n := len(pts)
	at := func(i int) [2]float64 { return pts[max(0, min(n-1, i))] }
	for i := 0; i < n-1; i++ {
		p0, p1, p2, p3 := at(i-1), at(i), at(i+1), at(i+2)
		steps := int(math.Hypot(p2[0]-p1[0], p2[1]-p1[1]))/max(1, pen) + 2
		for step := range steps {
			t := float64(step) / float64(steps)
			t2, t3 := t*t, t*t*t
			var q [2]float64
			for k := range 2 {
				q[k] = 0.5 * (2*p1[k] + (-p0[k]+p2[k])*t + (2*p0[k]-5*p1[k]+4*p2[k]-p3[k])*t2 + (-p0[k]+3*p1[k]-3*p2[k]+p3[k])*t3)
			}
			disc(img, int(math.Round(q[0])), int(math.Round(q[1])), pen, 0)
		}
	}
}

// disc sets the pixels within radius of (cx, cy) to v.
func disc(img *image.Gray, cx, cy, radius int, v uint8) {
	b := img.Bounds()
	for y := max(b.Min.Y, cy-radius); y <= min(b.Max.Y-1, cy+radius); y++ {
		for x := max(b.Min.X, cx-radius); x <= min(b.Max.X-1, cx+radius); x++ {
			if (x-cx)*(x-cx)+(y-cy)*(y-cy) <= radius*radius {
				img.Pix[y*img.Stride+x] = v
			}
		}
	}
}

// scanPage turns a clean page (ink: 0 black, 255 white) and a stamp plane
// into the stored image of the page: skew, tone or colour, blur, noise,
// threshold, and the quarter turn. The result is *image.Gray or, for
// yellowed pages, *image.RGBA.
func scanPage(r *rand.Rand, ink, stampPlane *image.Gray, st stamp, hasStamp bool, s scanStyle, t turn) image.Image {
	if s.Skew != 0 {
		ink, stampPlane = skewPlanes(ink, stampPlane, hasStamp, s.Skew)
	}
	if s.Kind == kindYellowed {
		img := yellow(r, ink, stampPlane, st, hasStamp, s)
		return turnRGBA(img, t.Image)
	}
	paper, inkLevel := s.Paper, s.Ink
	if s.bitonal() {
		paper, inkLevel = 255, 0
	}
	var lut [256]uint8
	for v := range lut {
		lut[v] = uint8(int(inkLevel) + (int(paper)-int(inkLevel))*v/255)
	}
	out := ink
	for i, v := range out.Pix {
		out.Pix[i] = lut[v]
	}
	if hasStamp {
		for i, sv := range stampPlane.Pix {
			if sv == 255 {
				continue
			}
			cov := 255 - int(sv)
			v := int(out.Pix[i])
			if int(st.Tone) < v {
				out.Pix[i] = uint8(v - (v-int(st.Tone))*cov/255)
			}
		}
	}
	if s.BlurRadius > 0 {
		for range s.BlurPasses {
			boxBlur(out, s.BlurRadius)
		}
	}
	addNoise(r, out, s, paper, inkLevel)
	if s.bitonal() {
		threshold(out, s.Threshold)
	}
	return turnGray(out, t.Image)
}

// addNoise adds the sparse noise and specks every scan has, and for the
// noise kind a photocopier's dense speckle and, sometimes, a drum scratch.
func addNoise(r *rand.Rand, out *image.Gray, s scanStyle, paper, ink uint8) {
	sparseNoise(r, out, s.NoiseShare)
	b := out.Bounds()
	w, h := b.Dx(), b.Dy()
	radius := max(1, s.DPI/150)
	for range s.Specks {
		cx, cy := r.IntN(w), r.IntN(h)
		disc(out, cx, cy, radius+r.IntN(radius+1), ink+uint8(r.IntN(40)))
	}
	if s.Flips > 0 {
		for range int(s.Flips * float64(w*h)) {
			i := r.IntN(w) + r.IntN(h)*out.Stride
			if r.IntN(3) == 0 {
				out.Pix[i] = paper // a hole in the ink
			} else {
				out.Pix[i] = uint8(r.IntN(90))
			}
		}
	}
	if s.Streak {
		x := r.IntN(w)
		width := 1 + r.IntN(max(1, s.DPI/100))
		for y := range h {
			if r.IntN(5) == 0 {
				continue // the scratch is broken
			}
			for xx := x; xx < min(w, x+width); xx++ {
				out.Pix[y*out.Stride+xx] = uint8(r.IntN(60))
			}
		}
	}
}

// yellow composes a colour page: paper darkening towards its edges, with
// a few brown stains, ink, and a coloured stamp.
func yellow(r *rand.Rand, ink, stampPlane *image.Gray, st stamp, hasStamp bool, s scanStyle) *image.RGBA {
	b := ink.Bounds()
	w, h := b.Dx(), b.Dy()
	type stain struct{ x, y, rad, depth int }
	stains := make([]stain, s.Stains)
	for i := range stains {
		stains[i] = stain{r.IntN(w), r.IntN(h), s.DPI/5 + r.IntN(s.DPI*3/5), 8 + r.IntN(18)}
	}
	band := s.DPI / 3
	img := image.NewRGBA(b)
	for y := range h {
		for x := range w {
			// Darker towards the edges, where light and handling aged it.
			dark := 0
			if e := min(x, y, w-1-x, h-1-y); e < band {
				dark = (band - e) * 25 / band
			}
			for _, sn := range stains {
				dx, dy := x-sn.x, y-sn.y
				if d2 := dx*dx + dy*dy; d2 < sn.rad*sn.rad {
					dark += sn.depth * (sn.rad*sn.rad - d2) / (sn.rad * sn.rad)
				}
			}
			cov := 255 - int(ink.Pix[y*ink.Stride+x])
			var scov int
			if hasStamp {
				scov = 255 - int(stampPlane.Pix[y*stampPlane.Stride+x])
			}
			o := img.PixOffset(x, y)
			for c := range 3 {
				p := int(s.PaperRGB[c]) - dark
				if c == 2 {
					p -= dark / 2 // stains are brown: blue drops most
				}
				v := (p*(255-cov) + int(s.InkRGB[c])*cov) / 255
				v = (v*(255-scov) + int(st.RGB[c])*scov) / 255
				img.Pix[o+c] = uint8(max(0, min(255, v)))
			}
			img.Pix[o+3] = 255
		}
	}
	for range int(s.NoiseShare * float64(w*h)) {
		o := img.PixOffset(r.IntN(w), r.IntN(h))
		d := r.IntN(61) - 30 + r.IntN(61) - 30
		for c := range 3 {
			img.Pix[o+c] = uint8(max(0, min(255, int(img.Pix[o+c])+d)))
		}
	}
	radius := max(1, s.DPI/150)
	for range s.Specks {
		cx, cy := r.IntN(w), r.IntN(h)
		rr := radius + r.IntN(radius+1)
		for y := max(0, cy-rr); y < min(h, cy+rr); y++ {
			for x := max(0, cx-rr); x < min(w, cx+rr); x++ {
				if (x-cx)*(x-cx)+(y-cy)*(y-cy) <= rr*rr {
					o := img.PixOffset(x, y)
					copy(img.Pix[o:o+3], s.InkRGB[:])
				}
			}
		}
	}
	return img
}

// boxBlur blurs img in place with a box of the given radius, rows then
// columns; a few passes approach a Gaussian.
func boxBlur(img *image.Gray, radius int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	n := 2*radius + 1
	line := make([]int, max(w, h))
	pass := func(count, length int, at func(i, j int) *uint8) {
		for i := range count {
			for j := range length {
				line[j] = int(*at(i, j))
			}
			sum := 0
			for j := -radius; j <= radius; j++ {
				sum += line[max(0, min(length-1, j))]
			}
			for j := range length {
				*at(i, j) = uint8((sum + n/2) / n)
				sum += line[min(length-1, j+radius+1)] - line[max(0, j-radius)]
			}
		}
	}
	pass(h, w, func(y, x int) *uint8 { return &img.Pix[y*img.Stride+x] })
	pass(w, h, func(x, y int) *uint8 { return &img.Pix[y*img.Stride+x] })
}

// turnGray turns img clockwise by deg, a multiple of 90.
func turnGray(img *image.Gray, deg int) *image.Gray {
	if deg%360 == 0 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	ow, oh := w, h
	if deg%180 != 0 {
		ow, oh = h, w
	}
	out := image.NewGray(image.Rect(0, 0, ow, oh))
	for y := range h {
		for x := range w {
			ox, oy := turnPoint(x, y, w, h, deg)
			out.Pix[oy*out.Stride+ox] = img.Pix[y*img.Stride+x]
		}
	}
	return out
}

// turnRGBA is turnGray for colour pages.
func turnRGBA(img *image.RGBA, deg int) *image.RGBA {
	if deg%360 == 0 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	ow, oh := w, h
	if deg%180 != 0 {
		ow, oh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	for y := range h {
		for x := range w {
			ox, oy := turnPoint(x, y, w, h, deg)
			copy(out.Pix[out.PixOffset(ox, oy):out.PixOffset(ox, oy)+4], img.Pix[img.PixOffset(x, y):img.PixOffset(x, y)+4])
		}
	}
	return out
}

// turnPoint is where pixel (x, y) of a w×h image lands when the image is
// turned clockwise by deg.
func turnPoint(x, y, w, h, deg int) (int, int) {
	switch ((deg % 360) + 360) % 360 {
	case 90:
		return h - 1 - y, x
	case 180:
		return w - 1 - x, h - 1 - y
	case 270:
		return y, w - 1 - x
	}
	return x, y
}

// encodeScan stores a page image the way its kind says.
func encodeScan(img image.Image, s scanStyle) (pdfImage, scanMeta, error) {
	m := scanMeta{Kind: s.Kind, DPI: s.DPI, Colour: "grey", Encoding: "flate"}
	var pi pdfImage
	var err error
	switch g := img.(type) {
	case *image.RGBA:
		m.Colour = "rgb"
		if s.DPI <= 150 {
			pi, err = rgbFlate(g)
		} else {
			pi, err = dct(g, s.Quality)
			m.Encoding, m.JPEGQuality = "dct", s.Quality
		}
	case *image.Gray:
		switch {
		case s.Kind == kindCCITT:
			pi, m.Colour, m.Encoding = bitonalCCITT(g), "bitonal", "ccitt_g4"
		case s.bitonal():
			pi, err = bitonalFlate(g)
			m.Colour = "bitonal"
		case s.Kind == kindJPEG || s.Kind == kindBlur || isHard(s.Kind) && s.Quality > 0:
			pi, err = dct(g, s.Quality)
			m.Encoding, m.JPEGQuality = "dct", s.Quality
		case s.Kind == kindRaw:
			pi, m.Encoding = grayRaw(g), "raw"
		default:
			pi, err = grayFlate(g)
		}
	default:
		err = fmt.Errorf("unexpected image type %T", img)
	}
	return pi, m, err
}

// docFaces makes and keeps the faces of one document per DPI.
type docFaces struct {
	fonts fontSet
	ds    docStyle
	byDPI map[int]faces
	stamp map[int]font.Face
}

func (d *docFaces) at(dpi int) (faces, font.Face, error) {
	if fc, ok := d.byDPI[dpi]; ok {
		return fc, d.stamp[dpi], nil
	}
	ds := d.ds
	ds.DPI = dpi
	fc, err := newFaces(d.fonts, ds)
	if err != nil {
		return faces{}, nil, err
	}
	sf, err := opentype.NewFace(d.fonts.bold, &opentype.FaceOptions{Size: 15, DPI: float64(dpi), Hinting: font.HintingNone})
	if err != nil {
		fc.Close()
		return faces{}, nil, fmt.Errorf("making the stamp face: %w", err)
	}
	d.byDPI[dpi], d.stamp[dpi] = fc, sf
	return fc, sf, nil
}

func (d *docFaces) Close() {
	for dpi, fc := range d.byDPI {
		fc.Close()
		d.stamp[dpi].Close()
	}
}

// renderScan draws the document s describes with its scan plan.
func renderScan(seed uint64, s spec, dpis []int, fonts fontSet) (rendered, error) {
	p := s.Scan
	r := rng(seed, s.Stream)
	f := newForm(r, s.ParticipantID, s.ReferralDate, s.Consent, s.Pages)
	ds := newDocStyle(r, dpis)
	if p.DPI != 0 {
		ds.DPI = p.DPI
	}
	if p.BodyPt != 0 {
		ds.BodyPt = p.BodyPt
	}
	fcs := &docFaces{fonts: fonts, ds: ds, byDPI: map[int]faces{}, stamp: map[int]font.Face{}}
	defer fcs.Close()
	t := truthDoc{SourceID: s.SourceID, ParticipantID: s.ParticipantID, ReferralDate: s.ReferralDate, Paper: ds.Paper.Name, DPI: ds.DPI, BodyFont: "goregular", BodyPt: ds.BodyPt}
	if ds.Mono {
		t.BodyFont = "gomono"
	}
	// The page list: content pages in order, with the blank page (if any)
	// inserted; a document of blank pages has no content at all.
	content := make([]int, 0, len(p.Kinds)) // index into f.Pages, or -1 for blank
	next := 0
	for i := range p.Kinds {
		if p.AllBlank || i == p.Blank {
			content = append(content, -1)
			continue
		}
		content = append(content, next)
		next++
	}
	if !p.AllBlank && next != len(f.Pages) {
		return rendered{}, fmt.Errorf("scan plan has %d content pages, the form %d", next, len(f.Pages))
	}
	lastContent := next - 1

	var out rendered
	for i, ci := range content {
		dpi := ds.DPI
		if p.DPI == 0 && r.IntN(10) == 0 {
			dpi = pick(r, dpis) // a page rescanned on another machine
		}
		fc, stampFace, err := fcs.at(dpi)
		if err != nil {
			return rendered{}, err
		}
		pds := ds
		pds.DPI = dpi
		var tu turn
		if i < len(p.Turns) && !p.Upright {
			tu = p.Turns[i]
		}
		var hard *hardPage
		var st scanStyle
		if p.Hard != nil {
			hard = &p.Hard[i]
			st = hard.style(dpi)
		} else {
			st = newScanStyle(r, p.Kinds[i], dpi, p.Upright)
		}

		var ink *image.Gray
		var pl pageLayout
		if ci >= 0 {
			ink, pl, err = layoutPage(f.Pages[ci], pds, fc)
			if err != nil {
				return rendered{}, fmt.Errorf("laying out page %d: %w", i+1, err)
			}
		} else {
			w, h := int(math.Round(ds.Paper.W*float64(dpi))), int(math.Round(ds.Paper.H*float64(dpi)))
			ink = image.NewGray(image.Rect(0, 0, w, h))
			fill(ink, 255)
		}
		tp := truthPage{Text: pl.Text, SkewDegrees: st.Skew, Bitonal: st.bitonal()}
		meta := scanMeta{Rotation: tu.Image, RotateEntry: tu.Entry, ShownRotation: tu.Shown(), Blank: ci < 0, TextLayer: p.TextLayer}
		if ci >= 0 {
			for _, b := range f.Pages[ci] {
				meta.Table = meta.Table || b.Kind == blockTable
			}
		}

		left, right := int(margin*float64(dpi)), ink.Bounds().Dx()-int(margin*float64(dpi))
		// A signature under the last page's text, when there is room.
		if ci >= 0 && ci == lastContent && r.IntN(2) == 0 && !p.Upright {
			h := dpi / 2
			if top := pl.End + dpi/4; top+h+dpi/8 < pl.Foot {
				drawSignature(r, ink, left, top, min(right-left, dpi*5/2), h, dpi)
				meta.Signature = true
			}
		}
		var sp stamp
		var plane *image.Gray
		if ci >= 0 && !p.Upright && r.IntN(5) == 0 {
			sp = newStamp(r, s.ReferralDate, left, right, int(margin*float64(dpi))+dpi, max(int(margin*float64(dpi))+dpi+1, pl.End))
			plane = image.NewGray(ink.Bounds())
			fill(plane, 255)
			drawStamp(r, plane, stampFace, sp, dpi)
			meta.Stamp = strings.Join(sp.Lines, " ")
		}

		page := pageSpec{Rotate: tu.Entry}
		if p.TextLayer != "visible" {
			var img image.Image
			if hard != nil {
				img = hardScan(r, ink, plane, sp, plane != nil, *hard, dpi)
				meta.Degradation = hard
			} else {
				img = scanPage(r, ink, plane, sp, plane != nil, st, tu)
			}
			pi, em, err := encodeScan(img, st)
			if err != nil {
				return rendered{}, fmt.Errorf("storing page %d: %w", i+1, err)
			}
			meta.Kind, meta.DPI, meta.Colour, meta.Encoding, meta.JPEGQuality = em.Kind, em.DPI, em.Colour, em.Encoding, em.JPEGQuality
			page.Image = &pi
			page.W, page.H = pt(pi.W, dpi), pt(pi.H, dpi)
			if p.KeepImages {
				out.Images = append(out.Images, img)
			}
		} else {
			b := ink.Bounds()
			page.W, page.H = pt(b.Dx(), dpi), pt(b.Dy(), dpi)
			meta.Kind, meta.DPI, meta.Colour, meta.Encoding = "text", dpi, "none", "none"
			tp.SkewDegrees, tp.Bitonal = 0, false
		}
		if p.TextLayer != "" {
			// Runs in points from the lower left corner; the page is
			// upright, so image rows map straight onto it.
			hpx := ink.Bounds().Dy()
			for _, run := range pl.Runs {
				page.Runs = append(page.Runs, pdfRun{
					X:    float64(run.X) * 72 / float64(dpi),
					Y:    float64(hpx-run.Baseline) * 72 / float64(dpi),
					Size: run.Pt,
					Text: run.Text,
				})
			}
			page.Invisible = p.TextLayer == "invisible"
		}
		tp.Scan = &meta
		t.Pages = append(t.Pages, tp)
		out.Pages = append(out.Pages, page)
	}
	out.Truth = t
	return out, nil
}
