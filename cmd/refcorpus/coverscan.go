package main

import (
	"encoding/binary"
	"fmt"
	"image"
	"math/rand/v2"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
)

// coverLook is how a coverage document's pages look: paper, print, the
// stamps' ink, noise and storage.
type coverLook struct {
	Paper, Ink       uint8    // grey pages
	PaperRGB, InkRGB [3]uint8 // coloured pages
	StampTone        uint8
	NoiseShare       float64
	Specks           int
	Quality          int // JPEG quality; 0 stores the pages with Flate
}

func newCoverLook(r *rand.Rand, c coverDoc) coverLook {
	l := coverLook{
		Paper:      uint8(240 + r.IntN(9)),
		Ink:        uint8(10 + r.IntN(36)),
		StampTone:  uint8(50 + r.IntN(70)),
		NoiseShare: (0.002 + r.Float64()*0.006) / 5, // as on grey pages: noise makes Flate pages big
		Specks:     10 + r.IntN(40),
	}
	if c.Colour != nil {
		for k := range 3 {
			l.PaperRGB[k] = uint8(int(c.Colour.RGB[k]) - 3 + r.IntN(7))
		}
		l.InkRGB = [3]uint8{uint8(20 + r.IntN(30)), uint8(20 + r.IntN(30)), uint8(30 + r.IntN(40))}
	}
	// Colour pages above 150 DPI are JPEG, as yellowed pages are; half of
	// the grey ones are too.
	if (c.Colour != nil && c.DPI > 150) || r.IntN(2) == 0 {
		l.Quality = 60 + r.IntN(31)
	}
	return l
}

// coverFaces are the faces a coverage page draws its extra text with.
type coverFaces struct {
	faint, footer, stamp font.Face
	stampPt              float64
}

func (cf coverFaces) Close() {
	for _, f := range []font.Face{cf.faint, cf.footer, cf.stamp} {
		if f != nil {
			f.Close()
		}
	}
}

func newCoverFaces(r *rand.Rand, fonts fontSet, c coverDoc) (coverFaces, error) {
	mk := func(f *opentype.Font, pt float64) (font.Face, error) {
		return opentype.NewFace(f, &opentype.FaceOptions{Size: pt, DPI: float64(c.DPI), Hinting: font.HintingNone})
	}
	var cf coverFaces
	var err error
	notePt, footerPt := float64(0), float64(controlFooterPt)
	if c.Faint != nil {
		notePt, footerPt = c.Faint.Pt, c.Faint.Pt
	}
	if notePt > 0 {
		if cf.faint, err = mk(fonts.regular, notePt); err != nil {
			return cf, fmt.Errorf("making the faint face: %w", err)
		}
	}
	if cf.footer, err = mk(fonts.regular, footerPt); err != nil {
		cf.Close()
		return cf, fmt.Errorf("making the footer face: %w", err)
	}
	cf.stampPt = float64(30 + 2*r.IntN(6))
	if cf.stamp, err = mk(fonts.bold, cf.stampPt); err != nil {
		cf.Close()
		return cf, fmt.Errorf("making the stamp face: %w", err)
	}
	return cf, nil
}

// coverPlanes are a page's layers before it is scanned: the dark print,
// the faint print and the stamps, each 255 where there is nothing.
type coverPlanes struct {
	ink, faint, stamp *image.Gray
}

// encodeCover stores a coverage page: JPEG at the look's quality, or
// Flate.
func encodeCover(img image.Image, quality int) (pdfImage, scanMeta, error) {
	m := scanMeta{Colour: "grey", Encoding: "flate"}
	var pi pdfImage
	var err error
	switch g := img.(type) {
	case *image.RGBA:
		m.Colour = "rgb"
		if quality == 0 {
			pi, err = rgbFlate(g)
		} else {
			pi, err = dct(g, quality)
		}
	case *image.Gray:
		if quality == 0 {
			pi, err = grayFlate(g)
		} else {
			pi, err = dct(g, quality)
		}
	default:
		err = fmt.Errorf("unexpected image type %T", img)
	}
	if quality != 0 {
		m.Encoding, m.JPEGQuality = "dct", quality
	}
	return pi, m, err
}

// scanCoverPage turns a page's planes into its stored image: skew, paper
// and print tones (or colours), the faint print softened and laid over,
// the stamps, and the light noise and specks of any scan. faint and stamp
// planes are nil on pages without them.
func scanCoverPage(r *rand.Rand, p coverPlanes, c coverDoc, look coverLook, skew float64) image.Image {
	turn := func(src *image.Gray) *image.Gray {
		if src == nil || skew == 0 {
			return src
		}
		return rotated(src, skew, 255)
	}
	ink, faint, stampPlane := turn(p.ink), turn(p.faint), turn(p.stamp)
	if faint != nil {
		for range c.Faint.BlurPasses {
			boxBlur(faint, c.Faint.BlurRadius)
		}
	}
	if c.Colour != nil {
		return colourPage(r, ink, faint, c, look)
	}
	var lut [256]uint8
	for v := range lut {
		lut[v] = uint8(int(look.Ink) + (int(look.Paper)-int(look.Ink))*v/255)
	}
	out := ink
	for i, v := range out.Pix {
		out.Pix[i] = lut[v]
	}
	if faint != nil {
		overlay(out, faint, c.Faint.Ink)
	}
	if stampPlane != nil {
		overlay(out, stampPlane, look.StampTone)
	}
	addNoise(r, out, scanStyle{DPI: c.DPI, NoiseShare: look.NoiseShare, Specks: look.Specks}, look.Paper, look.Ink)
	return out
}

// overlay lays the ink of plane (0 full ink, 255 none) over out in the
// grey tone: a pixel only ever gets darker, as with ink on paper.
func overlay(out, plane *image.Gray, tone uint8) {
	for i, sv := range plane.Pix {
		if sv == 255 {
			continue
		}
		cov := 255 - int(sv)
		if v := int(out.Pix[i]); int(tone) < v {
			out.Pix[i] = uint8(v - (v-int(tone))*cov/255)
		}
	}
}

// colourPage composes a page on coloured paper: the dark print in the
// look's ink colour, the faint print in its grey, then light noise and
// specks.
func colourPage(r *rand.Rand, ink, faint *image.Gray, c coverDoc, look coverLook) *image.RGBA {
	b := ink.Bounds()
	w, h := b.Dx(), b.Dy()
	img := image.NewRGBA(b)
	// The print's colour at each coverage, as the four bytes of an RGBA
	// pixel: a table rather than two multiplications and a division per
	// channel and pixel, and one store.
	var tone [256]uint32
	for cov := range tone {
		t := uint32(255) << 24
		for k := range 3 {
			t |= uint32((int(look.PaperRGB[k])*(255-cov)+int(look.InkRGB[k])*cov)/255) << (8 * k)
		}
		tone[cov] = t
	}
	fi := int(c.Faint.inkOr(255))
	for y := range h {
		inkRow := ink.Pix[y*ink.Stride : y*ink.Stride+w]
		var faintRow []uint8
		if faint != nil {
			faintRow = faint.Pix[y*faint.Stride : y*faint.Stride+w]
		}
		out := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x, iv := range inkRow {
			cov := 255 - iv
			o := out[4*x : 4*x+4]
			binary.LittleEndian.PutUint32(o, tone[cov])
			if faintRow == nil || faintRow[x] == 255 {
				continue
			}
			fcov := 255 - int(faintRow[x])
			for k, v := range o[:3] {
				if fi < int(v) {
					o[k] = uint8(int(v) - (int(v)-fi)*fcov/255)
				}
			}
		}
	}
	speckle(img, r, look.NoiseShare, look.Specks, c.DPI, look.InkRGB)
	return img
}

// inkOr is the faint print's grey level, or def without faint print.
func (f *faintPrint) inkOr(def uint8) uint8 {
	if f == nil {
		return def
	}
	return f.Ink
}
