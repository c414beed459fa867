package main

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
)

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
	// Bitonal pages keep white paper and black ink: the table is then
	// the identity.
	if paper != 255 || inkLevel != 0 {
		for i, v := range out.Pix {
			out.Pix[i] = lut[v]
		}
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
	stains := make([]stain, s.Stains)
	for i := range stains {
		stains[i] = stain{r.IntN(w), r.IntN(h), s.DPI/5 + r.IntN(s.DPI*3/5), 8 + r.IntN(18)}
	}
	img := image.NewRGBA(b)
	dark := make([]int, w)
	for y := range h {
		agedRow(dark, y, h, s.DPI/3, stains)
		inkRow := ink.Pix[y*ink.Stride : y*ink.Stride+w]
		var stampRow []uint8
		if hasStamp {
			stampRow = stampPlane.Pix[y*stampPlane.Stride : y*stampPlane.Stride+w]
		}
		out := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x, iv := range inkRow {
			cov := 255 - int(iv)
			var scov int
			if hasStamp {
				scov = 255 - int(stampRow[x])
			}
			o := out[4*x : 4*x+4]
			o[3] = 255
			for c := range 3 {
				p := int(s.PaperRGB[c]) - dark[x]
				if c == 2 {
					p -= dark[x] / 2 // stains are brown: blue drops most
				}
				// Bare paper, most of the page, is p: both mixes below
				// keep it whole.
				v := p
				if cov != 0 || scov != 0 {
					v = (p*(255-cov) + int(s.InkRGB[c])*cov) / 255
					v = (v*(255-scov) + int(st.RGB[c])*scov) / 255
				}
				o[c] = uint8(max(0, min(255, v)))
			}
		}
	}
	speckle(img, r, s.NoiseShare, s.Specks, s.DPI, s.InkRGB)
	return img
}

// stain is a round brown stain on a yellowed page, darkest at its centre.
type stain struct{ x, y, rad, depth int }

// agedRow sets dark[x] to how much darker than fresh paper pixel x of row
// y of a yellowed page is: towards the edges within band, where light and
// handling aged it, and under stains. A row at a time, each stain is only
// visited over the pixels it covers.
func agedRow(dark []int, y, h, band int, stains []stain) {
	w := len(dark)
	for x := range dark {
		dark[x] = 0
		if e := min(x, y, w-1-x, h-1-y); e < band {
			dark[x] = (band - e) * 25 / band
		}
	}
	for _, sn := range stains {
		dy := y - sn.y
		r2 := sn.rad * sn.rad
		if dy*dy >= r2 {
			continue
		}
		// The stain covers this row within rad of its centre, at most.
		for x := max(0, sn.x-sn.rad); x < min(w, sn.x+sn.rad+1); x++ {
			dx := x - sn.x
			if d2 := dx*dx + dy*dy; d2 < r2 {
				dark[x] += sn.depth * (r2 - d2) / r2
			}
		}
	}
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

// speckle adds a colour scan's light noise (a share of the pixels moved
// by up to ±60 levels) and dark specks of ink, a few pixels across at dpi.
func speckle(img *image.RGBA, r *rand.Rand, noiseShare float64, specks, dpi int, ink [3]uint8) {
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	for range int(noiseShare * float64(w*h)) {
		o := img.PixOffset(r.IntN(w), r.IntN(h))
		d := r.IntN(61) - 30 + r.IntN(61) - 30
		for c := range 3 {
			img.Pix[o+c] = uint8(max(0, min(255, int(img.Pix[o+c])+d)))
		}
	}
	radius := max(1, dpi/150)
	for range specks {
		cx, cy := r.IntN(w), r.IntN(h)
		rr := radius + r.IntN(radius+1)
		for y := max(0, cy-rr); y < min(h, cy+rr); y++ {
			for x := max(0, cx-rr); x < min(w, cx+rr); x++ {
				if (x-cx)*(x-cx)+(y-cy)*(y-cy) <= rr*rr {
					o := img.PixOffset(x, y)
					copy(img.Pix[o:o+3], ink[:])
				}
			}
		}
	}
}
