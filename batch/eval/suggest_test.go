package eval

import (
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

func TestSuggest(t *testing.T) {
	doc := func(conf, cer float64) DocScore {
		return DocScore{Band: outcome.BandMedium, Confidence: conf, CER: ErrorRate{Rate: cer}}
	}
	tests := []struct {
		name string
		docs []DocScore
		want Bands
		ok   bool
	}{
		{name: "too few documents", docs: []DocScore{doc(90, 0.01)}},
		{name: "a gradient", ok: true, docs: []DocScore{
			doc(96, 0.005), doc(95.4, 0.01), doc(94, 0.02), doc(93.5, 0.02), // high: mean 1.375% down to 93.5
			doc(90, 0.06), doc(85, 0.08), // medium
			doc(70, 0.15), doc(55, 0.4), // low
		}, want: Bands{High: 93, HighMeanCER: 0.01375, Low: 71, Misplaced: 0}},
		{name: "the next document sits on the whole number", ok: true, docs: []DocScore{
			doc(95, 0.01), doc(94.5, 0.01), doc(94, 0.2), doc(60, 0.3),
		}, want: Bands{High: 94.5, HighMeanCER: 0.01, Low: 61, Misplaced: 1}},
		{name: "never read documents carry no confidence", ok: true, docs: []DocScore{
			doc(95, 0.01), doc(94, 0.01), {Band: BandNone, CER: ErrorRate{Rate: 1}},
		}, want: Bands{High: 94, HighMeanCER: 0.01, Low: 0, Misplaced: 0}},
		{name: "no high band fits", ok: true, docs: []DocScore{
			doc(95, 0.05), doc(90, 0.05),
		}, want: Bands{High: 0, Low: 0, Misplaced: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Suggest(tt.docs)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if got.High != tt.want.High || got.Low != tt.want.Low || got.Misplaced != tt.want.Misplaced ||
				!near(got.HighMeanCER, tt.want.HighMeanCER) {
				t.Errorf("Suggest = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestCheckBands(t *testing.T) {
	res := &Result{Text: &Text{Pages: 1}, Calibration: []BandScore{
		{Band: outcome.BandHigh, Documents: 5, MeanCER: 0.01},
		{Band: outcome.BandMedium, Documents: 2, MeanCER: 0.008},
		{Band: outcome.BandLow, Documents: 0},
	}}
	regs := res.Check(Thresholds{BandsOrdered: true, BandDocumentsMin: map[outcome.Band]int{"high": 5, "low": 1}})
	var got []string
	for _, r := range regs {
		got = append(got, r.Figure+": "+r.Message)
	}
	want := []string{
		"bands_ordered: mean CER of the medium confidence band 0.008 is not above the high band's 0.010",
		"band_documents.low: documents in the low confidence band 0 < threshold 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("regressions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := ReadThresholds([]byte(`{"band_documents_min": {"highest": 1}}`)); err == nil {
		t.Errorf("an unknown band in band_documents_min was accepted")
	}
}
