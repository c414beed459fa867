package ocr

import (
	"testing"
)

// TestCapitalsNoteOverSignature: on a page of print read credibly, a
// note of three rows in even, level capitals (Humor Sans, larger than the
// print), with a signature's tall strokes in the same pen just under it,
// is a note, and the signature a region of its own that is no note. The
// note's rows are not print whose reading is in question: counted, they
// made the page read as degraded, where level capitals are print. At
// 100 dpi, with no Tesseract: the print's words are given as read.
func TestCapitalsNoteOverSignature(t *testing.T) {
	t.Parallel()
	const dpi = 100
	img := drawPage(t, []block{
		{lines: coverBody, pt: 11, grey: 0, x: 1, y: 0.8, leadPt: 16},
		{lines: coverBody, pt: 11, grey: 0, x: 1, y: 2.2, leadPt: 16},
	}, 8.5, 8, dpi)
	note := writeHand(t, img, "/usr/share/fonts/truetype/humor-sans/Humor-Sans.ttf", 18, 1, 3.9, dpi, 40,
		[]string{"INTERPRETER NEEDED POLISH", "PLEASE BOOK A DOUBLE SLOT", "AND A QUIET ROOM"}, false)
	sig := loops(img, 1.2, float64(note[3])/dpi+0.08, 1.4, 0.7, dpi)
	var words []Word
	for _, y := range []float64{0.8, 2.2} {
		for i := range coverBody {
			top := int((y + float64(i)*16/72) * dpi)
			words = append(words, Word{Text: "print", Conf: 95, Box: [4]int{dpi, top + 10, dpi * 15 / 2, top + 26}})
		}
	}
	look := lookForHands(toGray(img), dpi)
	regions := look.findHandwriting(words)
	overlaps := func(a, b [4]int) bool { return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3] }
	found := false
	for _, r := range regions {
		switch {
		case overlaps(r.box, note) && overlaps(r.box, sig):
			t.Errorf("the note %v and the signature %v are one region %v (%s)", note, sig, r.box, r.kind)
		case overlaps(r.box, note) && r.kind == KindNote:
			found = true
		case overlaps(r.box, sig) && r.kind == KindNote:
			t.Errorf("the signature %v is a note %v", sig, r.box)
		}
	}
	if !found {
		t.Errorf("the note in capitals %v is not a note (regions %v)", note, regions)
	}
}

// TestCrossedOutIsNoNote: a line of ink left unread, most of it under the
// strokes of another ink (a red line through a printed heading), is no
// note: the words under the stroke are crossed out, not a hand's; the
// same line with no stroke of another ink across it is one.
func TestCrossedOutIsNoNote(t *testing.T) {
	const w, h, dpi = 400, 60, 100
	look := &handLook{f: 1, wdpi: dpi, small: &grayImage{w: w, h: h}, mask: make([]byte, w*h)}
	var black handLine
	black.ink = 1
	for i := range 12 { // twelve letters of a heading, 2.8 inches long
		b := [4]int{20 + 30*i, 20, 40 + 30*i, 40}
		black.comps, black.inks = append(black.comps, b), append(black.inks, 100)
	}
	black.box = [4]int{20, 20, 370, 40}
	red := handLine{ink: 2, box: [4]int{15, 28, 320, 32}, comps: [][4]int{{15, 28, 320, 32}}, inks: []int{500}}
	regions := []handRegion{
		{box: black.box, lines: []handLine{black}, feats: []handFeatures{{}}},
		{box: red.box, lines: []handLine{red}, feats: []handFeatures{{}}},
	}
	cover := make([]byte, w*h) // nothing read
	if !look.note(regions[0], cover, nil) {
		t.Fatal("twelve unread letters with nothing across them are no note")
	}
	crossed := crossing(regions, 0)
	if len(crossed) != 1 || crossed[0] != red.comps[0] {
		t.Fatalf("crossing(black) = %v, want the red stroke alone", crossed)
	}
	if got := crossing(regions, 1); len(got) != 12 {
		t.Errorf("crossing(red) = %d strokes, want the black line's 12", len(got))
	}
	if look.note(regions[0], cover, crossed) {
		t.Error("a heading crossed out in red, two letters left clear of the stroke, is a note")
	}
}
