package ocr

import (
	"bytes"
	"errors"
	"image"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/otiai10/gosseract/v2"
)

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

// TestGrayIsLuma checks the RGBA-to-gray conversion, which is C, against
// the luma weights written out in Go, value and histogram, on random
// pixels in rows with and without padding at their end and widths that
// are and are not multiples of four.
func TestGrayIsLuma(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 7))
	for _, w := range []int{1, 3, 4, 5, 17, 64, 257} {
		h := 1 + r.IntN(6)
		img := image.NewRGBA(image.Rect(0, 0, w+r.IntN(3), h)).SubImage(image.Rect(0, 0, w, h)).(*image.RGBA)
		for i := range img.Pix {
			img.Pix[i] = uint8(r.IntN(256))
		}
		var g grayImage
		hist := g.fromRGBA(img)
		var want [256]int
		for y := range h {
			for x := range w {
				p := img.Pix[y*img.Stride+4*x:]
				v := uint8((19595*uint32(p[0]) + 38470*uint32(p[1]) + 7471*uint32(p[2]) + 1<<15) >> 16)
				if got := g.pix[y*w+x]; got != v {
					t.Fatalf("width %d: pixel (%d, %d) is %d, luma %d", w, x, y, got, v)
				}
				want[v]++
			}
		}
		if hist != want {
			t.Errorf("width %d: histogram differs from the pixels' counts", w)
		}
	}
}

func TestParseFaults(t *testing.T) {
	const (
		doc3 = "33333333aaaa"
		doc4 = "44444444"
		doc6 = "66666666"
	)
	f, err := parseFaults("crash=" + doc3 + "; hang=" + doc4 + ";alloc=55555555;transient2=" + doc6 + ";slow500ms=*;")
	if err != nil {
		t.Fatalf("parseFaults: %v", err)
	}
	sum := func(prefix string) string { return prefix + strings.Repeat("0", 64-len(prefix)) }
	if c, _ := has(f.crash, sum(doc3)); !c {
		t.Errorf("crash does not strike the document whose hash starts %s", doc3)
	}
	if c, _ := has(f.crash, sum("33333333bbbb")); c {
		t.Errorf("crash strikes a document that only shares 8 digits with its key")
	}
	if h, _ := has(f.hang, sum(doc4)); !h {
		t.Errorf("hang does not strike its document")
	}
	if d, _ := has(f.slow, sum("ffff")); d != 500*time.Millisecond {
		t.Errorf("slow500ms=* slows a document by %v", d)
	}
	var fails []bool
	for range 3 {
		fails = append(fails, f.openFails(sum(doc6)))
	}
	if !fails[0] || !fails[1] || fails[2] {
		t.Errorf("opens failed %v; transient2 should fail exactly the first two", fails)
	}
	if f.openFails(sum(doc3)) {
		t.Errorf("a transient fault struck another document")
	}
	if f.key([]byte("x")) == "" {
		t.Errorf("faults set but documents are not hashed")
	}
	if none, _ := parseFaults(""); none.key([]byte("x")) != "" {
		t.Errorf("documents hashed with no faults set")
	}

	bad := []struct{ name, value string }{
		{name: "unknown kind", value: "explode=" + doc3},
		{name: "no key", value: "crash="},
		{name: "no equals", value: "crash"},
		{name: "a source ID for a key", value: "crash=R-1"},
		{name: "key too short", value: "crash=3333333"},
		{name: "key in upper case", value: "crash=3333333A"},
		{name: "key longer than a hash", value: "crash=" + strings.Repeat("3", 65)},
		{name: "transient without count", value: "transient=" + doc3},
		{name: "bad duration", value: "slowabit=" + doc3},
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
