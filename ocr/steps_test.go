package ocr

import (
	"context"
	"image"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readPages opens pdf in w and reads the pages listed (all when none).
func readPages(t *testing.T, w *Worker, pdf []byte, pages ...int) []PageResult {
	t.Helper()
	ctx := context.Background()
	n, err := w.Open(ctx, pdf)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if len(pages) == 0 {
		for i := range n {
			pages = append(pages, i)
		}
	}
	var out []PageResult
	for _, i := range pages {
		p, err := w.Page(ctx, i, 0, 2*time.Minute)
		if err != nil {
			t.Fatalf("Page %d: %v", i, err)
		}
		out = append(out, p)
	}
	return out
}

func readCorpus(t *testing.T, w *Worker, name string, pages ...int) []PageResult {
	t.Helper()
	pdf, err := os.ReadFile(filepath.Join(corpusDir(t), name))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return readPages(t, w, pdf, pages...)
}

// normalised is s without whitespace, upper-cased, as the batch looks for a
// participant ID.
func normalised(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// toGray and fromGray move a test image in and out of the engine's type.
func toGray(img *image.Gray) *grayImage {
	g := newGrayImage(img.Rect.Dx(), img.Rect.Dy())
	for y := range g.h {
		copy(g.pix[y*g.w:(y+1)*g.w], img.Pix[y*img.Stride:])
	}
	return g
}

func fromGray(g *grayImage) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, g.w, g.h))
	copy(img.Pix, g.pix)
	return img
}

// TestNoOrientationLeavesPagesAsTheyAre reads an upside-down page with
// the orientation step off. The page is a few drawn lines: an upside-down
// scan reads as noise, slowly, and cardinal.pdf's took a tenth of the
// package's CPU to show what a short page shows (cmd/refbatch's
// TestEvalRealCorpus checks that file's pages turned with the step on).
func TestNoOrientationLeavesPagesAsTheyAre(t *testing.T) {
	const dpi = 150
	cfg := testConfig(t, dpi)
	cfg.Policy.NoOrientation = true
	w := startWorker(t, cfg)
	turned := fromGray(toGray(textPage(t, letterLines()[:6], 8.5, 3, dpi)).rotate(180))
	p := readPages(t, w, imagePDF(t, turned, dpi))[0]
	if p.Rotation != 0 {
		t.Errorf("rotation %d with orientation off", p.Rotation)
	}
	if strings.Contains(normalised(p.Text), "P-123456") {
		t.Errorf("the upside-down page read correctly without orientation: is the test page still turned?")
	}
}

// TestCorpusTextLayers reads the real corpus's pages that carry a text
// layer. The scans without one, the brochure page in its encodings and
// orientations (cardinal.pdf turned four ways, jbig2_baddevicen.pdf
// white on black, ccitt.pdf), are checked in the artifacts of
// cmd/refbatch's TestEvalRealCorpus, which reads every page of the
// corpus once at 300 DPI: each is 3 CPU-s of recognition at any
// resolution, and reading them here again showed nothing more.
func TestCorpusTextLayers(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		page     int
		forceOCR bool
		want     string
	}{
		{name: "graph_ocred uses its layer", file: "graph_ocred.pdf", want: TextFromLayer},
		{name: "multipage page 4 uses its layer", file: "multipage.pdf", page: 3, want: TextFromLayer},
		{name: "forced OCR ignores the layer", file: "graph_ocred.pdf", forceOCR: true, want: TextFromOCR},
	}
	workers := map[bool]*Worker{} // by forceOCR: the cases with the same settings share one
	parent := t
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if workers[tt.forceOCR] == nil {
				cfg := testConfig(parent, 150)
				cfg.Policy.ForceOCR = tt.forceOCR
				workers[tt.forceOCR] = startWorker(parent, cfg)
			}
			p := readCorpus(t, workers[tt.forceOCR], tt.file, tt.page)[0]
			if p.TextSource != tt.want {
				t.Fatalf("text source %q, want %q", p.TextSource, tt.want)
			}
			if len(p.Words) == 0 || p.Text == "" {
				t.Fatalf("no text")
			}
			if p.TextSource == TextFromLayer {
				if !strings.Contains(p.Text, "Percentage") {
					t.Errorf("layer text lacks %q", "Percentage")
				}
				for _, w := range p.Words {
					if w.Conf != p.MeanConf || w.Box != [4]int{} {
						t.Fatalf("layer word %+v: want the page's confidence %.1f and no box", w, p.MeanConf)
					}
				}
			}
		})
	}
}

func TestSyntheticTextLayers(t *testing.T) {
	lines := letterLines()
	unrelated := []string{
		"Minutes of the committee meeting held on Tuesday afternoon",
		"Present were the chair, the treasurer and four members.",
		"The accounts for the year were approved without amendment.",
		"Arrangements for the summer fair were discussed at length,",
		"and volunteers were found for the stalls and the raffle.",
		"The next meeting will be held in the village hall in June.",
	}
	// A layer refused on a whole page costs a whole page's recognition,
	// so one refusal is read on each path (a whole page sampled, a short
	// page compared whole); the other refusals (part of the page, the page
	// and more hidden behind it, too few words) are the rule's, and
	// TestLayerRule, TestLayerRuleBySample and TestParseLayer hold them.
	tests := []struct {
		name  string
		dpi   int
		lines []string // on the page
		layer []string
		want  string
	}{
		{name: "matching layer", dpi: 150, lines: lines, layer: lines, want: TextFromLayer},
		{name: "matching layer at 300 dpi", dpi: 300, lines: lines, layer: lines, want: TextFromLayer},
		{name: "matching layer on a short page", dpi: 150, lines: lines[:6], layer: lines[:6], want: TextFromLayer},
		{name: "unrelated layer", dpi: 150, lines: lines, layer: unrelated, want: TextFromOCR},
		{name: "unrelated layer on a short page", dpi: 150, lines: lines[:6], layer: unrelated, want: TextFromOCR},
	}
	// One worker per resolution serves the cases, one document at a time.
	workers := map[int]*Worker{}
	parent := t
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hIn := 11.0
			if len(tt.lines) < 20 {
				hIn = 4
			}
			pdf := layeredPDF(t, textPage(t, tt.lines, 8.5, hIn, tt.dpi), tt.dpi, tt.layer)
			if workers[tt.dpi] == nil {
				workers[tt.dpi] = startWorker(parent, testConfig(parent, tt.dpi))
			}
			p := readPages(t, workers[tt.dpi], pdf)[0]
			t.Logf("%s, mean confidence %.1f, %d words", p.TextSource, p.MeanConf, len(p.Words))
			if p.TextSource != tt.want {
				t.Fatalf("text source %q, want %q", p.TextSource, tt.want)
			}
			if !strings.Contains(normalised(p.Text), "P-123456") {
				t.Errorf("participant ID not in the text")
			}
			if p.TextSource == TextFromLayer && p.MeanConf < 90 {
				t.Errorf("a layer matching the page scored %.1f, want 90 or more", p.MeanConf)
			}
		})
	}
}

// TestSyntheticTurnedAndSkewedPages reads a page of 14 lines (91 words),
// upright, upside down and skewed: it is turned and straightened as a
// full Letter page is (rotation 180, skew 4.94 against 5.00), at a third
// of its recognition. Left skewed (deskew off), the short page loses its
// lines to Tesseract and the full page does not: that case reads the full
// page. The cases with the same settings share a worker.
func TestSyntheticTurnedAndSkewedPages(t *testing.T) {
	const dpi = 150
	skew := func(img *grayImage) *grayImage {
		s, err := rotateGray(img, 5, 255)
		if err != nil {
			t.Fatalf("skewing the test page: %v", err)
		}
		return s
	}
	upright := textPage(t, letterLines()[:14], 8.5, 4, dpi)
	turned := toGray(upright).rotate(180)
	skewed := skew(toGray(upright))
	skewedLetter := skew(toGray(textPage(t, letterLines(), 8.5, 11, dpi)))
	tests := []struct {
		name         string
		img          *grayImage
		noDeskew     bool
		wantRotation int
		wantSkew     float64 // absolute, ±0.5
	}{
		{name: "upright", img: toGray(upright)},
		{name: "upside down", img: turned, wantRotation: 180},
		{name: "skewed 5 degrees", img: skewed, wantSkew: 5},
		{name: "skewed, deskew off", img: skewedLetter, noDeskew: true},
	}
	workers := map[bool]*Worker{} // by noDeskew
	parent := t
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if workers[tt.noDeskew] == nil {
				cfg := testConfig(parent, dpi)
				cfg.Policy.NoDeskew = tt.noDeskew
				workers[tt.noDeskew] = startWorker(parent, cfg)
			}
			p := readPages(t, workers[tt.noDeskew], imagePDF(t, fromGray(tt.img), dpi))[0]
			words, credible, mean := pageStats(p)
			t.Logf("rotation %d, skew %.2f: %d words, %d credible, mean %.1f", p.Rotation, p.SkewDegrees, words, credible, mean)
			if p.Rotation != tt.wantRotation {
				t.Errorf("rotation %d, want %d", p.Rotation, tt.wantRotation)
			}
			if math.Abs(math.Abs(p.SkewDegrees)-tt.wantSkew) > 0.5 {
				t.Errorf("skew %.2f degrees, want ±%.0f", p.SkewDegrees, tt.wantSkew)
			}
			if !strings.Contains(normalised(p.Text), "P-123456") {
				t.Errorf("participant ID not in the text")
			}
			if p.Inverted {
				t.Errorf("inverted a black-on-white page")
			}
		})
	}
}

func TestGrayRotate(t *testing.T) {
	// 3×2:  1 2 3
	//       4 5 6
	g := newGrayImage(3, 2)
	copy(g.pix, []byte{1, 2, 3, 4, 5, 6})
	tests := []struct {
		deg  int
		w, h int
		want []byte
	}{
		{deg: 0, w: 3, h: 2, want: []byte{1, 2, 3, 4, 5, 6}},
		{deg: 90, w: 2, h: 3, want: []byte{4, 1, 5, 2, 6, 3}},
		{deg: 180, w: 3, h: 2, want: []byte{6, 5, 4, 3, 2, 1}},
		{deg: 270, w: 2, h: 3, want: []byte{3, 6, 2, 5, 1, 4}},
		{deg: -90, w: 2, h: 3, want: []byte{3, 6, 2, 5, 1, 4}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.deg), func(t *testing.T) {
			r := g.rotate(tt.deg)
			if r.w != tt.w || r.h != tt.h || string(r.pix) != string(tt.want) {
				t.Errorf("rotate(%d) = %d×%d %v, want %d×%d %v", tt.deg, r.w, r.h, r.pix, tt.w, tt.h, tt.want)
			}
		})
	}
	if string(g.pix) != string([]byte{1, 2, 3, 4, 5, 6}) {
		t.Errorf("rotate changed its source: %v", g.pix)
	}
}

func TestGrayDownscaleAndInvert(t *testing.T) {
	g := newGrayImage(4, 2)
	copy(g.pix, []byte{0, 10, 100, 200, 20, 30, 100, 0})
	d := g.downscale(2)
	if d.w != 2 || d.h != 1 || string(d.pix) != string([]byte{15, 100}) {
		t.Errorf("downscale(2) = %d×%d %v, want 2×1 [15 100]", d.w, d.h, d.pix)
	}
	g.invert()
	if string(g.pix) != string([]byte{255, 245, 155, 55, 235, 225, 155, 255}) {
		t.Errorf("invert = %v", g.pix)
	}
	if !strings.HasPrefix(string(g.pgm()), "P5\n4 2\n255\n") {
		t.Errorf("pgm header %q", g.pgm()[:12])
	}
}

func TestOtsuAndDarkShare(t *testing.T) {
	tests := []struct {
		name              string
		dark, light       int // gray values
		darkN, lightN     int // pixel counts
		wantThreshBetween [2]int
		wantShare         float64
	}{
		{name: "text page", dark: 20, light: 240, darkN: 8, lightN: 92, wantThreshBetween: [2]int{21, 240}, wantShare: 0.08},
		{name: "white on black", dark: 10, light: 230, darkN: 92, lightN: 8, wantThreshBetween: [2]int{11, 230}, wantShare: 0.92},
		{name: "bitonal", dark: 0, light: 255, darkN: 10, lightN: 90, wantThreshBetween: [2]int{1, 255}, wantShare: 0.10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hist [256]int
			hist[tt.dark], hist[tt.light] = tt.darkN, tt.lightN
			th := otsu(hist)
			if th < tt.wantThreshBetween[0] || th > tt.wantThreshBetween[1] {
				t.Errorf("otsu = %d, want within %v", th, tt.wantThreshBetween)
			}
			if got := darkShare(hist, th); math.Abs(got-tt.wantShare) > 1e-9 {
				t.Errorf("darkShare = %v, want %v", got, tt.wantShare)
			}
		})
	}
	var empty [256]int
	if th := otsu(empty); th != 128 {
		t.Errorf("otsu(empty) = %d, want 128", th)
	}
}

func TestOrientVerdict(t *testing.T) {
	// Leptonica's confidences measured on cardinal.pdf and others at 300 dpi.
	tests := []struct {
		name     string
		up, left float64
		want     int
	}{
		{name: "upright", up: 10.9, left: -3.8, want: 0},
		{name: "turned 90", up: -3.8, left: -17.4, want: 90},
		{name: "upside down", up: -17.4, left: 3.8, want: 180},
		{name: "turned 270", up: 3.8, left: 10.9, want: 270},
		{name: "too little text", up: 0, left: 0, want: -1},
		{name: "picture", up: 7.6, left: -6.2, want: -1},
		{name: "ratio too small", up: 9.9, left: -5.4, want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := orientVerdict(tt.up, tt.left); got != tt.want {
				t.Errorf("orientVerdict(%v, %v) = %d, want %d", tt.up, tt.left, got, tt.want)
			}
		})
	}
}

func TestParseLayer(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantText string
		wantOK   bool
	}{
		{name: "lines tidied", in: "  Referral  to the\n\n\n  clinic   today \n", wantText: "Referral to the\n\nclinic today", wantOK: true},
		{name: "too few words", in: "7\n- ok\n", wantText: "7\n- ok", wantOK: false},
		{name: "empty", in: " \n\n", wantText: "", wantOK: false},
		{name: "repeated words count once", in: "no no no no", wantText: "no no no no", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := parseLayer(tt.in)
			if l.text != tt.wantText || ok != tt.wantOK {
				t.Errorf("parseLayer = %q, %v; want %q, %v", l.text, ok, tt.wantText, tt.wantOK)
			}
		})
	}
}

func TestMatchKeyAndNearKey(t *testing.T) {
	keys := []struct{ in, want string }{
		{"Participant", "participant"}, {"ID:", "id"}, {"P-123456", "p123456"}, {"a", ""}, {"—", ""}, {"[note", "note"},
	}
	for _, k := range keys {
		if got := matchKey(k.in); got != k.want {
			t.Errorf("matchKey(%q) = %q, want %q", k.in, got, k.want)
		}
	}
	near := []struct {
		a, b string
		want bool
	}{
		{"support", "esupport", true},   // one edit in 7
		{"netnote", "senetnote", false}, // two edits, 7 allows one
		{"percentage", "percentaqe", true},
		{"of", "or", false}, // short words must be equal
		{"referral", "referral", true},
		{"referral", "deferred", false},
	}
	for _, n := range near {
		if got := nearKey(n.a, n.b); got != n.want {
			t.Errorf("nearKey(%q, %q) = %v, want %v", n.a, n.b, got, n.want)
		}
	}
}

func TestLayerRule(t *testing.T) {
	words := func(conf float64, s string) []Word {
		var out []Word
		for _, f := range strings.Fields(s) {
			out = append(out, Word{Text: f, Conf: conf})
		}
		return out
	}
	page := "Referral to the respiratory clinic for a persistent cough Participant ID: P-123456"
	tests := []struct {
		name     string
		layer    string
		reading  []Word
		wantOK   bool
		wantConf float64
	}{
		{name: "same text", layer: page, reading: words(92, page), wantOK: true, wantConf: 100},
		{name: "near readings", layer: page, reading: words(92, strings.ReplaceAll(page, "respiratory", "respiratcry")), wantOK: true, wantConf: 100},
		{name: "unrelated text", layer: "Minutes of the committee meeting held on Tuesday", reading: words(92, page), wantOK: false},
		{name: "partial layer", layer: "Referral to the respiratory", reading: words(92, page), wantOK: false},
		{name: "extra hidden text", layer: page + " Minutes of the committee meeting held on Tuesday with apologies from members",
			reading: words(92, page), wantOK: false},
		{name: "doubtful reading, related layer", layer: "Support Oppose Percentage note 400 300 sw bh",
			reading: append(words(30, "Wee W VO OW a ye e"), words(70, "Support Percentage note 400")...), wantOK: true, wantConf: 50},
		{name: "doubtful reading, unrelated layer", layer: page,
			reading: append(words(30, "Wee W VO OW a ye e"), words(70, "Support Percentage note 400")...), wantOK: false},
		{name: "nothing read", layer: page, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := parseLayer(tt.layer)
			if !ok {
				t.Fatalf("parseLayer(%q) not a layer", tt.layer)
			}
			conf, ok := l.trusted(recognition{words: tt.reading})
			a, c := l.compare(tt.reading)
			if ok != tt.wantOK || (ok && math.Abs(conf-tt.wantConf) > 0.01) {
				t.Errorf("trusted = %.1f, %v (agreement %.2f, coverage %.2f); want %.1f, %v", conf, ok, a, c, tt.wantConf, tt.wantOK)
			}
		})
	}
}

// BenchmarkPageUpright measures what the page steps cost on upright,
// straight, black-on-white pages, which need none of them: the same page
// read by a worker with the steps on and with them off (ForceOCR,
// NoOrientation, NoDeskew). Besides the wall time per page it reports the
// child's CPU time per page (cpu-ms/page), steadier on a busy machine:
//
//	go test -run '^$' -bench PageUpright -benchtime 10x ./ocr
func BenchmarkPageUpright(b *testing.B) {
	pages := []struct {
		name string
		pdf  func(b *testing.B) []byte
	}{
		{name: "letter", pdf: func(b *testing.B) []byte { return letterPDF(b, 300) }},
		{name: "linn", pdf: func(b *testing.B) []byte {
			pdf, err := os.ReadFile(filepath.Join(corpusDir(b), "linn.pdf"))
			if err != nil {
				b.Fatalf("reading linn.pdf: %v", err)
			}
			return pdf
		}},
	}
	for _, page := range pages {
		for _, steps := range []string{"off", "on"} {
			b.Run(page.name+"/steps="+steps, func(b *testing.B) {
				pdf := page.pdf(b)
				cfg := testConfig(b, 300)
				if steps == "off" {
					cfg.Policy.ForceOCR, cfg.Policy.NoOrientation, cfg.Policy.NoDeskew = true, true, true
				}
				w := startWorker(b, cfg)
				ctx := context.Background()
				if _, err := w.Open(ctx, pdf); err != nil {
					b.Fatalf("Open: %v", err)
				}
				cpu0 := childCPU(b, w)
				b.ResetTimer()
				for range b.N {
					if _, err := w.Page(ctx, 0, 0, 5*time.Minute); err != nil {
						b.Fatalf("Page: %v", err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64((childCPU(b, w)-cpu0).Milliseconds())/float64(b.N), "cpu-ms/page")
			})
		}
	}
}

// childCPU returns the CPU time (user and system) the worker's child has
// used, from /proc/PID/stat.
func childCPU(b *testing.B, w *Worker) time.Duration {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(w.proc.Pid()), "stat"))
	if err != nil {
		b.Fatalf("reading the child's CPU time: %v", err)
	}
	// The command name, field 2, is in parentheses and may hold spaces;
	// utime and stime are fields 14 and 15, in clock ticks (100 a second
	// on Linux).
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("parsing the child's CPU time: %v, %v", err1, err2)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func TestGraySample(t *testing.T) {
	// A 100-row page with a text line (4 inked rows) every 10 rows.
	g := newGrayImage(50, 100)
	for y := range g.h {
		v := byte(255)
		if y%10 >= 3 && y%10 < 7 {
			v = 0
		}
		for x := range g.w {
			g.pix[y*g.w+x] = v
		}
	}
	s, sampled := g.sample(128, 255, 0.25)
	if s == nil {
		t.Fatalf("no sample")
	}
	if sampled < 0.25 || sampled > 0.5 {
		t.Errorf("sampled %.2f of the inked rows, want about 0.25", sampled)
	}
	inked := 0
	for y := range s.h {
		if s.pix[y*s.w] == 0 {
			inked++
		}
	}
	if inked%4 != 0 || float64(inked)/40 != sampled {
		t.Errorf("sample holds %d inked rows, a share of %.2f; want whole lines of 4 rows, share %.2f", inked, float64(inked)/40, sampled)
	}
	if s.pix[0] != 255 || s.pix[len(s.pix)-1] != 255 {
		t.Errorf("sample does not start and end white")
	}

	blank := newGrayImage(50, 100)
	for i := range blank.pix {
		blank.pix[i] = 255
	}
	if s, _ := blank.sample(128, 255, 0.25); s != nil {
		t.Errorf("sample of a blank page")
	}
	short := newGrayImage(50, 10)
	copy(short.pix, g.pix[:500])
	if s, _ := short.sample(128, 255, 0.25); s != nil {
		t.Errorf("sample of a one-line page: it should be read whole")
	}
}

func TestLayerRuleBySample(t *testing.T) {
	page := strings.Fields(`apple breeze candle dragon empire falcon garden harbor island jungle
		kettle lantern marble needle orchid pepper quartz ribbon saddle timber
		umbrella velvet walnut yellow zipper anchor bishop cactus dolphin engine
		feather glacier hammer igloo jacket kitten ladder magnet napkin oyster`)
	reading := func(conf float64, ws ...string) recognition {
		var r recognition
		for _, w := range ws {
			r.words = append(r.words, Word{Text: w, Conf: conf})
		}
		return r
	}
	tests := []struct {
		name        string
		layer       []string
		q           recognition
		sampled     float64
		wantOK      bool
		wantDecided bool
	}{
		{name: "layer holds the sample", layer: page, q: reading(90, page[10:22]...), sampled: 0.3, wantOK: true, wantDecided: true},
		{name: "layer lacks the sample", layer: page[:10], q: reading(90, page[10:22]...), sampled: 0.3, wantDecided: true},
		{name: "layer twice the page", layer: append(append([]string(nil), page...), page...), q: reading(90, page[10:20]...),
			sampled: 0.5, wantDecided: true},
		{name: "too few words to decide", layer: page, q: reading(90, page[10:15]...), sampled: 0.3},
		{name: "doubtful sample", layer: page, q: reading(40, page[10:30]...), sampled: 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := parseLayer(strings.Join(tt.layer, " "))
			if !ok {
				t.Fatalf("not a layer")
			}
			conf, ok, decided := l.trustedBySample(tt.q, tt.sampled)
			if ok != tt.wantOK || decided != tt.wantDecided {
				t.Errorf("trustedBySample = %.1f, %v, %v; want ok %v, decided %v", conf, ok, decided, tt.wantOK, tt.wantDecided)
			}
			if ok && conf != 100 {
				t.Errorf("confidence %.1f, want 100", conf)
			}
		})
	}
}

func TestStartWithoutOSDModel(t *testing.T) {
	// A tessdata folder with eng but without osd.
	var eng string
	for _, dir := range []string{"/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata", "/usr/share/tessdata"} {
		if _, err := os.Stat(filepath.Join(dir, "eng.traineddata")); err == nil {
			eng = filepath.Join(dir, "eng.traineddata")
			break
		}
	}
	if eng == "" {
		t.Skip("eng.traineddata not found")
	}
	tessdata := t.TempDir()
	if err := os.Symlink(eng, filepath.Join(tessdata, "eng.traineddata")); err != nil {
		t.Fatalf("linking eng.traineddata: %v", err)
	}
	env := "TESSDATA_PREFIX=" + tessdata

	w, err := StartWorker(context.Background(), testConfig(t, 100, env))
	if err == nil {
		_ = w.Close()
		t.Fatalf("a worker started with orientation detection on and no osd model")
	}
	if !strings.Contains(err.Error(), "osd") {
		t.Errorf("error %q does not name the osd model", err)
	}

	cfg := testConfig(t, 100, env)
	cfg.Policy.NoOrientation = true
	w = startWorker(t, cfg)
	if p := readPages(t, w, participantPDF(t))[0]; !strings.Contains(normalised(p.Text), "P-123456") {
		t.Errorf("participant ID not read without orientation detection")
	}
}
