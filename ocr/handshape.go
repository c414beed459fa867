package ocr

import (
	"cmp"
	"math"
	"slices"
)

// The shape of a line of ink: how its glyphs' heights and bottoms vary,
// which tells a hand from print and from a stamp (see handLike).

// evenLarge returns the share of the large glyphs of l (handHeight
// times the print's height or taller) within a tenth of their median
// height; 0 with fewer than four.
func (look *handLook) evenLarge(l handLine) float64 {
	var hs []float64
	for _, b := range l.comps {
		if h := float64(b[3] - b[1]); look.printH > 0 && h >= handHeight*look.printH {
			hs = append(hs, h)
		}
	}
	if len(hs) < 4 {
		return 0
	}
	m, n := median(hs), 0
	for _, h := range hs {
		if math.Abs(h-m) <= 0.1*m {
			n++
		}
	}
	return float64(n) / float64(len(hs))
}

// baselineWanders returns the mean distance of the boxes' bottoms from
// their least-squares line, leaving out the lowest quarter
// (descenders): first as fitted through every bottom, and level with the
// line fitted again without that quarter. Descenders pull a first fit
// below the line the other letters stand on, and a line of print with a
// "J", a "p" and a "y" then strays from it as a hand does; a hand's
// letters each stand on their own, and stray from any line.
func baselineWanders(boxes [][4]int) (first, level float64) {
	if len(boxes) < 3 {
		return 0, 0
	}
	pts := bottoms(boxes)
	slope, icpt := fitLine(pts)
	first = trimmedWander(pts, slope, icpt)
	slices.SortFunc(pts, func(a, b [2]float64) int {
		return cmp.Compare(a[1]-(slope*a[0]+icpt), b[1]-(slope*b[0]+icpt))
	})
	slope, icpt = fitLine(pts[:len(pts)-len(pts)/4])
	return first, trimmedWander(pts, slope, icpt)
}

// bottoms returns the boxes' bottom centres.
func bottoms(boxes [][4]int) [][2]float64 {
	pts := make([][2]float64, len(boxes))
	for i, b := range boxes {
		pts[i] = [2]float64{float64(b[0]+b[2]) / 2, float64(b[3])}
	}
	return pts
}

// trimmedWander is the mean distance of pts from the line, leaving out
// the quarter farthest below it.
func trimmedWander(pts [][2]float64, slope, icpt float64) float64 {
	res := make([]float64, 0, len(pts))
	for _, p := range pts {
		res = append(res, p[1]-(slope*p[0]+icpt))
	}
	slices.Sort(res)
	keep := res[:len(res)-len(res)/4]
	sum := 0.0
	for _, r := range keep {
		sum += math.Abs(r)
	}
	return sum / float64(len(keep))
}

// fitLine returns the least-squares line y = slope*x + icpt through pts.
func fitLine(pts [][2]float64) (slope, icpt float64) {
	var n, sx, sy, sxx, sxy float64
	for _, p := range pts {
		n++
		sx, sy, sxx, sxy = sx+p[0], sy+p[1], sxx+p[0]*p[0], sxy+p[0]*p[1]
	}
	slope, icpt = 0, sy/n
	if den := n*sxx - sx*sx; den != 0 {
		slope = (n*sxy - sx*sy) / den
		icpt = (sy - slope*sx) / n
	}
	return slope, icpt
}

// median returns the median of v (0 when empty); v is sorted in place.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
