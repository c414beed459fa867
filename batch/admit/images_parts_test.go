package admit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/report/outcome"
)

// The parts checkImages judges a stream by, each on its own.

// TestOverCap: an image is over the cap only past it, and a size of
// nothing is no image.
func TestOverCap(t *testing.T) {
	t.Parallel()
	lim := DefaultLimits()
	lim.Page.MaxPagePixels = 1000
	for _, c := range []struct {
		w, h float64
		over bool
	}{
		{100, 10, false}, {1000, 1, false}, {101, 10, true}, {1001, 1, true},
		{0, 1e9, false}, {1e9, 0, false}, {-5, -1e9, false}, {1e9, -1, false},
	} {
		err := overCap(lim, "image object 5", c.w, c.h)
		if (err != nil) != c.over {
			t.Errorf("overCap(%g×%g) = %v; want over: %t", c.w, c.h, err, c.over)
		}
	}
	r, _ := IsRejection(overCap(lim, "image object 5", 2000, 1500))
	if want := "image object 5 is 2000×1500 px, 3 Mpx, over the 0.001 Mpx cap"; r == nil || r.Reason != outcome.PageTooLarge || r.Detail != want {
		t.Errorf("detail %+v; want page_too_large: %s", r, want)
	}
}

// TestCCITTSizes: a CCITT decoder allocates /Columns (1728 when absent)
// by /Rows, or by the image's height when /Rows is not positive.
func TestCCITTSizes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		parms  map[string]int
		height float64
		want   string
	}{
		{map[string]int{"Columns": 90, "Rows": 7}, 3, "90×7"},
		{map[string]int{}, 3, "1728×3"},
		{map[string]int{"Columns": 0, "Rows": 0}, 3, "0×3"},
		{map[string]int{"Rows": -2}, 0, "1728×1"},
		{map[string]int{"Rows": 1}, 50, "1728×1"},
		{nil, 0.5, "1728×1"},
	} {
		var got string
		_ = ccittSizes(c.parms, c.height, func(_ string, w, h int64) error {
			got = fmt.Sprintf("%d×%d", w, h)
			return nil
		})
		if got != c.want {
			t.Errorf("ccittSizes(%v, %g) = %s; want %s", c.parms, c.height, got, c.want)
		}
	}
}

// dict parses a PDF dictionary for the tests.
func dict(t *testing.T, s string) types.Dict {
	t.Helper()
	o, err := model.ParseObject(&s)
	d, ok := o.(types.Dict)
	if err != nil || !ok {
		t.Fatalf("%s: %v", s, err)
	}
	return d
}

// TestStreamKinds: which streams are images (by /Subtype, or /Width and
// /Height with none) and which may be drawn as content though nothing
// names them (all but data of a known kind).
func TestStreamKinds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dict         string
		file         bool
		image, drawn bool
	}{
		{"/Subtype /Image", false, true, false},
		{"/Width 1 /Height 1", false, true, false},
		{"/Width 1", false, false, true},
		{"/Height 1", false, false, true},
		{"/Subtype /Form /Width 1 /Height 1", false, false, true},
		{"/Subtype /Form", true, false, true},
		{"/PatternType 1", true, false, true},
		{"", true, false, false},
		{"", false, false, true},
		{"/Type /XRef", false, false, false},
		{"/Type /ObjStm", false, false, false},
		{"/Type /Metadata", false, false, false},
		{"/Type /EmbeddedFile", false, false, false},
		{"/Type /XObject", false, false, true},
		{"/Subtype /Type1C", false, false, false},
		{"/Subtype /CIDFontType0C", false, false, false},
		{"/Subtype /OpenType", false, false, false},
		{"/Subtype /XML", false, false, false},
		{"/Subtype /PS", false, false, false},
		{"/Subtype /Other", false, false, true},
		{"/Length1 5", false, false, false},
		{"/Length2 5", false, false, false},
		{"/Length3 5", false, false, false},
		{"/FunctionType 4", false, false, false},
		{"/N 3", false, false, false},
	} {
		d := dict(t, "<<"+c.dict+">>")
		if got := isImage(d); got != c.image {
			t.Errorf("isImage(%s) = %t; want %t", c.dict, got, c.image)
		}
		if c.image {
			continue
		}
		if got := mayBeContent(d, c.file); got != c.drawn {
			t.Errorf("mayBeContent(%s, file %t) = %t; want %t", c.dict, c.file, got, c.drawn)
		}
	}
}

// TestPredictorRow: a predictor's row in bytes, by its parameters and
// their defaults, and a row no image has for sizes past any.
func TestPredictorRow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		parms map[string]int
		want  int64
	}{
		{map[string]int{}, 1},
		{map[string]int{"Columns": 10}, 10},
		{map[string]int{"Columns": 10, "Colors": 3, "BitsPerComponent": 1}, 4},
		{map[string]int{"Columns": 9, "BitsPerComponent": 1}, 2},
		{map[string]int{"Columns": 8, "BitsPerComponent": 1}, 1},
		{map[string]int{"Columns": 0, "Colors": -1, "BitsPerComponent": 0}, 1},
		{map[string]int{"Columns": 1 << 40}, 1 << 40},
		{map[string]int{"Columns": 1<<40 + 1}, 1 << 62},
		{map[string]int{"Colors": 1 << 16, "BitsPerComponent": 256}, 1 << 21},
		{map[string]int{"Colors": 1<<16 + 1}, 1 << 62},
		{map[string]int{"BitsPerComponent": 257}, 1 << 62},
	} {
		if got := predictorRow(c.parms); got != c.want {
			t.Errorf("predictorRow(%v) = %d; want %d", c.parms, got, c.want)
		}
	}
}

// TestTextCount: the text of a file's streams may reach its cap, not pass it.
func TestTextCount(t *testing.T) {
	t.Parallel()
	c := &textCount{max: 3 << 20}
	if err := c.add(2<<20, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.add(1<<20, 3); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	err := c.add(1, 3)
	if r, ok := IsRejection(err); !ok || r.Detail != "its content streams show more than 3 MiB of text, more than 2 MiB a page over 3 pages: a text bomb" {
		t.Errorf("over the cap: %v", err)
	}
}

// TestFileTextCap: a file's streams may show maxStreamText a page on
// average, counting the streams no page draws.
func TestFileTextCap(t *testing.T) {
	t.Parallel()
	text := stream("", []byte("BT ("+strings.Repeat("a", 1536<<10)+") Tj ET"))
	doc := func(extra int) []byte {
		objs := []string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /MediaBox [0 0 612 792] /Resources << >> >>",
			"<< /Type /Page /Parent 2 0 R /Contents 5 0 R >>",
			"<< /Type /Page /Parent 2 0 R /Contents 6 0 R >>",
			text, text,
		}
		for range extra {
			objs = append(objs, text)
		}
		return buildPDF(objs, "")
	}
	if _, err := inspect(doc(0), DefaultLimits()); err != nil {
		t.Errorf("3 MiB of text over 2 pages: %v; want admitted", err)
	}
	_, err := inspect(doc(1), DefaultLimits())
	if r, ok := IsRejection(err); !ok || !strings.Contains(r.Detail, "its content streams show more than 4 MiB of text") {
		t.Errorf("4.5 MiB over 2 pages: %v; want a text bomb", err)
	}
}

// TestImageXObjectSizes: an image XObject is held to the cap by its
// dictionary's size whatever its filter, and the header of a JPEG stored
// as it is (its bytes in memory) is looked for to its end.
func TestImageXObjectSizes(t *testing.T) {
	t.Parallel()
	image := func(dict string, data []byte) []byte {
		return drawingPage("<< /XObject << /Im1 5 0 R >> >>", "q 612 0 0 792 0 0 cm /Im1 Do Q",
			stream("/Type /XObject /Subtype /Image /ColorSpace /DeviceGray /BitsPerComponent 8 "+dict, data))
	}
	// A 100×100 JPEG whose frame header comes after 2 MB of APP1
	// segments.
	jpeg := []byte{0xff, 0xd8}
	for n := 0; n < 2_000_000; n += 65533 {
		jpeg = append(jpeg, 0xff, 0xe1, 0xff, 0xff)
		jpeg = append(jpeg, make([]byte, 65533)...)
	}
	jpeg = append(jpeg, 0xff, 0xc0, 0, 11, 8, 0, 100, 0, 100, 1, 1, 0x11, 0, 0xff, 0xd9)
	for _, c := range []struct {
		name string
		pdf  []byte
		want string
	}{
		{"flate, too large", image("/Width 90000 /Height 90000 /Filter /FlateDecode", deflate(nil)), "page_too_large: image object 5 is 90000×90000 px"},
		{"unfiltered, too large", image("/Width 90000 /Height 90000", nil), "page_too_large: image object 5 is 90000×90000 px"},
		{"a JPEG's frame after 2 MB, unfiltered", image("/Width 100 /Height 100 /Filter /DCTDecode", jpeg), ""},
	} {
		_, err := inspect(c.pdf, DefaultLimits())
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v; want …%s…", c.name, err, c.want)
		}
	}
}

// TestDrawnThroughDictionaries: a stream an annotation's appearance
// names through a dictionary of states is drawn, and so checked, even
// dressed as an image.
func TestDrawnThroughDictionaries(t *testing.T) {
	t.Parallel()
	pdf := buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 4 0 R /Annots [5 0 R] >>",
		stream("", nil),
		"<< /Type /Annot /Subtype /Widget /Rect [0 0 10 10] /AS /On /AP << /N << /On 6 0 R >> >> >>",
		stream("/Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8", []byte("BI /W 9000 /H 9000 /CS /G ID \x00 EI")),
	}, "")
	_, err := inspect(pdf, DefaultLimits())
	if err == nil || !strings.Contains(err.Error(), "page_too_large: stream object 6: an inline image is 9000×9000 px") {
		t.Errorf("got %v; want the appearance's inline image page_too_large", err)
	}
}
