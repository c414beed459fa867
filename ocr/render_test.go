package ocr

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gen2brain/go-fitz"
)

// TestRenderGrayIsImageDPI checks that renderGray reaches go-fitz's MuPDF
// handles, so that a go-fitz release that renames them fails here
// rather than quietly giving the worker back its larger heap, and that
// its pixels and histogram are the ones ImageDPI and fromRGBA give, on
// every page of the sample corpus and a quarter of the eval corpus, at
// two resolutions.
func TestRenderGrayIsImageDPI(t *testing.T) {
	if !fitzHandles.ok {
		t.Fatal("go-fitz's Document has no ctx and doc fields: renderGray falls back to ImageDPI")
	}
	var pdfs []string
	for _, dir := range []string{"../testdata/sample/docs", "../testdata/eval/docs"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		for i, name := range m {
			if dir == "../testdata/sample/docs" || i%4 == 0 {
				pdfs = append(pdfs, name)
			}
		}
	}
	if len(pdfs) == 0 {
		t.Fatal("no corpus documents")
	}
	pages := 0
	var got, want grayImage
	var gotHue, wantHue huePlane
	var mem pixmapMemory
	defer mem.free()
	for i, name := range pdfs {
		doc, err := fitz.New(name)
		if err != nil {
			continue // the corpora's broken documents
		}
		dpi := []int{50, 72}[i%2]
		for p := range doc.NumPage() {
			img, err := doc.ImageDPI(p, float64(dpi))
			if err != nil {
				t.Fatalf("%s page %d: ImageDPI: %v", name, p+1, err)
			}
			wantHist := want.fromRGBAHue(img, &wantHue)
			// Every other page in the kept memory, the others in
			// MuPDF's own.
			m := &mem
			if pages%2 == 1 {
				m = nil
			}
			gotHist, err := renderGray(doc, p, dpi, &got, &gotHue, m)
			if err != nil {
				t.Fatalf("%s page %d: renderGray: %v", name, p+1, err)
			}
			if !bytes.Equal(gotHue.pix, wantHue.pix) || gotHue.coloured != wantHue.coloured {
				t.Errorf("%s page %d at %d dpi: renderGray's hue plane is not fromRGBAHue's", filepath.Base(name), p+1, dpi)
			}
			if got.w != want.w || got.h != want.h || !bytes.Equal(got.pix, want.pix) || gotHist != wantHist {
				t.Errorf("%s page %d at %d dpi: renderGray gives %d×%d, ImageDPI %d×%d, pixels equal %v",
					filepath.Base(name), p+1, dpi, got.w, got.h, want.w, want.h, bytes.Equal(got.pix, want.pix))
			}
			pages++
		}
		doc.Close()
	}
	t.Logf("%d pages of %d documents identical", pages, len(pdfs))
	if _, err := renderGray(mustOpen(t, pdfs[len(pdfs)-1]), 9999, 72, &got, nil, &mem); err == nil {
		t.Error("renderGray of a page past the end gave no error")
	}
}

func mustOpen(t *testing.T, name string) *fitz.Document {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := fitz.NewFromMemory(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { doc.Close() })
	return doc
}
