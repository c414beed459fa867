package ocr

import (
	"image"
	"strings"
	"testing"
)

// TestCascade: under the cascade (--cascade: first reading at 200 dpi, full
// resolution 300), a page of clean large print is read once, at 200; a
// page of small print, or of faint print, asks for 300 and is read again;
// without it (the default) a page is read once at 300; a page with a text layer matching it is
// read from its layer at 300, as without the cascade. Pages are a third
// of a Letter page, so that each reading is cheap.
func TestCascade(t *testing.T) {
	const dpi = 300
	body := coverBody[:3]
	page := func(pt float64, grey uint8) *image.Gray {
		return drawPage(t, []block{{lines: body, pt: pt, grey: grey, x: 0.5, y: 0.4, leadPt: pt * 1.5}}, 8.5, 3, dpi)
	}
	tests := []struct {
		name      string
		pdf       []byte
		noCascade bool
		wantDPI   int
		wantFirst int
		wantTwice bool
		wantFrom  string
	}{
		{name: "clean large print is read once, at the first resolution", pdf: imagePDF(t, page(12, 0), dpi),
			wantDPI: 200, wantFirst: 200, wantFrom: TextFromOCR},
		{name: "small print is read again", pdf: imagePDF(t, page(6, 0), dpi),
			wantFirst: 200, wantTwice: true, wantFrom: TextFromOCR},
		{name: "faint small print is read again", pdf: imagePDF(t, page(7, 190), dpi),
			wantFirst: 200, wantTwice: true, wantFrom: TextFromOCR},
		{name: "no cascade reads once at the full resolution", pdf: imagePDF(t, page(12, 0), dpi), noCascade: true,
			wantDPI: 300, wantFrom: TextFromOCR},
		{name: "a text layer is read at the full resolution, untouched", pdf: layeredPDF(t, textPage(t, letterLines()[:6], 8.5, 3, dpi), dpi, letterLines()[:6]),
			wantDPI: 300, wantFrom: TextFromLayer},
	}
	workers := map[bool]*Worker{} // by noCascade: the cases with the same settings share one
	parent := t
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if workers[tt.noCascade] == nil {
				cfg := testConfig(parent, dpi)
				cfg.Policy.FirstDPI, cfg.Policy.Cascade = 200, !tt.noCascade
				workers[tt.noCascade] = startWorker(parent, cfg)
			}
			p := readPages(t, workers[tt.noCascade], tt.pdf)[0]
			t.Logf("dpi %d, first %d, second pass %t (%s), signals %+v, uncovered %.3f, %d words",
				p.DPI, p.FirstDPI, p.SecondPass, p.CascadeReason, p.Signals, p.UncoveredShare, len(p.Words))
			if tt.wantDPI != 0 && p.DPI != tt.wantDPI {
				t.Errorf("kept the reading at %d dpi, want %d", p.DPI, tt.wantDPI)
			}
			if p.FirstDPI != tt.wantFirst || p.SecondPass != tt.wantTwice {
				t.Errorf("first dpi %d, second pass %t; want %d, %t", p.FirstDPI, p.SecondPass, tt.wantFirst, tt.wantTwice)
			}
			if p.SecondPass && p.CascadeReason == "" {
				t.Errorf("read again without a reason")
			}
			if !p.SecondPass && p.CascadeReason != "" {
				t.Errorf("a reason (%s) without a second reading", p.CascadeReason)
			}
			if p.TextSource != tt.wantFrom {
				t.Errorf("text from %s, want %s", p.TextSource, tt.wantFrom)
			}
			if tt.wantFrom == TextFromOCR && !strings.Contains(p.Text, "antibiotics") {
				t.Errorf("text lacks the body's words:\n%s", p.Text)
			}
			if tt.wantFrom == TextFromLayer && p.Signals != nil {
				t.Errorf("a page read from its layer has signals %+v", p.Signals)
			}
		})
	}
}

// TestBetter: the first reading is kept only with clearly more credible
// characters once its unread print is taken off.
func TestBetter(t *testing.T) {
	words := func(conf float64, texts ...string) []Word {
		var out []Word
		for _, s := range texts {
			out = append(out, Word{Text: s, Conf: conf})
		}
		return out
	}
	tests := []struct {
		name string
		a, b PageResult
		want bool
	}{
		{"clearly more credible characters", PageResult{Words: words(90, "referral", "cough")}, PageResult{Words: words(90, "referral")}, true},
		{"a few more credible characters", PageResult{Words: words(90, "referrals")}, PageResult{Words: words(90, "referral")}, false},
		{"doubtful words do not count", PageResult{Words: words(40, "referral", "cough", "months")}, PageResult{Words: words(90, "referral")}, false},
		{"unread print counts against", PageResult{Words: words(90, "referral", "cough"), UncoveredShare: 0.5}, PageResult{Words: words(90, "referral", "co")}, false},
		{"a tie keeps the second", PageResult{Words: words(90, "referral")}, PageResult{Words: words(95, "referral")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := better(&tt.a, &tt.b); got != tt.want {
				t.Errorf("better = %t, want %t", got, tt.want)
			}
		})
	}
}
