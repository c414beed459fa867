package ocr

import (
	"image"
	"testing"

	"github.com/otiai10/gosseract/v2"
)

// TestCoverageCredibleWordsOnly: words over a line of print cover its ink
// only when their confidence is credible. Junk read into a line (a hand
// Tesseract cannot read, print under heavy noise) leaves it unread.
func TestCoverageCredibleWordsOnly(t *testing.T) {
	const dpi = 150
	page := drawPage(t, []block{{lines: coverBody[:2], pt: 11, grey: 0, x: 1, y: 0.5, leadPt: 16}}, 8.5, 1.5, dpi)
	img := newGrayImage(page.Bounds().Dx(), page.Bounds().Dy())
	copy(img.pix, page.Pix)
	// One word box per line, over the whole line.
	line := func(i int, conf float64) Word {
		lead := 16.0 * dpi / 72
		top := int(0.5*dpi + float64(i)*lead + lead*0.2)
		return Word{Text: "junk", Conf: conf, Box: [4]int{dpi - 5, top, img.w - 5, top + int(lead)}}
	}
	for _, tt := range []struct {
		name       string
		words      []Word
		unreadLow  float64
		unreadHigh float64
	}{
		{"credible words cover the print", []Word{line(0, 92), line(1, 88)}, 0, 0.05},
		{"junk under the cut covers nothing", []Word{line(0, 20), line(1, 35)}, 0.95, 1},
		{"one line of each", []Word{line(0, 92), line(1, 15)}, 0.3, 0.7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := measureCoverage(img, dpi, 128, credibleWords(tt.words, 40))
			if c.textArea == 0 {
				t.Fatal("no print found")
			}
			if s := c.share(); s < tt.unreadLow || s > tt.unreadHigh {
				t.Errorf("unread share %.3f; want %.2f to %.2f", s, tt.unreadLow, tt.unreadHigh)
			}
		})
	}
}

func TestSamePlace(t *testing.T) {
	read := []Word{
		{Text: "Vatie", Conf: 17, Box: [4]int{100, 100, 200, 130}},
		{Text: "Unit", Conf: 90, Box: [4]int{300, 100, 360, 130}},
	}
	if got := samePlace([4]int{98, 99, 205, 131}, read); len(got) != 1 || got[0] != 0 {
		t.Errorf("over the first word: %v; want [0]", got)
	}
	if got := samePlace([4]int{500, 100, 560, 130}, read); len(got) != 0 {
		t.Errorf("beside both: %v; want none", got)
	}
}

func TestRepeats(t *testing.T) {
	read := []Word{
		{Text: "Reason", Conf: 95, Box: [4]int{100, 100, 200, 130}},
		{Text: "referral:", Conf: 93, Box: [4]int{260, 100, 380, 130}},
	}
	for _, tt := range []struct {
		name string
		text string
		box  [4]int
		want bool
	}{
		{"the same word at the same place", "Reason", [4]int{102, 98, 198, 131}, true},
		{"case and punctuation aside", "referral", [4]int{258, 101, 379, 129}, true},
		{"a part of the word read", "eason", [4]int{120, 100, 200, 130}, true},
		{"the same word elsewhere", "Reason", [4]int{100, 400, 200, 430}, false},
		{"another word at the same place", "Season", [4]int{100, 100, 200, 130}, false},
		{"the same word barely touching", "Reason", [4]int{195, 125, 295, 155}, false},
		{"no letters", "--", [4]int{100, 100, 200, 130}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := repeats(tt.text, tt.box, read) >= 0; got != tt.want {
				t.Errorf("repeats(%q, %v) = %v; want %v", tt.text, tt.box, got, tt.want)
			}
		})
	}
}

// TestMergeReadingJoinsLine: a recovered word that continues a line of
// the reading (print a stamp hid in its middle) joins that line where it
// lies; one on a line of its own goes before the first line below it.
func TestMergeReadingJoinsLine(t *testing.T) {
	bb := func(word string, x0, y0, x1, y1, block, line int) gosseract.BoundingBox {
		return gosseract.BoundingBox{Word: word, Confidence: 95, Box: image.Rect(x0, y0, x1, y1), BlockNum: block, LineNum: line}
	}
	page := []gosseract.BoundingBox{
		bb("Thank", 100, 100, 180, 130, 1, 1), bb("you", 190, 100, 240, 130, 1, 1), bb("has", 600, 100, 650, 130, 1, 1),
		bb("been", 100, 150, 170, 180, 1, 2), bb("stable.", 180, 150, 260, 180, 1, 2),
		bb("Page", 100, 400, 170, 430, 2, 1),
	}
	found := []gosseract.BoundingBox{
		bb("for", 260, 101, 300, 131, recoveredBlock+1, 1), bb("seeing", 310, 99, 400, 131, recoveredBlock+1, 1),
		bb("Note:", 100, 300, 170, 330, recoveredBlock+2, 1),
	}
	_, text, _ := assemble(mergeReading(page, found))
	want := "Thank you for seeing has\nbeen stable.\n\nNote:\n\nPage"
	if text != want {
		t.Errorf("merged text:\n%s\nwant:\n%s", text, want)
	}
}
