package ocr

import (
	"fmt"
	"image"
	"math/rand/v2"
	"testing"
)

// blurSpeck degrades img as a poor scan does: passes of a 3×3 box blur,
// then noise of up to ±noise grey levels (the same for the same seed).
func blurSpeck(img *image.Gray, passes, noise int, seed uint64) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	for range passes {
		src := append([]uint8(nil), img.Pix...)
		for y := 1; y < h-1; y++ {
			for x := 1; x < w-1; x++ {
				s := 0
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						s += int(src[(y+dy)*img.Stride+x+dx])
					}
				}
				img.Pix[y*img.Stride+x] = uint8(s / 9)
			}
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range img.Pix {
		img.Pix[i] = uint8(min(255, max(0, int(img.Pix[i])+r.IntN(2*noise+1)-noise)))
	}
}

// TestHandwritingCapitalsDegraded: on a degraded page (blurred and
// specked, half its print not read credibly, so it does not read
// cleanly), a note written in capitals (Humor Sans, each word at its own
// size and baseline), larger than the print and unread, is a handwritten
// region, while a printed heading in capitals larger than the print and
// unread, and a stamp, are not. At 200 dpi, one blur, the note's lines
// are both capitals of one height, and were taken for print. No
// Tesseract: the print's words are given as read.
func TestHandwritingCapitalsDegraded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ dpi, passes int }{{100, 1}, {200, 1}, {200, 2}, {300, 2}} {
		t.Run(fmt.Sprintf("%d dpi, %d blurs", tc.dpi, tc.passes), func(t *testing.T) {
			t.Parallel()
			dpi := tc.dpi
			img := drawPage(t, []block{
				{lines: []string{"REFERRAL FOR SPECIALIST OPINION"}, pt: 18, grey: 0, x: 1, y: 0.3, leadPt: 18},
				{lines: coverBody, pt: 11, grey: 0, x: 1, y: 0.8, leadPt: 16},
				{lines: coverBody, pt: 11, grey: 0, x: 1, y: 2.4, leadPt: 16},
				{lines: []string{"RECEIVED 15 JUL 2024"}, pt: 40, grey: 60, x: 1.5, y: 4, leadPt: 40},
			}, 8.5, 8, dpi)
			heading := [4]int{dpi, dpi / 5, 8 * dpi, dpi * 3 / 4}
			stamp := [4]int{dpi * 3 / 2, 4 * dpi, 8 * dpi, dpi * 47 / 10}
			note := writeByHand(t, img, "/usr/share/fonts/truetype/humor-sans/Humor-Sans.ttf", 24, 1, 5.8, dpi, 40,
				[]string{"INTERPRETER NEEDED (POLISH)", "PLEASE BOOK DOUBLE SLOT"})
			blurSpeck(img, tc.passes*dpi/100, 40, 7)
			var words []Word // the first block's lines only
			for i := range coverBody {
				top := int((0.8 + float64(i)*16/72) * float64(dpi))
				words = append(words, Word{Text: "print", Conf: 95, Box: [4]int{dpi, top + 8*dpi/100, dpi * 15 / 2, top + 27*dpi/100}})
			}
			look := lookForHands(toGray(img), dpi)
			regions := look.findHandwriting(words)
			if look.clean {
				t.Fatal("the page reads cleanly: the test needs one that does not")
			}
			overlaps := func(a, b [4]int) bool { return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3] }
			found := false
			for _, r := range regions {
				switch {
				case overlaps(r.box, heading) && r.kind == KindNote:
					t.Errorf("the printed heading %v is a note %v", heading, r.box)
				case overlaps(r.box, stamp) && r.kind == KindNote:
					t.Errorf("the stamp %v is a note %v", stamp, r.box)
				case overlaps(r.box, note):
					found = found || r.kind == KindNote
				}
			}
			if !found {
				t.Errorf("the note in capitals %v is not a handwritten region (regions %v)", note, regions)
			}
		})
	}
}
