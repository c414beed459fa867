package pdfcheck

import (
	"fmt"
	"strings"
	"testing"
)

// TestPDFAHeader: the header is %PDF-1.0 to %PDF-1.7 at byte 0, one end
// of line (LF, CR LF or CR), then a comment whose first four bytes are
// all above 127.
func TestPDFAHeader(t *testing.T) {
	t.Parallel()
	const bin = "%\xe2\xe3\xcf\xd3"
	for _, tc := range []struct {
		head string
		ok   bool
	}{
		{"%PDF-1.7\n" + bin + "\n", true},
		{"%PDF-1.0\r\n" + bin + "\n", true},
		{"%PDF-1.4\r" + bin + "\n", true},
		{"%PDF-1.7\n" + bin, true},              // the comment is the file's end
		{"%PDF-1.7\n%\x80\x80\x80\x80\n", true}, // 128 is above 127
		{"%PDF-1.8\n" + bin + "\n", false},
		{"%PDF-1/\n" + bin + "\n", false},
		{"%PDX-1.7\n" + bin + "\n", false},
		{"%PDF-2.0\n" + bin + "\n", false},
		{"%PDF-1.7 " + bin + "\n", false},
		{"%PDF-1.7\n#\xe2\xe3\xcf\xd3\n", false},
		{"%PDF-1.7\n%\xe2\xe3\xcf\x7f\n", false},
		{"%PDF-1.7\n%\xe2\xe3\xcf", false},
		{"%PDF-1.7\n", false},
		{"%PDF-1.7", false},
		{"%PDF", false},
		{"", false},
	} {
		if got := header([]byte(tc.head)); got != tc.ok {
			t.Errorf("header(%q) = %v, want %v", tc.head, got, tc.ok)
		}
	}
}

// TestSameInstant: an Info date and an XMP date agree when they name the
// same instant, whatever their zones, or are both absent.
func TestSameInstant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pdf, xmp string
		same     bool
	}{
		{"", "", true},
		{"D:20261201103000Z", "2026-12-01T10:30:00Z", true},
		{"D:20261201113000+01'00'", "2026-12-01T10:30:00Z", true},
		{"D:20261201103000Z", "2026-12-01T10:30:01Z", false},
		{"D:20261201103000Z", "", false},
		{"", "2026-12-01T10:30:00Z", false},
		{"not a date", "2026-12-01T10:30:00Z", false},
		{"D:20261201103000Z", "1 December 2026", false},
	} {
		if got := sameInstant(tc.pdf, tc.xmp); got != tc.same {
			t.Errorf("sameInstant(%q, %q) = %v, want %v", tc.pdf, tc.xmp, got, tc.same)
		}
	}
}

// iccHeader is the 128-byte header of an ICC profile of colour space
// space, all the checker reads of a profile.
func iccHeader(space string) string {
	b := make([]byte, 128)
	copy(b[16:], space)
	copy(b[36:], "acsp")
	return string(b)
}

// TestPDFAMoreClauses goes on with TestPDFAClauses's negative table: the
// Metadata stream and the output intent each broken one way, and DeviceCMYK
// set in a form XObject rather than a page.
func TestPDFAMoreClauses(t *testing.T) {
	t.Parallel()
	meta := func(dict string) func(m *minimalPDF) {
		return func(m *minimalPDF) { m.objs[5] = stream(dict, fmt.Sprintf(minimalXMP, "2")) }
	}
	intent := func(entries string) func(m *minimalPDF) {
		return func(m *minimalPDF) {
			m.objs[6] = "<< /Type /OutputIntent /OutputConditionIdentifier (sRGB) " + entries + " >>"
		}
	}
	for _, tc := range []struct {
		name, clause, want string
		edit               func(m *minimalPDF)
	}{
		{"Metadata a dictionary", "6.6.2.1", "not a stream", func(m *minimalPDF) { m.objs[5] = "<< /Type /Metadata /Subtype /XML >>" }},
		{"Metadata a free object", "6.6.2.1", "not a stream", func(m *minimalPDF) { delete(m.objs, 5) }},
		{"Metadata of another Type", "6.6.2.1", "not Type Metadata", meta("/Type /XMP /Subtype /XML")},
		{"Metadata without Type", "6.6.2.1", "not Type Metadata", meta("/Subtype /XML")},
		{"Metadata of another Subtype", "6.6.2.1", "not Type Metadata", meta("/Type /Metadata /Subtype /HTML")},
		{"Metadata without Subtype", "6.6.2.1", "not Type Metadata", meta("/Type /Metadata")},
		{"Info's date not in the XMP", "6.6.2.3", "CreationDate", func(m *minimalPDF) { m.objs[11] = "<< /Title (t) /CreationDate (D:20261201103000Z) >>" }},
		{"no output intent, a DeviceCMYK image", "6.2.3", "no OutputIntents", func(m *minimalPDF) {
			// Without a usable intent, 6.2.3 alone says why device colour fails.
			m.objs[1] = strings.Replace(m.objs[1], "/OutputIntents [6 0 R] ", "", 1)
			m.objs[12] = stream("/Type /XObject /Subtype /Image /Width 1 /Height 1 /BitsPerComponent 8 /ColorSpace /DeviceCMYK", "\x80\x80\x80\x80")
		}},
		{"output intent of another subtype", "6.2.3", "no GTS_PDFA1", intent("/S /GTS_PDFX /DestOutputProfile 7 0 R")},
		{"output intent without a profile", "6.2.3", "no readable DestOutputProfile", intent("/S /GTS_PDFA1")},
		{"profile a free object", "6.2.3", "no readable DestOutputProfile", func(m *minimalPDF) { delete(m.objs, 7) }},
		{"profile too short", "6.2.3", "not an ICC profile", func(m *minimalPDF) { m.objs[7] = stream("/N 3", "RGB acsp") }},
		{"profile without its signature", "6.2.3", "not an ICC profile", func(m *minimalPDF) {
			m.objs[7] = stream("/N 3", strings.Replace(iccHeader("RGB "), "acsp", "xxxx", 1)+strings.Repeat(" ", 100))
		}},
		{"grey profile's N", "6.2.3", "N is not 1", func(m *minimalPDF) { m.objs[7] = stream("/N 3", iccHeader("GRAY")) }},
		{"catalog additional actions", "6.5.2", "additional actions on a Catalog", func(m *minimalPDF) {
			m.objs[1] = strings.Replace(m.objs[1], "/Type /Catalog ", "/Type /Catalog /AA << >> ", 1)
		}},
		{"Movie annotation without Type", "6.3.1", "Movie", func(m *minimalPDF) {
			m.objs[12] = "<< /Subtype /Movie /Rect [0 0 10 10] /F 4 >>"
			m.addToPage("/Annots [12 0 R]")
		}},
		{"CMYK operator in a form XObject", "6.2.4.3", "object 12: 6.2.4.3: DeviceCMYK set by a content stream", func(m *minimalPDF) {
			m.objs[12] = stream("/Type /XObject /Subtype /Form /BBox [0 0 10 10]", "0 0 0 1 k")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { failsAlone(t, tc.edit, tc.clause, tc.want) })
	}
}

// TestPDFAPasses: files the checker must pass though they are not the
// minimal one: a grey output intent whose profile is a bare header (all
// the checker reads of it), matching dates in other zones, a page whose
// contents include an object that is not there, and a JavaScript action
// deeper in an object than the checker looks.
func TestPDFAPasses(t *testing.T) {
	t.Parallel()
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "<< /JS (x) >>" + strings.Repeat(close, n)
	}
	for _, tc := range []struct {
		name string
		edit func(m *minimalPDF)
	}{
		{"grey profile header", func(m *minimalPDF) { m.objs[7] = stream("/N 1", iccHeader("GRAY")) }},
		{"dates in two zones", func(m *minimalPDF) {
			m.objs[11] = "<< /Title (t) /CreationDate (D:20261201113000+01'00') >>"
			m.objs[5] = stream("/Type /Metadata /Subtype /XML", strings.Replace(fmt.Sprintf(minimalXMP, "2"), "</dc:title>",
				`</dc:title><xmp:CreateDate xmlns:xmp="http://ns.adobe.com/xap/1.0/">2026-12-01T10:30:00Z</xmp:CreateDate>`, 1))
		}},
		{"contents with a free object", func(m *minimalPDF) {
			m.objs[3] = strings.Replace(m.objs[3], "/Contents 4 0 R", "/Contents [4 0 R 12 0 R]", 1)
			m.objs[13] = "<< >>"
		}},
		{"Type 3 font", func(m *minimalPDF) {
			m.objs[12] = "<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1 1] /FontMatrix [1 0 0 1 0 0] /CharProcs << >> /Encoding << >> /FirstChar 97 /LastChar 97 /Widths [1] >>"
			m.objs[3] = strings.Replace(m.objs[3], "/F1 8 0 R", "/F1 8 0 R /F2 12 0 R", 1)
		}},
		{"Type 0 font with an embedded descendant", func(m *minimalPDF) {
			m.objs[12] = "<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /BaseFont /X /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 9 0 R >>] >>"
			m.objs[3] = strings.Replace(m.objs[3], "/F1 8 0 R", "/F1 8 0 R /F2 12 0 R", 1)
		}},
		{"form XObject without Type", func(m *minimalPDF) { m.objs[12] = stream("/Subtype /Form /BBox [0 0 10 10]", "") }},
		{"JavaScript 33 arrays deep", func(m *minimalPDF) { m.objs[12] = deep("[", "]", 33) }},
		{"JavaScript 33 dictionaries deep", func(m *minimalPDF) { m.objs[12] = deep("<< /A ", " >>", 33) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMinimalPDF(t)
			tc.edit(m)
			if p := PDFA(m.bytes()); len(p) > 0 {
				t.Errorf("fails: %q", p)
			}
		})
	}
	// The checker looks 32 levels into an object, and no further: an
	// object's own depth is 0.
	m := newMinimalPDF(t)
	m.objs[12] = deep("[", "]", 32)
	if p := PDFA(m.bytes()); len(p) != 1 || !strings.Contains(p[0], "6.5: JavaScript") {
		t.Errorf("JavaScript 32 arrays deep: %q, want 6.5 alone", p)
	}
}

// TestPDFAMalformedFonts: font dictionaries no writer should make are
// answered, not a panic: a font without Subtype, a Type 0 font whose
// DescendantFonts is empty or missing.
func TestPDFAMalformedFonts(t *testing.T) {
	t.Parallel()
	for _, font := range []string{
		"<< /Type /Font /BaseFont /Y >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /Y /Encoding /Identity-H /DescendantFonts [] >>",
		"<< /Type /Font /Subtype /Type0 /BaseFont /Y /Encoding /Identity-H >>",
	} {
		m := newMinimalPDF(t)
		m.objs[12] = font
		p := PDFA(m.bytes())
		t.Logf("%s: %q", font, p)
	}
}
