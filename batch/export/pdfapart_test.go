package export

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/export/pdfcheck"
	"github.com/refbatch/refbatch/ocr/result"
)

// TestKeepApartCuts: a word whose successor starts in its first quarter,
// or before it, and reaches past its end is cut apart from it: it ends
// rawSpace sizes before its successor starts, and both stay within their
// own boxes, each keeping at least minShare of its width.
func TestKeepApartCuts(t *testing.T) {
	const size = 10.0
	for _, tc := range []struct {
		name       string
		word, next [2]float64 // start, width
	}{
		{"a mark over the next word's start", [2]float64{100, 7}, [2]float64{100.5, 26}},
		{"the next starts where the word does", [2]float64{100, 20}, [2]float64{100, 40}},
		{"the next starts before the word", [2]float64{100, 20}, [2]float64{95, 40}},
		{"the next starts a little after", [2]float64{100, 20}, [2]float64{103, 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := []lineWord{{start: tc.word[0], width: tc.word[1]}, {start: tc.next[0], width: tc.next[1]}}
			keepApart(ws, size)
			w, n := ws[0], ws[1]
			if gap := n.start - (w.start + w.width); gap < rawSpace*size-1e-9 {
				t.Errorf("the words are %.3f apart, want at least %.3f (word %+v, next %+v)", gap, rawSpace*size, w, n)
			}
			for k, b := range [][2]float64{tc.word, tc.next} {
				got := ws[k]
				if got.start < b[0]-1e-9 || got.start+got.width > b[0]+b[1]+1e-9 || got.width < minShare*b[1]-1e-9 {
					t.Errorf("word %d from %.3f to %.3f, want within its box %.3f to %.3f, at least %.3f wide",
						k, got.start, got.start+got.width, b[0], b[0]+b[1], minShare*b[1])
				}
			}
		})
	}
}

// TestOverlappingWordsReadApart: words whose boxes touch or overlap
// (Tesseract's "re" over the start of "raised", "the" inside the box of
// a mark read after it) are read as two words by every reader there is
// on the machine, so that a search finds every phrase of the line;
// readers join words whose glyphs overlap, whatever space lies between.
func TestOverlappingWordsReadApart(t *testing.T) {
	t.Parallel()
	if _, err := glyphlessTTF(); err != nil {
		t.Skip(err)
	}
	word := func(text string, x0, y0, x1, y1 int) result.Word {
		return result.Word{Text: text, Conf: 90, Box: [4]int{x0, y0, x1, y1}}
	}
	src, pages := samplePages(t)
	pages[0].Text = "Blood pressure was re raised on two readings.\nseen on the mark today"
	pages[0].Words = []result.Word{
		word("Blood", 150, 300, 230, 330), word("pressure", 242, 300, 360, 338), word("was", 372, 308, 420, 330),
		word("re", 432, 295, 446, 340), word("raised", 433, 308, 490, 330), word("on", 500, 312, 520, 330),
		word("two", 530, 306, 565, 330), word("readings.", 575, 300, 700, 338),
		word("seen", 150, 406, 210, 430), word("on", 222, 412, 242, 430), word("the", 256, 400, 300, 430),
		word("mark", 252, 404, 340, 430), word("today", 352, 400, 430, 430),
	}
	out, _, err := SearchablePDF(src, pages, testProvenance(), PDFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	pdfjs := pdfcheck.PDFJSDir("../..")
	for _, reader := range pdfcheck.Readers {
		if why := pdfcheck.ReaderAvailable(reader, pdfjs); why != "" {
			t.Logf("%s: skipped, %s", reader, why)
			continue
		}
		texts, err := pdfcheck.Extract(context.Background(), reader, path, dir, pdfjs)
		if err != nil {
			t.Fatalf("%s: %v", reader, err)
		}
		f := pdfcheck.Measure(texts, pages, func(i int) bool { return i == 0 })
		if f.Phrases.Found != f.Phrases.Of {
			t.Errorf("%s finds %d of the %d phrases; it reads %q", reader, f.Phrases.Found, f.Phrases.Of,
				strings.Join(strings.Fields(texts[0]), " "))
		}
	}
}
