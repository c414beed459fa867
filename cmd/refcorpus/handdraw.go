package main

import (
	"errors"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// handTruth is a handwritten note as the truth records it under a page's
// "handwriting"; its words are in the page's "handwriting_text".
type handTruth struct {
	Hand      string   `json:"hand"`
	Package   string   `json:"package"`
	Ink       string   `json:"ink"` // blue or black
	InkRGB    [3]uint8 `json:"ink_rgb"`
	Placement string   `json:"placement"` // free_space, margin_top or margin_bottom
	Pt        float64  `json:"pt"`        // the size the words vary around
	Lines     int      `json:"lines"`
	// Box is where the note's ink is, in the scan's pixels before the
	// page's skew: x0, y0, x1, y1.
	Box [4]int `json:"box"`
}

// sigTruth is a signature as the truth records it under a page's
// "signature". A signature has no text to read; its printed label and
// name, if any, are part of the page's text.
type sigTruth struct {
	Label string `json:"label"` // bare, signed, line, name or signed_line_name
	Hand  string `json:"hand"`
	Ink   string `json:"ink"`
	Box   [4]int `json:"box"` // the scribble, as handTruth.Box
	// Printed is the printed label and name beside it, in the page's
	// text too.
	Printed string `json:"printed,omitempty"`
}

// inkRGB is the colour of a pen.
func inkRGB(r *rand.Rand, ink string) [3]uint8 {
	j := func(v int) uint8 { return uint8(v - 8 + r.IntN(17)) }
	if ink == "blue" {
		return [3]uint8{j(30), j(50), j(150)}
	}
	return [3]uint8{j(35), j(35), j(40)}
}

// scribe writes words by hand: each word with its own size, slant,
// pressure and baseline, the lines drifting up or down.
type scribe struct {
	r     *rand.Rand
	f     *opentype.Font
	dpi   int
	pt    float64
	slant float64
	faces map[int]font.Face // by size in tenths of a point
}

func newScribe(r *rand.Rand, h hand, dpi int) (*scribe, error) {
	f, err := handFont(h)
	if err != nil {
		return nil, err
	}
	return &scribe{r: r, f: f, dpi: dpi, pt: h.Pt, slant: h.Slant, faces: map[int]font.Face{}}, nil
}

func (s *scribe) face(pt float64) (font.Face, error) {
	k := int(math.Round(pt * 10))
	if f, ok := s.faces[k]; ok {
		return f, nil
	}
	f, err := opentype.NewFace(s.f, &opentype.FaceOptions{Size: float64(k) / 10, DPI: float64(s.dpi), Hinting: font.HintingNone})
	if err != nil {
		return nil, fmt.Errorf("making a handwriting face: %w", err)
	}
	s.faces[k] = f
	return f, nil
}

func (s *scribe) Close() {
	for _, f := range s.faces {
		f.Close()
	}
}

// fit scales the scribe's size down so that lines fit w by h pixels, to
// 0.6 of it at least. It reports whether they fit.
func (s *scribe) fit(lines []string, w, h int) (bool, error) {
	floor := s.pt * 0.6
	for ; s.pt >= floor; s.pt *= 0.94 {
		face, err := s.face(s.pt)
		if err != nil {
			return false, err
		}
		wide := 0
		for _, l := range lines {
			wide = max(wide, font.MeasureString(face, l).Ceil()*115/100)
		}
		if wide <= w && len(lines)*s.lineStep() <= h {
			return true, nil
		}
	}
	return false, nil
}

// lineStep is the distance between two written lines: the handwriting
// fonts' own line heights vary too much to use.
func (s *scribe) lineStep() int {
	return int(s.pt * float64(s.dpi) / 72 * 1.2)
}

// write writes lines onto plane (255 paper, 0 full ink), the first line's
// top at (x, top), and returns the box its ink may cover.
func (s *scribe) write(plane *image.Gray, x, top int, lines []string) (image.Rectangle, error) {
	em := int(s.pt * float64(s.dpi) / 72)
	step := s.lineStep()
	box := image.Rectangle{Min: image.Pt(x, top), Max: image.Pt(x, top)}
	for li, l := range lines {
		slope := (s.r.Float64()*2 - 1) * 0.025 // up to about 1.5 degrees
		phase, amp := s.r.Float64()*2*math.Pi, float64(em)*(0.02+0.05*s.r.Float64())
		baseline := top + em*4/5 + li*step + s.r.IntN(em/8+1)
		cx := x + s.r.IntN(em/3+1)
		for _, w := range strings.Fields(l) {
			pt := s.pt * (0.9 + 0.2*s.r.Float64())
			face, err := s.face(pt)
			if err != nil {
				return box, err
			}
			dx := float64(cx - x)
			by := baseline + int(dx*slope+amp*math.Sin(phase+dx/float64(4*em))) + s.r.IntN(em/10+1) - em/20
			slant := (s.slant + (s.r.Float64()*2-1)*5) * math.Pi / 180
			pressure := 0.7 + 0.3*s.r.Float64()
			wb, adv := s.word(plane, face, w, cx, by, math.Tan(slant), pressure)
			box = box.Union(wb)
			cx += adv + int(float64(font.MeasureString(face, " ").Ceil())*(0.9+0.7*s.r.Float64()))
		}
	}
	return box.Intersect(plane.Bounds()), nil
}

// word draws w with its baseline's left end at (x, base), sheared by
// shear (the tangent of its slant) and inked at pressure, with a pen a
// pixel wider at 300 DPI than the font's strokes, and returns its box and
// advance.
func (s *scribe) word(plane *image.Gray, face font.Face, w string, x, base int, shear, pressure float64) (image.Rectangle, int) {
	m := face.Metrics()
	asc, desc := m.Ascent.Ceil(), m.Descent.Ceil()
	wd := font.MeasureString(face, w).Ceil() + asc/2
	pad := int(math.Abs(shear)*float64(asc+desc)) + 2
	tmp := image.NewGray(image.Rect(0, 0, wd, asc+desc))
	fill(tmp, 255)
	d := &font.Drawer{Dst: tmp, Src: image.Black, Face: face, Dot: fixed.P(0, asc)}
	d.DrawString(w)
	if s.dpi >= 250 {
		thicken(tmp)
	}
	pb := plane.Bounds()
	for y := range asc + desc {
		shift := int(math.Round(float64(asc-y) * shear))
		py := base - asc + y
		if py < pb.Min.Y || py >= pb.Max.Y {
			continue
		}
		for xx := range wd {
			v := tmp.Pix[y*tmp.Stride+xx]
			px := x + xx + shift
			if v == 255 || px < pb.Min.X || px >= pb.Max.X {
				continue
			}
			nv := uint8(255 - int(float64(255-int(v))*pressure))
			if i := py*plane.Stride + px; nv < plane.Pix[i] {
				plane.Pix[i] = nv
			}
		}
	}
	return image.Rect(x-pad, base-asc, x+wd+pad, base+desc), font.MeasureString(face, w).Ceil()
}

// thicken widens img's strokes by a pixel to the right and below.
func thicken(img *image.Gray) {
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	for y := h - 1; y >= 0; y-- {
		for x := w - 1; x >= 0; x-- {
			v := img.Pix[y*img.Stride+x]
			if x > 0 {
				v = min(v, img.Pix[y*img.Stride+x-1])
			}
			if y > 0 {
				v = min(v, img.Pix[(y-1)*img.Stride+x])
			}
			img.Pix[y*img.Stride+x] = v
		}
	}
}

// scribble signs in the box (x, y, w, h) of plane: a curve that wanders
// right with loops back, and a flourish, with a round pen.
func scribble(r *rand.Rand, plane *image.Gray, x, y, w, h, dpi int) {
	n := 7 + r.IntN(7)
	unit := float64(w) * 0.85 / float64(n)
	pts := make([][2]float64, 0, n+3)
	px := float64(x) + unit
	for range n {
		step := unit * (0.4 + 1.2*r.Float64())
		if r.IntN(4) == 0 {
			step = -unit * (0.3 + 0.5*r.Float64())
		}
		px = max(float64(x), px+step)
		pts = append(pts, [2]float64{px, float64(y) + float64(h)*(0.1+0.8*r.Float64())})
	}
	pts = append(pts,
		[2]float64{min(float64(x+w), px+unit), float64(y) + float64(h)*0.9},
		[2]float64{px - float64(w)*0.3*r.Float64(), float64(y) + float64(h)*(0.85+0.1*r.Float64())},
		[2]float64{float64(x) + unit*(1+2*r.Float64()), float64(y) + float64(h)*0.8},
	)
	curve(plane, pts, max(1, dpi/120))
}

// sign draws a signature labelled as label says in the band from top to
// bottom: the scribble on plane, the printed label, line and name on ink.
func sign(r *rand.Rand, ink, plane *image.Gray, fc faces, dpi, left, top, bottom int, label, name string) (sigTruth, error) {
	w, h := dpi*(10+r.IntN(7))/10, dpi*(35+r.IntN(16))/100
	if bottom-top < h+dpi/10 {
		return sigTruth{}, errors.New("no room for the signature")
	}
	y := bottom - h - r.IntN(bottom-top-h+1)/2
	base := y + h*3/4 // the printed words' baseline
	asc := fc.value.Metrics().Ascent.Ceil()
	x := left + r.IntN(dpi/2)
	st := sigTruth{Label: label}
	var printed []string
	if strings.Contains(label, "signed") {
		drawLines(ink, fc.label, x, base-asc, []string{"Signed:"})
		x += font.MeasureString(fc.label, "Signed: ").Ceil() + dpi/10
		printed = append(printed, "Signed:")
	}
	if strings.Contains(label, "line") {
		for yy := base + dpi/40; yy < base+dpi/40+max(1, dpi/150); yy++ {
			for xx := x; xx < x+w; xx++ {
				ink.Pix[yy*ink.Stride+xx] = 0
			}
		}
	}
	scribble(r, plane, x, y, w, h, dpi)
	st.Box = [4]int{x, y, x + w, y + h}
	if strings.Contains(label, "name") {
		drawLines(ink, fc.value, x+w+dpi/8, base-asc, []string{name})
		printed = append(printed, name)
	}
	st.Printed = strings.Join(printed, " ")
	return st, nil
}
