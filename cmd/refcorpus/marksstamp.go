package main

import (
	"image"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
)

// The rubber stamps of --marks: four layouts (see markFamilies), in red,
// blue, violet or black, turned up to 25 degrees either way.

// stampInks are the stamp pads' colours.
var stampInks = [][3]uint8{{190, 35, 45}, {45, 70, 170}, {120, 50, 140}, {40, 40, 45}}

// stampLines are what a stamp of family fam says, the referral's date
// moved on by a few days and printed the way stamps print it.
func stampLines(r *rand.Rand, fam, date, clinic string) []string {
	d, _ := time.Parse(time.DateOnly, date)
	d = d.AddDate(0, 0, 1+r.IntN(20))
	day := strings.ToUpper(d.Format(pick(r, []string{"2 Jan 2006", "02 JAN 2006", "2 JAN 06"})))
	word := pick(r, stampWords)
	switch fam {
	case "bare_caps":
		lines := []string{word, day}
		if r.IntN(2) == 0 {
			lines = append([]string{strings.ToUpper(strings.Fields(clinic)[0])}, lines...)
		}
		return lines
	case "ruled_box":
		return []string{strings.ToUpper(clinic), word, day, "REF ......"}
	}
	return []string{word, day}
}

// stampCanvas draws the lines of a stamp of family fam, untilted, on a
// square canvas wide enough to turn it.
func stampCanvas(fam string, face font.Face, lines []string, dpi int) *image.Gray {
	m := face.Metrics()
	lineH := m.Height.Ceil()
	w := 0
	for _, l := range lines {
		w = max(w, font.MeasureString(face, l).Ceil())
	}
	pad := dpi / 12
	bw, bh := w+2*pad, len(lines)*lineH+2*pad
	if fam == "round" {
		bw = max(bw, bh) + pad
		bh = bw
	}
	side := int(math.Ceil(math.Hypot(float64(bw), float64(bh)))) + 4
	c := image.NewGray(image.Rect(0, 0, side, side))
	fill(c, 255)
	x0, y0 := (side-bw)/2, (side-bh)/2
	thick := max(2, dpi/60)
	rect := func(inset, t int) {
		for y := y0 + inset; y < y0+bh-inset; y++ {
			for x := x0 + inset; x < x0+bw-inset; x++ {
				if x < x0+inset+t || x >= x0+bw-inset-t || y < y0+inset+t || y >= y0+bh-inset-t {
					c.Pix[y*c.Stride+x] = 0
				}
			}
		}
	}
	bar := func(y int) {
		for yy := y; yy < y+max(1, thick/2); yy++ {
			for x := x0 + pad/2; x < x0+bw-pad/2; x++ {
				c.Pix[yy*c.Stride+x] = 0
			}
		}
	}
	top := y0 + (bh-len(lines)*lineH)/2
	switch fam {
	case "framed":
		rect(0, thick)
		rect(thick+max(2, dpi/100), max(1, thick/2))
	case "ruled_box":
		rect(0, thick)
		bar(top + 2*lineH)
		bar(top + 3*lineH)
	case "round":
		cx, cy, rad := float64(x0+bw/2), float64(y0+bh/2), float64(bw)/2
		for y := range side {
			for x := range side {
				d := math.Hypot(float64(x)-cx, float64(y)-cy)
				if (d <= rad && d > rad-float64(thick)) || (d <= rad-float64(2*thick) && d > rad-float64(2*thick)-float64(max(1, thick/2))) {
					c.Pix[y*c.Stride+x] = 0
				}
			}
		}
		bar(top - lineH/4)
		bar(top + len(lines)*lineH + lineH/8)
	}
	for i, l := range lines {
		d := &font.Drawer{Dst: c, Src: image.Black, Face: face}
		d.Dot = fixed.P(x0+(bw-font.MeasureString(face, l).Ceil())/2, top+i*lineH+m.Ascent.Ceil())
		d.DrawString(l)
	}
	return c
}

// putStamp turns canvas by angle degrees and inks it onto plane centred
// at (cx, cy), missing a share of its pixels as a worn pad does. It
// returns the box of the ink.
func putStamp(r *rand.Rand, plane, canvas *image.Gray, angle float64, cx, cy int, misses float64) image.Rectangle {
	turned := rotated(canvas, angle, 255)
	side := canvas.Bounds().Dx()
	ox, oy := cx-side/2, cy-side/2
	pb := plane.Bounds()
	box := image.Rectangle{}
	for y := range side {
		for x := range side {
			v := turned.Pix[y*turned.Stride+x]
			if v == 255 || r.Float64() < misses {
				continue
			}
			px, py := ox+x, oy+y
			if !(image.Point{px, py}.In(pb)) {
				continue
			}
			i := py*plane.Stride + px
			plane.Pix[i] = min(plane.Pix[i], v)
			box = box.Union(image.Rect(px, py, px+1, py+1))
		}
	}
	return box
}
