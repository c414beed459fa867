package ocr

import (
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// layoutWords returns the boxes of the words of blocks set as drawPage
// sets them (in a monospaced face when mono), without drawing: what a
// reading of the page finds, for the column detection alone.
func layoutWords(t *testing.T, blocks []block, dpi int, mono bool) [][4]int {
	t.Helper()
	ttf := goregular.TTF
	if mono {
		ttf = gomono.TTF
	}
	f, err := opentype.Parse(ttf)
	if err != nil {
		t.Fatal(err)
	}
	var boxes [][4]int
	for _, b := range blocks {
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: b.pt, DPI: float64(dpi), Hinting: font.HintingFull})
		if err != nil {
			t.Fatal(err)
		}
		lead := b.leadPt * float64(dpi) / 72
		space := font.MeasureString(face, " ")
		for i, line := range b.lines {
			dot := fixed.P(int(b.x*float64(dpi)), int(b.y*float64(dpi)+float64(i+1)*lead))
			for j, word := range strings.Split(line, " ") {
				if j > 0 {
					dot.X += space
				}
				if word == "" {
					continue
				}
				bounds, adv := font.BoundString(face, word)
				boxes = append(boxes, [4]int{
					(dot.X + bounds.Min.X).Floor(), (dot.Y + bounds.Min.Y).Floor(),
					(dot.X + bounds.Max.X).Ceil(), (dot.Y + bounds.Max.Y).Ceil()})
				dot.X += adv
			}
		}
		face.Close()
	}
	return boxes
}

var (
	colFull = []string{
		"Thank you for seeing this participant, who reports lower back pain for two months.",
		"Routine blood tests were within normal limits. The participant is otherwise fit and",
		"active. Examination today was unremarkable apart from mild tenderness in the back.",
	}
	colLeft = []string{
		"Background",
		"Smoking status: never smoked. Previous reviews",
		"in this clinic noted similar but milder episodes.",
		"Current medication has not changed in the last",
		"six months. An earlier referral for the same",
		"problem was not completed.",
	}
	colRight = []string{
		"Current plan",
		"A referral for physiotherapy",
		"has been made in parallel. The",
		"participant was advised to keep",
		"the symptom diary going. Simple",
		"analgesia may be used for flare",
		"ups, no more than four times a",
		"day. Please let the practice know.",
	}
	colTable = []string{
		"Medicine      Dose      Frequency     Since",
		"Omeprazole    20 mg     once daily    2021",
		"Sertraline    50 mg     once daily    2019",
		"Atorvastatin  20 mg     at night      2020",
		"Paracetamol   1 g       as needed     2023",
	}
)

// TestColumnLayouts: the columns are found from the words' boxes alone,
// whatever their widths and gutter, below or above full-width print, and
// a table below them is not theirs; a table, a form or a page of
// monospaced prose is no column section.
func TestColumnLayouts(t *testing.T) {
	t.Parallel()
	const dpi = 100
	type want struct {
		bands      int
		top, below float64 // the baselines of the band's first and last rows, in inches (0: unchecked)
		gutter     float64 // inches from the left edge
	}
	tests := []struct {
		name   string
		mono   bool
		blocks []block
		want   want
	}{
		{"unequal below full width, narrow gutter, a table below", false, []block{
			{lines: colFull, pt: 11, x: 0.8, y: 0.5, leadPt: 15},
			{lines: colLeft, pt: 11, x: 0.8, y: 1.4, leadPt: 15},
			{lines: colRight, pt: 11, x: 4.55, y: 1.4, leadPt: 15},
			{lines: colTable, pt: 11, x: 0.8, y: 1.4 + 8*15.0/72, leadPt: 15}, // under the left column only
		}, want{1, 1.4 + 15.0/72, 1.4 + 8*15.0/72, 4.45}},
		{"wide left column, wide gutter, above full width", false, []block{
			{lines: colLeft, pt: 11, x: 0.8, y: 0.5, leadPt: 15},
			{lines: colRight[:5], pt: 11, x: 5.0, y: 0.5, leadPt: 15},
			{lines: colFull, pt: 11, x: 0.8, y: 0.5 + 7*15.0/72, leadPt: 15},
		}, want{1, 0.5 + 15.0/72, 0.5 + 6*15.0/72, 4.6}},
		{"narrow left column, above a heading and a table", false, []block{
			{lines: colRight, pt: 10, x: 0.8, y: 0.5, leadPt: 14},
			{lines: colLeft, pt: 10, x: 3.3, y: 0.5, leadPt: 14},
			{lines: []string{"Current medicines"}, pt: 10, x: 0.8, y: 0.5 + 9*14.0/72, leadPt: 14}, // after a blank line
			{lines: colTable, pt: 10, x: 0.8, y: 0.5 + 10*14.0/72, leadPt: 14},
		}, want{1, 0.5 + 14.0/72, 0.5 + 8*14.0/72, 3.0}},
		{"monospaced columns", true, []block{
			{lines: colLeft, pt: 10, x: 0.6, y: 0.5, leadPt: 14},
			{lines: colRight, pt: 10, x: 4.8, y: 0.5, leadPt: 14},
		}, want{bands: 1, gutter: 4.6}},
		{"table", false, []block{{lines: colTable, pt: 11, x: 0.8, y: 0.5, leadPt: 15}}, want{}},
		{"form of two fields a row", false, []block{{lines: []string{
			"Participant ID: P-655438          Referral date: 2023-09-27",
			"Referring clinician: Dr D. Teldale          Referred to: Endocrinology",
			"Consent to share records: Yes          Urgency: routine",
			"Telephone: 01632 960 123          Hospital number: 4471 220",
		}, pt: 11, x: 0.8, y: 0.5, leadPt: 15}}, want{}},
		{"monospaced prose", true, []block{{lines: colFull, pt: 10, x: 0.6, y: 0.5, leadPt: 14}}, want{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bands := columnBands(layoutWords(t, tt.blocks, dpi, tt.mono), nil)
			if len(bands) != tt.want.bands {
				t.Fatalf("%d bands %+v; want %d", len(bands), bands, tt.want.bands)
			}
			if tt.want.bands == 0 {
				return
			}
			b, in := bands[0], func(px int) float64 { return float64(px) / dpi }
			// The first row's words reach up to an ascender above their
			// baseline, the last's down to a descender below it.
			if tt.want.top > 0 && (in(b.y0) > tt.want.top || in(b.y0) < tt.want.top-0.2) {
				t.Errorf("band starts at %.2f in; want the row on %.2f in", in(b.y0), tt.want.top)
			}
			if tt.want.below > 0 && (in(b.y1) < tt.want.below || in(b.y1) > tt.want.below+0.1) {
				t.Errorf("band ends at %.2f in; want the row on %.2f in", in(b.y1), tt.want.below)
			}
			if d := in(b.gutter) - tt.want.gutter; d < -0.3 || d > 0.3 {
				t.Errorf("gutter at %.2f in; want about %.2f", in(b.gutter), tt.want.gutter)
			}
		})
	}
}
