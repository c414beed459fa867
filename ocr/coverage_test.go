package ocr

import (
	"context"
	"image"
	"image/color"
	"image/draw"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// block is text drawn at a size and grey level, from x inches in, y
// inches down, lines lead points apart, wrapped at width inches.
type block struct {
	lines  []string
	pt     float64
	grey   uint8
	x, y   float64
	leadPt float64
}

// drawPage draws blocks on a white page of wIn×hIn inches at dpi.
func drawPage(t testing.TB, blocks []block, wIn, hIn float64, dpi int) *image.Gray {
	t.Helper()
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewGray(image.Rect(0, 0, int(wIn*float64(dpi)), int(hIn*float64(dpi))))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	for _, b := range blocks {
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: b.pt, DPI: float64(dpi), Hinting: font.HintingFull})
		if err != nil {
			t.Fatal(err)
		}
		d := font.Drawer{Dst: img, Src: image.NewUniform(color.Gray{Y: b.grey}), Face: face}
		lead := b.leadPt * float64(dpi) / 72
		for i, line := range b.lines {
			d.Dot = fixed.P(int(b.x*float64(dpi)), int(b.y*float64(dpi)+float64(i+1)*lead))
			d.DrawString(line)
		}
		face.Close()
	}
	return img
}

var (
	coverBody = []string{
		"Thank you for seeing this participant, who reports a persistent cough",
		"for the past three months despite two courses of antibiotics. There is",
		"no history of smoking and no known occupational exposure. A chest film",
		"taken last month showed no focal consolidation. Spirometry suggested a",
		"mild obstructive pattern, partly reversible after a bronchodilator.",
	}
	// coverFaint is a note from a referrals office, the kind of small grey
	// print a global threshold loses: the words are the point.
	coverFaint = []string{
		"Note from the referrals office: the participant reported an allergy to iodine",
		"contrast agents after an earlier scan. Hearing is impaired on the left side;",
		"please speak clearly. Blood tests are booked for the morning of the visit.",
	}
	coverFaintWords = []string{"allergy", "iodine", "contrast", "Hearing", "impaired", "Blood", "booked", "morning"}
)

// TestCoverageRecoversFaintPrint: a paragraph of 7 pt grey print beside
// 11 pt black text. Tesseract alone drops it and still reads the page
// with high confidence; the coverage step finds the unread print, reads it
// again, and the page ends with it in its text and little left unread.
func TestCoverageRecoversFaintPrint(t *testing.T) {
	const dpi = 200
	img := drawPage(t, []block{
		{lines: coverBody, pt: 11, grey: 0, x: 1, y: 1, leadPt: 16},
		{lines: coverFaint, pt: 7, grey: 185, x: 1, y: 2.6, leadPt: 10},
		{lines: coverBody[:3], pt: 11, grey: 0, x: 1, y: 3.3, leadPt: 16},
	}, 8.5, 5, dpi)
	pdf := imagePDF(t, img, dpi)
	read := func(noCoverage bool) PageResult {
		cfg := testConfig(t, dpi)
		cfg.Policy.NoCoverage = noCoverage
		w := startWorker(t, cfg)
		if _, err := w.Open(context.Background(), pdf); err != nil {
			t.Fatal(err)
		}
		p, err := w.Page(context.Background(), 0, 0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	found := func(text string) int {
		n := 0
		for _, w := range coverFaintWords {
			if strings.Contains(text, w) {
				n++
			}
		}
		return n
	}

	off := read(true)
	if n := found(off.Text); n > len(coverFaintWords)/2 {
		t.Logf("without coverage Tesseract read %d of %d faint words; the page no longer shows the failure", n, len(coverFaintWords))
	}
	if off.UncoveredShare != 0 || off.RecoveredWords != 0 {
		t.Errorf("--no-coverage measured: %+v", off)
	}

	on := read(false)
	t.Logf("faint words read: %d of %d without coverage, %d with; uncovered %.3f before recovery, %.3f after; %d words recovered",
		found(off.Text), len(coverFaintWords), found(on.Text), on.UncoveredFirst, on.UncoveredShare, on.RecoveredWords)
	if n := found(on.Text); n < len(coverFaintWords)*8/10 {
		t.Errorf("read %d of %d faint words:\n%s", n, len(coverFaintWords), on.Text)
	}
	if on.RecoveredWords == 0 || on.UncoveredFirst < 0.1 || on.UncoveredShare > 0.05 {
		t.Errorf("recovered %d words, uncovered %.3f before and %.3f after; want some, over 0.1 and under 0.05",
			on.RecoveredWords, on.UncoveredFirst, on.UncoveredShare)
	}
	// The note sits between the two body blocks: its words come between
	// theirs in the text.
	i, j, k := strings.Index(on.Text, "bronchodilator"), strings.Index(on.Text, "iodine"), strings.LastIndex(on.Text, "Thank you")
	if !(i >= 0 && i < j && j < k) {
		t.Errorf("recovered words out of reading order (%d, %d, %d):\n%s", i, j, k, on.Text)
	}
}

// TestCoverageReadsColumns: a section in two columns is read column by
// column, while a table above it keeps its rows.
func TestCoverageReadsColumns(t *testing.T) {
	const dpi = 200
	left := []string{"Background: the participant", "was referred once before for", "the same problem, and the", "referral was not completed."}
	right := []string{"Plan: a physiotherapy referral", "has been made in parallel, and", "the practice nurse will check", "blood pressure in two weeks."}
	table := []string{"Measurement        Value      Unit       Taken", "Blood pressure     117/81     mmHg       2024-07-01", "Heart rate         63         bpm        2024-07-02"}
	img := drawPage(t, []block{
		{lines: table, pt: 11, grey: 0, x: 1, y: 0.8, leadPt: 16},
		{lines: left, pt: 11, grey: 0, x: 1, y: 1.8, leadPt: 16},
		{lines: right, pt: 11, grey: 0, x: 4.5, y: 1.8, leadPt: 16},
	}, 8.5, 3.5, dpi)
	w := startWorker(t, testConfig(t, dpi))
	if _, err := w.Open(context.Background(), imagePDF(t, img, dpi)); err != nil {
		t.Fatal(err)
	}
	p, err := w.Page(context.Background(), 0, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if p.Columns != 1 {
		t.Errorf("%d column sections read; want 1", p.Columns)
	}
	// Left column, all of it, then the right one.
	order := []string{"Background", "referred", "completed", "Plan", "parallel", "weeks"}
	at := -1
	for _, w := range order {
		i := strings.Index(p.Text, w)
		if i <= at {
			t.Errorf("%q is not after the words before it:\n%s", w, p.Text)
			break
		}
		at = i
	}
	// The table's rows stay whole lines.
	if !strings.Contains(p.Text, "Blood pressure 117/81 mmHg 2024-07-01") {
		t.Errorf("the table's row was split:\n%s", p.Text)
	}
}

// TestCoverageCleanPage: a page read in full costs only the measurement.
// The page is 14 lines of the Letter page's text: the measurement is a
// share of the page's print, and a third of the lines is a third of the
// recognition.
func TestCoverageCleanPage(t *testing.T) {
	const dpi = 150
	w := startWorker(t, testConfig(t, dpi))
	if _, err := w.Open(context.Background(), imagePDF(t, textPage(t, letterLines()[:14], 8.5, 4, dpi), dpi)); err != nil {
		t.Fatal(err)
	}
	p, err := w.Page(context.Background(), 0, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if p.UncoveredShare > 0.01 || p.RecoveredWords != 0 || p.Columns != 0 || len(p.UncoveredRegions) != 0 {
		t.Errorf("a clean page: uncovered %.4f, %d recovered, %d column sections, regions %v",
			p.UncoveredShare, p.RecoveredWords, p.Columns, p.UncoveredRegions)
	}
	if !strings.Contains(normalised(p.Text), "P-123456") || p.CoverageTime == 0 {
		t.Errorf("the page was not read and measured: participant ID found %t, measured in %v",
			strings.Contains(normalised(p.Text), "P-123456"), p.CoverageTime)
	}
}

func TestColumnBands(t *testing.T) {
	line := func(x0, y0, x1, y1 int) [4]int { return [4]int{x0, y0, x1, y1} }
	rows := func(y0 int, n int, segs ...[2]int) [][4]int {
		var out [][4]int
		for i := range n {
			y := y0 + i*30
			for _, s := range segs {
				out = append(out, line(s[0], y, s[1], y+20))
			}
		}
		return out
	}
	tests := []struct {
		name  string
		lines [][4]int
		blobs [][4]int
		want  int // bands
	}{
		{name: "one column", lines: rows(0, 6, [2]int{100, 1500}), want: 0},
		{name: "two columns", lines: rows(0, 6, [2]int{100, 750}, [2]int{850, 1500}), want: 1},
		{name: "two columns, two rows only", lines: rows(0, 2, [2]int{100, 750}, [2]int{850, 1500}), want: 0},
		{name: "table of four cells", lines: rows(0, 6, [2]int{100, 400}, [2]int{500, 650}, [2]int{750, 900}, [2]int{1000, 1300}), want: 0},
		{name: "word space is no gutter", lines: rows(0, 6, [2]int{100, 750}, [2]int{770, 1500}), want: 0},
		{name: "narrow right column", lines: rows(0, 6, [2]int{100, 1200}, [2]int{1300, 1450}), want: 0},
		{name: "columns under a full-width paragraph", lines: append(rows(0, 3, [2]int{100, 1500}), rows(90, 5, [2]int{100, 750}, [2]int{850, 1500})...), want: 1},
		{name: "a stamp over a paragraph splits its lines", lines: rows(0, 6, [2]int{100, 700}, [2]int{900, 1500}), blobs: [][4]int{{680, 20, 920, 140}}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bands := columnBands(tt.lines, tt.blobs)
			if len(bands) != tt.want {
				t.Fatalf("%d bands %+v; want %d", len(bands), bands, tt.want)
			}
			for _, b := range bands {
				if b.gutter <= 750 || b.gutter >= 850 {
					t.Errorf("gutter at %d; want between the columns", b.gutter)
				}
			}
		})
	}
}

func TestTextLike(t *testing.T) {
	tests := []struct {
		name  string
		boxes [][4]int
		want  bool
	}{
		{name: "a word of letters", boxes: [][4]int{{0, 10, 8, 20}, {10, 12, 18, 20}, {20, 10, 28, 20}, {30, 12, 38, 20}}, want: true},
		{name: "two letters", boxes: [][4]int{{0, 10, 8, 20}, {10, 12, 18, 20}}, want: false},
		{name: "a blob and a letter", boxes: [][4]int{{0, 10, 60, 20}, {65, 10, 73, 20}}, want: true},
		{name: "a lone stroke", boxes: [][4]int{{0, 10, 80, 16}}, want: false},
		{name: "letters of a stamp turned 15 degrees", boxes: [][4]int{{0, 100, 30, 140}, {35, 90, 65, 130}, {70, 81, 100, 121}, {105, 72, 135, 112}, {140, 62, 170, 102}, {175, 53, 205, 93}}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := make([]int, len(tt.boxes))
			for i := range line {
				line[i] = i
			}
			if got := textLike(line, tt.boxes); got != tt.want {
				t.Errorf("textLike = %v; want %v", got, tt.want)
			}
		})
	}
}

// TestMeasureCoverageAnyImage: the measurement takes any image and any
// boxes, degenerate ones included, without failing.
func TestMeasureCoverageAnyImage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		w, h := 1+rng.IntN(400), 1+rng.IntN(400)
		img := newGrayImage(w, h)
		for j := range img.pix {
			img.pix[j] = uint8(rng.IntN(256))
			if rng.IntN(3) == 0 {
				img.pix[j] = 250
			}
		}
		var words []Word
		for range rng.IntN(20) {
			x, y := rng.IntN(w+100)-50, rng.IntN(h+100)-50
			words = append(words, Word{Text: "w", Box: [4]int{x, y, x + rng.IntN(200) - 20, y + rng.IntN(200) - 20}})
		}
		dpi := []int{72, 150, 200, 300, 600}[i%5]
		c := measureCoverage(img, dpi, rng.IntN(256), words)
		if s := c.share(); s < 0 || s > 1 {
			t.Fatalf("share %v out of range", s)
		}
		columnBands(wordBoxes(words), c.blobs)
		unreadBlocks(c)
	}
}
