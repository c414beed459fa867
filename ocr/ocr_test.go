package ocr

import (
	"bytes"
	"errors"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/otiai10/gosseract/v2"
)

func TestFitDPI(t *testing.T) {
	tests := []struct {
		name           string
		wPt, hPt       float64
		dpi, minDPI    int
		maxPixels      int64
		wantDPI        int
		wantOK         bool
		wantUnderCapAt bool // also check the returned DPI's pixel count
	}{
		{name: "letter fits at 300", wPt: 612, hPt: 792, dpi: 300, minDPI: 150, maxPixels: 50e6, wantDPI: 300, wantOK: true},
		{name: "no cap", wPt: 8400, hPt: 8400, dpi: 300, minDPI: 150, maxPixels: 0, wantDPI: 300, wantOK: true},
		{name: "enormous lowered to fit 50 Mpx", wPt: 2160, hPt: 2160, dpi: 300, minDPI: 150, maxPixels: 50e6, wantDPI: 235, wantOK: true},
		{name: "hugemono over the cap at the minimum", wPt: 8400, hPt: 8400, dpi: 300, minDPI: 150, maxPixels: 50e6, wantDPI: 0, wantOK: false},
		{name: "exactly at the cap", wPt: 72, hPt: 72, dpi: 100, minDPI: 50, maxPixels: 10000, wantDPI: 100, wantOK: true},
		{name: "one pixel over the cap", wPt: 72, hPt: 72, dpi: 100, minDPI: 50, maxPixels: 9999, wantDPI: 99, wantOK: true},
		{name: "minimum itself fits", wPt: 72, hPt: 72, dpi: 100, minDPI: 50, maxPixels: 2500, wantDPI: 50, wantOK: true},
		{name: "just under the minimum", wPt: 72, hPt: 72, dpi: 100, minDPI: 50, maxPixels: 2499, wantDPI: 0, wantOK: false},
		{name: "dpi below minimum is kept when it fits", wPt: 612, hPt: 792, dpi: 100, minDPI: 150, maxPixels: 50e6, wantDPI: 100, wantOK: true},
		{name: "rounding outwards counts", wPt: 612.5, hPt: 792, dpi: 300, minDPI: 150, maxPixels: 2552 * 3300, wantDPI: 299, wantOK: true},
		{name: "empty page", wPt: 0, hPt: 0, dpi: 300, minDPI: 150, maxPixels: 1, wantDPI: 300, wantOK: true},
		{name: "long thin page", wPt: 100, hPt: 20000, dpi: 300, minDPI: 72, maxPixels: 10e6, wantDPI: 160, wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FitDPI(tt.wPt, tt.hPt, tt.dpi, tt.minDPI, tt.maxPixels)
			if got != tt.wantDPI || ok != tt.wantOK {
				t.Fatalf("FitDPI(%v, %v, %d, %d, %d) = %d, %v; want %d, %v",
					tt.wPt, tt.hPt, tt.dpi, tt.minDPI, tt.maxPixels, got, ok, tt.wantDPI, tt.wantOK)
			}
			if ok && tt.maxPixels > 0 {
				if px := PagePixels(tt.wPt, tt.hPt, got); px > tt.maxPixels {
					t.Errorf("%d pixels at %d dpi, over the cap %d", px, got, tt.maxPixels)
				}
				if got < tt.dpi {
					if px := PagePixels(tt.wPt, tt.hPt, got+1); px <= tt.maxPixels {
						t.Errorf("%d dpi also fits (%d pixels): not the highest", got+1, px)
					}
				}
			}
		})
	}
}

func TestAssemble(t *testing.T) {
	box := func(word string, conf float64, block, par, line int) gosseract.BoundingBox {
		return gosseract.BoundingBox{Word: word, Confidence: conf, BlockNum: block, ParNum: par, LineNum: line,
			Box: image.Rect(1, 2, 3, 4)}
	}
	tests := []struct {
		name     string
		boxes    []gosseract.BoundingBox
		wantText string
		wantMean float64
		wantN    int
	}{
		{name: "no words", wantText: "", wantMean: 0, wantN: 0},
		{name: "one line", boxes: []gosseract.BoundingBox{box("Participant", 90, 1, 1, 1), box("ID:", 80, 1, 1, 1)},
			wantText: "Participant ID:", wantMean: 85, wantN: 2},
		{name: "two lines", boxes: []gosseract.BoundingBox{box("a", 90, 1, 1, 1), box("b", 90, 1, 1, 2), box("c", 90, 1, 1, 2)},
			wantText: "a\nb c", wantMean: 90, wantN: 3},
		{name: "paragraphs and blocks", boxes: []gosseract.BoundingBox{
			box("a", 60, 1, 1, 1), box("b", 60, 1, 2, 1), box("c", 60, 2, 1, 1)},
			wantText: "a\n\nb\n\nc", wantMean: 60, wantN: 3},
		{name: "blank words dropped", boxes: []gosseract.BoundingBox{box("a", 90, 1, 1, 1), box(" ", 10, 1, 1, 1), box("b", 70, 1, 1, 1)},
			wantText: "a b", wantMean: 80, wantN: 2},
		{name: "negative confidence counts as zero", boxes: []gosseract.BoundingBox{box("a", -1, 1, 1, 1), box("b", 50, 1, 1, 1)},
			wantText: "a b", wantMean: 25, wantN: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			words, text, mean := assemble(tt.boxes)
			if text != tt.wantText {
				t.Errorf("text = %q, want %q", text, tt.wantText)
			}
			if mean != tt.wantMean {
				t.Errorf("mean = %v, want %v", mean, tt.wantMean)
			}
			if len(words) != tt.wantN {
				t.Fatalf("%d words, want %d", len(words), tt.wantN)
			}
			for _, w := range words {
				if w.Box != [4]int{1, 2, 3, 4} {
					t.Errorf("word box = %v, want x0,y0,x1,y1 = [1 2 3 4]", w.Box)
				}
			}
		})
	}
}

func TestGrayPGM(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	colors := [][4]byte{{0, 0, 0, 255}, {255, 255, 255, 255}, {255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {128, 128, 128, 255}}
	for i, c := range colors {
		copy(img.Pix[4*i:], c[:])
	}
	var g grayImage
	hist := g.fromRGBA(img)
	got := g.pgm()
	want := append([]byte("P5\n3 2\n255\n"), 0, 255, 76, 150, 29, 128)
	if !bytes.Equal(got, want) {
		t.Fatalf("pgm = %q, want %q", got, want)
	}
	if hist[0] != 1 || hist[255] != 1 || hist[128] != 1 {
		t.Errorf("histogram counts 0: %d, 255: %d, 128: %d; want 1 each", hist[0], hist[255], hist[128])
	}
	// A smaller page reuses the buffer.
	first := &g.buf[0]
	white := image.NewRGBA(image.Rect(0, 0, 1, 1))
	copy(white.Pix, []byte{255, 255, 255, 255})
	g.fromRGBA(white)
	if &g.buf[0] != first {
		t.Errorf("buffer not reused")
	}
	if small := g.pgm(); !bytes.Equal(small, []byte("P5\n1 1\n255\n\xff")) {
		t.Errorf("pgm(blank 1×1) = %q", small)
	}
}

func TestParseFaults(t *testing.T) {
	f, err := parseFaults("crash=R-3; hang=R-4;alloc=R-5;transient2=R-6;slow500ms=R-7;")
	if err != nil {
		t.Fatalf("parseFaults: %v", err)
	}
	if !f.crash["R-3"] || !f.hang["R-4"] || !f.alloc["R-5"] || f.transient["R-6"] != 2 || f.slow["R-7"] != 500*time.Millisecond {
		t.Errorf("parsed %+v", f)
	}
	var fails []bool
	for range 3 {
		fails = append(fails, f.openFails("R-6"))
	}
	if !fails[0] || !fails[1] || fails[2] {
		t.Errorf("opens failed %v; transient2 should fail exactly the first two", fails)
	}

	bad := []struct{ name, value string }{
		{name: "unknown kind", value: "explode=R-1"},
		{name: "no tag", value: "crash="},
		{name: "no equals", value: "crash"},
		{name: "transient without count", value: "transient=R-1"},
		{name: "bad duration", value: "slowabit=R-1"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseFaults(tt.value); err == nil {
				t.Errorf("parseFaults(%q) succeeded", tt.value)
			}
		})
	}
}

func TestEngineError(t *testing.T) {
	inner := errors.New("boom")
	tests := []struct {
		cause     Cause
		transient bool
	}{
		{CauseCrash, true}, {CauseOOM, true}, {CauseTransient, true},
		{CauseTimeout, false}, {CauseTooLarge, false}, {CauseOpen, false}, {CauseRender, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.cause), func(t *testing.T) {
			e := &EngineError{Cause: tt.cause, Page: 2, Err: inner}
			if e.Transient() != tt.transient {
				t.Errorf("Transient() = %v, want %v", e.Transient(), tt.transient)
			}
			if !errors.Is(e, inner) {
				t.Errorf("does not unwrap to its cause")
			}
			if !strings.Contains(e.Error(), string(tt.cause)) || !strings.Contains(e.Error(), "page 2") {
				t.Errorf("Error() = %q", e.Error())
			}
		})
	}
}
