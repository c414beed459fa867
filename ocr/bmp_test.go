package ocr

import (
	"bytes"
	"image"
	"slices"
	"strconv"
	"testing"

	"github.com/otiai10/gosseract/v2"
	"github.com/refbatch/refbatch/ocr/page"
	"golang.org/x/image/bmp"
)

// TestBMPKeepsThePixels: the BMP a page goes to Tesseract in decodes to
// the page's own pixels, rows padded and bottom-up as the format wants
// (a width of 5 needs padding), and marks the resolution.
func TestBMPKeepsThePixels(t *testing.T) {
	g := newGrayImage(5, 3)
	for i := range g.pix {
		g.pix[i] = byte(i * 17)
	}
	b := g.bmp(300, make([]byte, 10))
	img, err := bmp.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if img.Bounds() != image.Rect(0, 0, 5, 3) {
		t.Fatalf("bounds %v, want 5×3", img.Bounds())
	}
	for y := range 3 {
		for x := range 5 {
			r, _, _, _ := img.At(x, y).RGBA()
			if want := g.pix[y*5+x]; byte(r>>8) != want {
				t.Fatalf("pixel (%d,%d) = %d, want %d", x, y, r>>8, want)
			}
		}
	}
	if ppm := uint32(b[38]) | uint32(b[39])<<8 | uint32(b[40])<<16 | uint32(b[41])<<24; ppm != 11811 {
		t.Errorf("resolution %d pixels a metre, want 11811 (300 dpi)", ppm)
	}
}

// TestBMPReadsAsPGM: Tesseract reads the same words, with the same boxes
// and confidences, from a page handed over as a BMP (how refbatch hands
// it) and as a PGM (how it did before).
func TestBMPReadsAsPGM(t *testing.T) {
	src := textPage(t, []string{"Referral for Jane Doe, seen on 3 March.", "Please review the enclosed results."}, 4, 1.5, 150)
	g := newGrayImage(src.Rect.Dx(), src.Rect.Dy())
	for y := range g.h {
		copy(g.pix[y*g.w:(y+1)*g.w], src.Pix[y*src.Stride:])
	}
	e := inProcessEngine(t, childConfig{Policy: page.Default()})
	read := func(img []byte) []gosseract.BoundingBox {
		t.Helper()
		if err := e.tess.SetImageFromBytes(img); err != nil {
			t.Fatal(err)
		}
		if err := e.tess.SetVariable("user_defined_dpi", strconv.Itoa(150)); err != nil {
			t.Fatal(err)
		}
		boxes, err := e.tess.GetBoundingBoxesVerbose()
		if err != nil {
			t.Fatal(err)
		}
		return boxes
	}
	viaBMP := read(g.bmp(150, nil))
	viaPGM := read(g.pgm())
	if len(viaBMP) == 0 || !slices.Equal(viaBMP, viaPGM) {
		t.Errorf("BMP read %d words, PGM %d; they differ:\n%v\n%v", len(viaBMP), len(viaPGM), viaBMP, viaPGM)
	}
}
