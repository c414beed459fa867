package ocr

import (
	"image"
	"image/color"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// handFont is Dancing Script (fonts-dancingscript), a joined hand; tests
// that need it skip without it.
const handFont = "/usr/share/fonts/opentype/dancingscript/DancingScript-Regular.otf"

// writeByHand writes lines on img in the hand of font file at pt, from
// (x, y) inches, each word on its own baseline and at its own size, as a
// hand does, in ink of gray level ink. It returns the note's box.
func writeByHand(t *testing.T, img *image.Gray, file string, pt, x, y float64, dpi int, ink uint8, lines []string) [4]int {
	t.Helper()
	return writeHand(t, img, file, pt, x, y, dpi, ink, lines, true)
}

// writeHand is writeByHand, each word on its own baseline and at its own
// size only when wander is set: else the lines are level and even, as a
// careful hand's capitals can be.
func writeHand(t *testing.T, img *image.Gray, file string, pt, x, y float64, dpi int, ink uint8, lines []string, wander bool) [4]int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Skipf("handwriting font absent (%v): install fonts-dancingscript", err)
	}
	f, err := opentype.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	box := [4]int{math.MaxInt, math.MaxInt, 0, 0}
	for i, line := range lines {
		dx := int(x * float64(dpi))
		for k, w := range strings.Fields(line) {
			size := pt
			if wander {
				size *= 0.9 + 0.2*float64((k*7+i*3)%5)/4
			}
			face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: float64(dpi)})
			if err != nil {
				t.Fatal(err)
			}
			base := int((y + float64(i)*pt*1.3/72) * float64(dpi))
			if wander {
				base += []int{0, 3, -2, 4, -3}[k%5] * dpi / 100
			}
			d := font.Drawer{Dst: img, Src: image.NewUniform(color.Gray{Y: ink}), Face: face, Dot: fixed.P(dx, base)}
			b, adv := d.BoundString(w)
			d.DrawString(w)
			box = [4]int{min(box[0], b.Min.X.Floor()), min(box[1], b.Min.Y.Floor()), max(box[2], b.Max.X.Ceil()), max(box[3], b.Max.Y.Ceil())}
			dx += adv.Ceil() + int(pt*0.3*float64(dpi)/72)
			face.Close()
		}
	}
	return box
}

// scrawl draws a signature: a short curve with loops, about an inch wide.
func scrawl(img *image.Gray, x, y float64, dpi int) [4]int { return loops(img, x, y, 1.1, 0.35, dpi) }

// loops draws a pen's curve with loops, w by h inches, from (x, y)
// inches.
func loops(img *image.Gray, x, y, wIn, hIn float64, dpi int) [4]int {
	x0, y0 := x*float64(dpi), y*float64(dpi)
	w, h := wIn*float64(dpi), hIn*float64(dpi)
	pen := max(1, dpi/120)
	for s := 0.0; s <= 1; s += 0.0005 {
		px := x0 + w*s + 0.08*w*math.Sin(s*40)
		py := y0 + h/2 + h/2*math.Sin(s*25)*math.Cos(s*7)
		for dy := -pen; dy <= pen; dy++ {
			for dx := -pen; dx <= pen; dx++ {
				img.SetGray(int(px)+dx, int(py)+dy, color.Gray{Y: 20})
			}
		}
	}
	return [4]int{int(x0 - 0.1*w), int(y0), int(x0 + 1.1*w), int(y0 + h)}
}

// TestFindHandwriting: on a page of print read credibly, a joined note
// of two lines is a note, not read; a signature is no note; the print is
// no region. At 100 dpi, with no
// Tesseract: the print's words are given as read.
func TestFindHandwriting(t *testing.T) {
	t.Parallel()
	const dpi = 100
	img := drawPage(t, []block{{lines: coverBody, pt: 11, grey: 0, x: 1, y: 0.8, leadPt: 16}}, 8.5, 6, dpi)
	note := writeByHand(t, img, handFont, 20, 1, 2.6, dpi, 40, []string{"Patient takes warfarin,", "check INR before any biopsy"})
	sig := scrawl(img, 2, 4.6, dpi)
	// The print, read credibly: a word box per line, as wide as the line.
	var words []Word
	for i := range coverBody {
		top := int((0.8 + float64(i)*16/72) * dpi)
		words = append(words, Word{Text: "print", Conf: 95, Box: [4]int{dpi, top + 2, dpi * 15 / 2, top + 16*dpi/72 + 4}})
	}
	look := lookForHands(toGray(img), dpi)
	regions := look.findHandwriting(words)
	overlaps := func(a, b [4]int) bool { return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3] }
	var found bool
	for _, r := range regions {
		switch {
		case overlaps(r.box, note):
			found = found || r.kind == KindNote
		case overlaps(r.box, sig):
			if r.kind == KindNote {
				t.Errorf("the signature %v is a note %v", sig, r.box)
			}
		default:
			t.Errorf("a handwritten region %v (%s) off the note %v", r.box, r.kind, note)
		}
	}
	if !found {
		t.Errorf("the note %v is not a handwritten region (regions %v)", note, regions)
	}
	// Read credibly once read again, the note is a region read; read
	// credibly at once, it is no region to send to review.
	mid := (note[1] + note[3]) / 2
	words = append(words, Word{Text: "note", Conf: 90, Box: [4]int{note[0], note[1], note[2], mid}},
		Word{Text: "note", Conf: 90, Box: [4]int{note[0], mid, note[2], note[3]}})
	for _, r := range look.verdicts(regions, words) {
		if !r.Read && r.IsNote() {
			t.Errorf("a note under credible words is a region not read: %+v", r)
		}
	}
	for _, r := range lookForHands(toGray(img), dpi).findHandwriting(words) {
		if r.kind == KindNote {
			t.Errorf("a note read credibly is a region: %v", r.box)
		}
	}
}

// BenchmarkFindHandwriting: the handwriting step's look at a US Letter
// page of print at 300 dpi, where it finds nothing to read again (the
// cost every page pays; Tesseract takes 2–5 s on such a page).
func BenchmarkFindHandwriting(b *testing.B) {
	const dpi = 300
	img, body := printPage(b, dpi)
	var words []Word
	for i := range body {
		top := int((1 + float64(i)*16/72) * dpi)
		words = append(words, Word{Text: "print", Conf: 95, Box: [4]int{dpi, top + 4, dpi * 15 / 2, top + 16*dpi/72 + 8}})
	}
	for b.Loop() {
		if r := lookForHands(img, dpi).findHandwriting(words); len(r) > 0 {
			b.Fatalf("regions on print: %v", r)
		}
	}
}

// TestHandwritingStampAndCapitals: on a page of print read credibly, a
// stamp (capitals three times the print's size, all of one height) is no
// note, while a note written in capitals (Humor Sans, each
// word at its own size and baseline), larger than the print and not read,
// is one. At 100 dpi, with no Tesseract: the print's words are given as
// read.
func TestHandwritingStampAndCapitals(t *testing.T) {
	t.Parallel()
	const dpi = 100
	img := drawPage(t, []block{
		{lines: coverBody, pt: 11, grey: 0, x: 1, y: 0.8, leadPt: 16},
		{lines: coverBody, pt: 11, grey: 0, x: 1, y: 2.4, leadPt: 16},
		{lines: []string{"RECEIVED 15 JUL 2024"}, pt: 40, grey: 60, x: 1.5, y: 4, leadPt: 40},
	}, 8.5, 8, dpi)
	stamp := [4]int{int(1.5 * dpi), 4 * dpi, 8 * dpi, int(4.7 * dpi)}
	note := writeByHand(t, img, "/usr/share/fonts/truetype/humor-sans/Humor-Sans.ttf", 24, 1, 5.8, dpi, 40,
		[]string{"INTERPRETER NEEDED (POLISH)", "PLEASE BOOK DOUBLE SLOT"})
	var words []Word
	for _, y := range []float64{0.8, 2.4} {
		for i := range coverBody {
			top := int((y + float64(i)*16/72) * dpi)
			words = append(words, Word{Text: "print", Conf: 95, Box: [4]int{dpi, top + 8, dpi * 15 / 2, top + 27}})
		}
	}
	regions := lookForHands(toGray(img), dpi).findHandwriting(words)
	overlaps := func(a, b [4]int) bool { return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3] }
	found := false
	for _, r := range regions {
		switch {
		case overlaps(r.box, stamp) && r.kind == KindNote:
			t.Errorf("the stamp %v is a note %v", stamp, r.box)
		case overlaps(r.box, note):
			found = found || r.kind == KindNote
		}
	}
	if !found {
		t.Errorf("the note in capitals %v is not a handwritten region (regions %v)", note, regions)
	}
}

// printPage is a Letter page of body text at dpi, gray, and its lines:
// the page the coverage benchmarks look at.
func printPage(b testing.TB, dpi int) (*grayImage, []string) {
	var body []string
	for range 6 {
		body = append(body, coverBody...)
	}
	return toGray(drawPage(b, []block{{lines: body, pt: 11, grey: 0, x: 1, y: 1, leadPt: 16}}, 8.5, 11, dpi)), body
}

// TestVerdictsWordsRead: a note is read when four words in five are
// read right, as far as their confidences tell. Four words read at 95
// over the first 84% of each line are read beside one place of junk,
// which the page's reading and the line's reading again both left (it
// counts once: counted twice, it sent notes read at 80% to a person),
// and not beside two places. Read at 85, where a hand's words are right
// about two times in three, they are not read, even with no junk.
func TestVerdictsWordsRead(t *testing.T) {
	t.Parallel()
	const dpi = 100
	img := drawPage(t, []block{{lines: coverBody, pt: 11, grey: 0, x: 1, y: 0.8, leadPt: 16}}, 8.5, 6, dpi)
	note := writeByHand(t, img, handFont, 20, 1, 2.6, dpi, 40, []string{"Patient takes warfarin,", "check INR before any biopsy"})
	var words []Word
	for i := range coverBody {
		top := int((0.8 + float64(i)*16/72) * dpi)
		words = append(words, Word{Text: "print", Conf: 95, Box: [4]int{dpi, top + 2, dpi * 15 / 2, top + 16*dpi/72 + 4}})
	}
	look := lookForHands(toGray(img), dpi)
	var regions []handRegion
	for _, r := range look.findHandwriting(words) {
		if r.kind == KindNote {
			regions = append(regions, r)
		}
	}
	if len(regions) != 1 {
		t.Fatalf("want the note %v as one region, got %v", note, regions)
	}
	r := regions[0].box
	w, mid := r[2]-r[0], (r[1]+r[3])/2
	end := func(y0, y1 int) [4]int { return [4]int{r[0] + w*84/100, y0, r[2], y1} }
	for _, tc := range []struct {
		name string
		conf float64
		junk [][4]int
		want bool
	}{
		{"junk at one place, twice", 95, [][4]int{end(r[1], mid), end(r[1], mid)}, true},
		{"junk at two places", 95, [][4]int{end(r[1], mid), end(mid, r[3])}, false},
		{"words read at 85", 85, nil, false},
	} {
		read := slices.Clone(words)
		for _, y := range [][2]int{{r[1], mid}, {mid, r[3]}} {
			read = append(read, Word{Text: "word", Conf: tc.conf, Box: [4]int{r[0], y[0], r[0] + w*42/100, y[1]}},
				Word{Text: "word", Conf: tc.conf, Box: [4]int{r[0] + w*42/100, y[0], r[0] + w*84/100, y[1]}})
		}
		regions[0].junk = tc.junk
		if got := look.verdicts(regions, read)[0].Read; got != tc.want {
			t.Errorf("%s: read = %v, want %v", tc.name, got, tc.want)
		}
	}
}
