package main

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"strings"
)

// Signatures and margin marks of --marks, each family by a model of its
// own (see markFamilies).

// sigPen is the drawing of one signature: where it may go and what it
// signs.
type sigPen struct {
	r      *rand.Rand
	plane  *image.Gray
	dpi    int
	x      int // the left end
	bottom int // where the signature's lowest strokes end, about
	maxW   int // the most room to the right
	name   string
}

// drawMarkSignature draws a signature of family fam and returns its box.
func drawMarkSignature(p sigPen, fam string) (image.Rectangle, error) {
	in := func(lo, hi float64) int { return int((lo + (hi-lo)*p.r.Float64()) * float64(p.dpi)) }
	switch fam {
	case "scribble":
		w, h := min(in(0.8, 3.5), p.maxW), in(0.35, 0.9)
		scribble(p.r, p.plane, p.x, p.bottom-h, w, h, p.dpi)
		return image.Rect(p.x, p.bottom-h, p.x+w, p.bottom), nil
	case "script_name":
		h := hands[[]int{1, 2, 4}[p.r.IntN(3)]] // dancing_script, kristi, femkeklaver
		return p.fontName(h, 1.4+0.8*p.r.Float64(), surnameOf(p.name, p.r), p.r.IntN(3) == 0)
	case "garland":
		return p.garland(min(in(1.0, 4.0), p.maxW), in(0.4, 1.0)), nil
	case "initials":
		h := markFonts[p.r.IntN(len(markFonts))]
		return p.fontName(h, 1.2+0.8*p.r.Float64(), initialsOf(p.name, p.r), p.r.IntN(2) == 0)
	case "name_flourish":
		h := markFonts[p.r.IntN(len(markFonts))]
		box, err := p.fontName(h, 1.0+0.4*p.r.Float64(), surnameOf(p.name, p.r), false)
		if err != nil {
			return box, err
		}
		return box.Union(p.flourish(box, min(in(2.5, 4.0), p.maxW))), nil
	}
	return image.Rectangle{}, fmt.Errorf("no signature family %q", fam)
}

// surnameOf is how a signer writes their name: the surname, or an
// initial and the surname.
func surnameOf(name string, r *rand.Rand) string {
	f := strings.Fields(strings.TrimPrefix(name, "Dr "))
	if len(f) == 0 {
		return "Smith"
	}
	if r.IntN(2) == 0 || len(f) == 1 {
		return f[len(f)-1]
	}
	return strings.Join(f, " ")
}

// initialsOf is a signer's initials, with or without dots.
func initialsOf(name string, r *rand.Rand) string {
	var out []string
	for _, w := range strings.Fields(strings.TrimPrefix(name, "Dr ")) {
		out = append(out, w[:1])
	}
	if r.IntN(3) == 0 && len(out) > 1 {
		out = out[len(out)-1:]
	}
	if r.IntN(2) == 0 {
		return strings.Join(out, ".") + "."
	}
	return strings.Join(out, "")
}

// fontName writes text in hand h, scale times its note size, its bottom
// at p.bottom, underlined when asked.
func (p sigPen) fontName(h hand, scale float64, text string, underline bool) (image.Rectangle, error) {
	sc, err := newScribe(p.r, h, p.dpi)
	if err != nil {
		return image.Rectangle{}, err
	}
	defer sc.Close()
	sc.pt = h.Pt * scale
	if _, err := sc.fit([]string{text}, p.maxW, p.dpi); err != nil {
		return image.Rectangle{}, err
	}
	top := p.bottom - int(sc.pt*float64(p.dpi)/72*1.1)
	box, err := sc.write(p.plane, p.x, top, []string{text})
	if err != nil || !underline {
		return box, err
	}
	y := float64(box.Max.Y) + float64(p.dpi)*0.04
	pts := [][2]float64{{float64(box.Min.X), y}, {float64(box.Min.X+box.Max.X) / 2, y + float64(p.dpi)*0.03}, {float64(box.Max.X + p.dpi/8), y - float64(p.dpi)*0.05}}
	curve(p.plane, pts, max(1, p.dpi/120))
	return box.Union(image.Rect(box.Min.X, box.Max.Y, box.Max.X+p.dpi/8, int(y)+p.dpi/20)), nil
}

// garland draws one to four strokes of loops on a wandering baseline,
// w by h in all with gaps between them, a tall loop in the first, and a
// dot or an underline now and then.
func (p sigPen) garland(w, h int) image.Rectangle {
	r, dpi := p.r, float64(p.dpi)
	n := 1 + r.IntN(4)
	top := p.bottom - h
	pen := max(1, p.dpi/110+r.IntN(2))
	gap := int(dpi * (0.08 + 0.2*r.Float64()))
	each := (w - gap*(n-1)) / n
	x := float64(p.x)
	for s := range n {
		sw := float64(each) * (0.7 + 0.6*r.Float64())
		period := dpi * (0.08 + 0.1*r.Float64())
		loop := period * (0.1 + 0.25*r.Float64()) // above period/2π the pen loops back
		mid := float64(top) + float64(h)*(0.55+0.15*r.Float64())
		amp := float64(h) * (0.12 + 0.15*r.Float64())
		var pts [][2]float64
		for t := 0.0; t <= sw; t += period / 6 {
			ph := 2 * math.Pi * t / period
			a := amp * (0.6 + 0.4*math.Sin(t/sw*math.Pi))
			y := mid - a*math.Cos(ph) + float64(h)*0.08*math.Sin(t/dpi*2)
			if s == 0 && t < period {
				y -= float64(h) * 0.4 * math.Sin(ph/2) // a capital's tall loop
			}
			pts = append(pts, [2]float64{x + t + loop*math.Sin(ph), y})
		}
		curve(p.plane, pts, pen)
		x += sw + float64(gap)
	}
	right := min(int(x)-gap, p.x+w+each/2)
	switch r.IntN(3) {
	case 0:
		disc(p.plane, right+p.dpi/12, p.bottom-h/3, pen+1, 0)
	case 1:
		y := float64(p.bottom) - float64(h)*0.05
		curve(p.plane, [][2]float64{{float64(p.x), y}, {float64(p.x+right) / 2, y + dpi*0.04}, {float64(right), y - dpi*0.03}}, pen)
	}
	return image.Rect(p.x-p.dpi/10, top-h/2, right+p.dpi/6, p.bottom+p.dpi/10)
}

// flourish draws a stroke from the right end of box down and back under
// it, reaching w from its left end.
func (p sigPen) flourish(box image.Rectangle, w int) image.Rectangle {
	dpi := float64(p.dpi)
	x0, y0 := float64(box.Max.X), float64(box.Max.Y)-float64(box.Dy())*0.3
	right := float64(box.Min.X + max(w, box.Dx()+p.dpi/4))
	pts := [][2]float64{
		{x0, y0},
		{right, y0 - dpi*0.1},
		{right - dpi*0.2, y0 + dpi*0.15},
		{float64(box.Min.X) - dpi*0.1, float64(box.Max.Y) + dpi*0.08},
	}
	curve(p.plane, pts, max(1, p.dpi/110))
	return image.Rect(box.Min.X-p.dpi/8, box.Min.Y, int(right)+p.dpi/8, box.Max.Y+p.dpi/6)
}

// marginPen draws margin marks onto a plane beside the page's print.
type marginPen struct {
	r     *rand.Rand
	plane *image.Gray
	dpi   int
	left  int // the text's left edge
	right int // the text's right edge
}

// drawMargin draws a mark of family fam at the print run's line (x0 to
// x1 on baseline base, em high) and returns its box.
func drawMargin(m marginPen, fam string, x0, x1, base, em int) (image.Rectangle, error) {
	r, dpi := m.r, float64(m.dpi)
	pen := max(1, m.dpi/120+r.IntN(2))
	f := func(v int) float64 { return float64(v) }
	switch fam {
	case "tick":
		s := dpi * (0.15 + 0.2*r.Float64())
		x := dpi * (0.15 + 0.35*r.Float64())
		if r.IntN(2) == 0 {
			x = f(m.right) + dpi*0.1 + dpi*0.3*r.Float64()
		}
		y := f(base) - s*0.2
		curve(m.plane, [][2]float64{{x, y - s*0.4}, {x + s*0.3, y}, {x + s*0.55, y - s*0.6}, {x + s, y - s*1.1}}, pen)
		return image.Rect(int(x)-pen, int(y-s*1.1)-pen, int(x+s)+pen, int(y)+pen), nil
	case "circle":
		cx, cy := f(x0+x1)/2, f(base)-f(em)*0.35
		rx, ry := f(x1-x0)/2+dpi*0.08, f(em)*(0.8+0.3*r.Float64())
		start := r.Float64() * 2 * math.Pi
		var pts [][2]float64
		for a := 0.0; a <= 2*math.Pi*1.08; a += math.Pi / 16 {
			wob := 1 + 0.05*math.Sin(3*a+start)
			pts = append(pts, [2]float64{cx + rx*wob*math.Cos(a+start), cy + ry*wob*math.Sin(a+start)})
		}
		curve(m.plane, pts, pen)
		return image.Rect(int(cx-rx*1.1), int(cy-ry*1.1), int(cx+rx*1.1), int(cy+ry*1.1)), nil
	case "underline":
		y := f(base) + dpi*(0.03+0.04*r.Float64())
		var pts [][2]float64
		for x := f(x0); x <= f(x1); x += dpi * 0.25 {
			pts = append(pts, [2]float64{x, y + dpi*0.015*(r.Float64()*2-1) + (x-f(x0))*0.02})
		}
		pts = append(pts, [2]float64{f(x1), y + f(x1-x0)*0.02})
		curve(m.plane, pts, pen)
		return image.Rect(x0-pen, int(y-dpi*0.03), x1+pen, int(y+f(x1-x0)*0.02+dpi*0.03)), nil
	case "crossout":
		y := f(base) - f(em)*0.3
		if r.IntN(2) == 0 {
			curve(m.plane, [][2]float64{{f(x0), y + dpi*0.01}, {f(x1), y - dpi*0.02}}, pen)
		} else {
			var pts [][2]float64
			for k, x := 0, f(x0); x <= f(x1); k, x = k+1, x+f(em)*0.6 {
				pts = append(pts, [2]float64{x, y + f(em)*0.4*float64(k%2*2-1)})
			}
			curve(m.plane, pts, pen)
		}
		return image.Rect(x0-pen, int(y)-em/2-pen, x1+pen, int(y)+em/2+pen), nil
	case "margin_initials":
		h := markFonts[r.IntN(len(markFonts))]
		sc, err := newScribe(r, h, m.dpi)
		if err != nil {
			return image.Rectangle{}, err
		}
		defer sc.Close()
		sc.pt = 12 + 6*r.Float64()
		letters := string(rune('A'+r.IntN(26))) + string(rune('A'+r.IntN(26)))
		x := int(dpi * (0.1 + 0.15*r.Float64()))
		if _, err := sc.fit([]string{letters}, m.left-x-m.dpi/20, m.dpi); err != nil {
			return image.Rectangle{}, err
		}
		return sc.write(m.plane, x, base-int(sc.pt*dpi/72), []string{letters})
	}
	return image.Rectangle{}, fmt.Errorf("no margin family %q", fam)
}
