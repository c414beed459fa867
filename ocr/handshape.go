package ocr

import (
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

// baselineWander is the mean distance of the boxes' bottoms from their
// least-squares line, leaving out the lowest quarter (descenders).
func baselineWander(boxes [][4]int) float64 {
	if len(boxes) < 3 {
		return 0
	}
	var n, sx, sy, sxx, sxy float64
	for _, b := range boxes {
		x, y := float64(b[0]+b[2])/2, float64(b[3])
		n++
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope, icpt := 0.0, sy/n
	if den := n*sxx - sx*sx; den != 0 {
		slope = (n*sxy - sx*sy) / den
		icpt = (sy - slope*sx) / n
	}
	res := make([]float64, 0, len(boxes))
	for _, b := range boxes {
		x := float64(b[0]+b[2]) / 2
		res = append(res, float64(b[3])-(slope*x+icpt))
	}
	slices.Sort(res)
	keep := res[:len(res)-len(res)/4]
	sum := 0.0
	for _, r := range keep {
		sum += math.Abs(r)
	}
	return sum / float64(len(keep))
}

// median returns the median of v (0 when empty); v is sorted in place.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
