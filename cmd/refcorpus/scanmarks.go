package main

import (
	"image"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/image/font"
)

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

// drawStamp draws s into plane (255 is no ink, 0 full ink): a heavy outer
// frame and a thin inner one, as rubber stamps have, round its lines.
func drawStamp(r *rand.Rand, plane *image.Gray, face font.Face, s stamp, dpi int) {
	putStamp(r, plane, stampCanvas("framed", face, s.Lines, dpi), s.Angle, s.CX, s.CY, s.Misses)
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
