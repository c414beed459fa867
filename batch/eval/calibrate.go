package eval

import (
	"slices"

	"github.com/refbatch/refbatch/report/outcome"
)

// BandNone is the calibration table's band of the readable documents that
// have none because they were never read; the others are outcome's bands,
// in their order.
const BandNone outcome.Band = "none"

// BandScore is one row of the calibration table.
type BandScore struct {
	Band           outcome.Band `json:"band"`
	Documents      int          `json:"documents"`
	Pages          int          `json:"pages"`
	MeanCER        float64      `json:"mean_cer"`
	MeanConfidence float64      `json:"mean_confidence"`
	SourceIDs      []string     `json:"source_ids"`
}

// calibrate sorts the documents into the bands and averages each band's
// CER and confidence.
func calibrate(docs []DocScore) []BandScore {
	var bands []BandScore
	for _, b := range append(outcome.Bands(), BandNone) {
		bands = append(bands, BandScore{Band: b})
	}
	for _, d := range docs {
		i := slices.IndexFunc(bands, func(b BandScore) bool { return b.Band == d.Band })
		if i < 0 {
			i = len(bands) - 1 // a band this package does not know reads as none
		}
		b := &bands[i]
		b.Documents++
		b.Pages += len(d.Pages)
		b.MeanCER += d.CER.Rate
		b.MeanConfidence += d.Confidence
		b.SourceIDs = append(b.SourceIDs, d.SourceID)
	}
	out := bands[:0]
	for _, b := range bands {
		if b.Band == BandNone && b.Documents == 0 {
			continue
		}
		if b.Documents > 0 {
			b.MeanCER /= float64(b.Documents)
			b.MeanConfidence /= float64(b.Documents)
		} else {
			b.SourceIDs = []string{}
		}
		out = append(out, b)
	}
	return out
}
