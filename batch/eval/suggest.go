package eval

import (
	"math"
	"slices"
)

// The targets Suggest calibrates the confidence bands to: a document in
// the high band should misread under HighBandCER of its characters on
// average, and a document misreading ReviewCER or more is one a person
// must check (the low band, review low_confidence). HighBandCER is a
// margin under the 2% that refbatch promises for the high band, so that
// the promise holds where Tesseract reads slightly differently.
const (
	HighBandCER = 0.015
	ReviewCER   = 0.10
)

// Bands are confidence thresholds: a document whose mean word confidence
// is High or more is in the high band, under Low in the low band.
type Bands struct {
	High float64 `json:"high"`
	Low  float64 `json:"low"`
	// HighMeanCER is the mean CER of the documents at or above High;
	// Misplaced counts the documents the Low threshold puts on the wrong
	// side of ReviewCER.
	HighMeanCER float64 `json:"high_mean_cer"`
	Misplaced   int     `json:"misplaced"`
}

// Suggest derives band thresholds from the read documents' confidence
// and CER, so that the bands are measured, not guessed:
//
//   - High is the lowest confidence (a whole number where one fits) at
//     which the documents at or above it have a mean CER under
//     HighBandCER, taking in at least half the documents (a high band of
//     two lucky documents calibrates nothing); 0 when there is none.
//   - Low is the whole confidence that best separates the documents
//     misreading ReviewCER or more (below it) from the others (at or
//     above it): the fewest documents on the wrong side, and of equals
//     the lowest, since every document below it costs a person's time.
//
// Documents never read (band none) are left out: they carry no
// confidence. ok is false when there are fewer than two read documents.
func Suggest(docs []DocScore) (b Bands, ok bool) {
	type point struct{ conf, cer float64 }
	var pts []point
	for _, d := range docs {
		if d.Band == BandNone || d.Band == "" {
			continue
		}
		pts = append(pts, point{d.Confidence, d.CER.Rate})
	}
	if len(pts) < 2 {
		return b, false
	}
	slices.SortFunc(pts, func(a, b point) int { return -cmpFloat(a.conf, b.conf) })

	// High: walk down from the most confident document. The threshold is
	// the whole number under the last document taken in, unless that
	// would take in the next one too.
	sum := 0.0
	for i, p := range pts {
		sum += p.cer
		mean := sum / float64(i+1)
		last := i+1 == len(pts) || pts[i+1].conf < p.conf
		if last && mean < HighBandCER && 2*(i+1) >= len(pts) {
			b.High, b.HighMeanCER = math.Floor(p.conf), mean
			if i+1 < len(pts) && pts[i+1].conf >= b.High {
				b.High = p.conf
			}
		}
	}

	// Low: try every whole confidence from 0 to 100.
	b.Misplaced = len(pts) + 1
	for t := 0.0; t <= 100; t++ {
		wrong := 0
		for _, p := range pts {
			if (p.conf < t) != (p.cer >= ReviewCER) {
				wrong++
			}
		}
		if wrong < b.Misplaced {
			b.Low, b.Misplaced = t, wrong
		}
	}
	return b, true
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
