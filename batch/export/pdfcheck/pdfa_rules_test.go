package pdfcheck

import (
	"strings"
	"testing"
)

// TestStreamFraming: a stream's data begins after the keyword stream and
// CR LF or LF, and Length bytes later come an end of line (CR LF or LF)
// and endstream; each way of breaking that is named, and a Length or a
// start outside the file is not read past it.
func TestStreamFraming(t *testing.T) {
	t.Parallel()
	const head = "1 0 obj\n<< >>\n"
	for _, tc := range []struct {
		name         string
		pdf          string
		data, length int64 // data -1: just after the first "stream" and its end of line
		want         string
	}{
		{"LF and LF", head + "stream\nabc\nendstream", -1, 3, ""},
		{"CR LF and CR LF", head + "stream\r\nabc\r\nendstream", -1, 3, ""},
		{"empty data", head + "stream\n\nendstream", -1, 0, ""},
		{"CR after stream", head + "stream\rabc\nendstream", int64(len(head) + 7), 3, "not followed by CR LF or LF"},
		{"CR before endstream", head + "stream\nabc\rendstream", -1, 3, "CR alone"},
		{"nothing before endstream", head + "stream\nabcendstream", -1, 3, "no end of line"},
		{"Length short", head + "stream\nabc\nendstream", -1, 2, "Length does not end its data"},
		{"Length long", head + "stream\nabc\nendstream", -1, 5, "Length does not end its data"},
		{"Length to the end of the file", head + "stream\nabc", -1, 3, "Length does not end its data"},
		{"Length past the end", head + "stream\nabc\nendstream", -1, 100, "runs past the end"},
		{"Length negative", head + "stream\nabc\nendstream", -1, -1, "runs past the end"},
		{"data at the file's end", "stream\n", 7, 0, "Length does not end its data"},
		{"data at byte 1", "stream\nabc\nendstream", 1, 0, "not followed by CR LF or LF"},
		{"data at byte 0", "stream\nabc\nendstream", 0, 3, "outside the file"},
		{"data past the end", "stream\n", 8, 0, "outside the file"},
	} {
		data := tc.data
		if data < 0 {
			i := strings.Index(tc.pdf, "stream")
			data = int64(i + len("stream\n"))
			if tc.pdf[i+len("stream")] == '\r' {
				data++
			}
		}
		got := StreamFraming([]byte(tc.pdf), data, tc.length)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: StreamFraming(data %d, length %d) = %q, want %q", tc.name, data, tc.length, got, tc.want)
		}
	}
}

// TestPDFAColourSpaces: a device colour space goes with an output intent
// of its own kind, and DeviceGray with any; DeviceCMYK set by a content
// stream is fine under a CMYK intent.
func TestPDFAColourSpaces(t *testing.T) {
	t.Parallel()
	withImage := func(m *minimalPDF, cs string) {
		m.objs[12] = stream("/Type /XObject /Subtype /Image /Width 1 /Height 1 /BitsPerComponent 8 /ColorSpace "+cs, "\x80\x80\x80\x80")
		m.objs[3] = strings.Replace(m.objs[3], "/Resources << ", "/Resources << /XObject << /Im1 12 0 R >> ", 1)
	}
	intent := func(m *minimalPDF, space string, n int) {
		m.objs[7] = stream("/N "+string(rune('0'+n)), iccHeader(space))
	}
	for _, tc := range []struct {
		name string
		edit func(m *minimalPDF)
		want string // "" when the file passes
	}{
		{"DeviceCMYK image under a CMYK intent", func(m *minimalPDF) { intent(m, "CMYK", 4); withImage(m, "/DeviceCMYK") }, ""},
		{"CMYK operator under a CMYK intent", func(m *minimalPDF) {
			intent(m, "CMYK", 4)
			m.objs[4] = stream("", "0 0 0 1 k BT /F1 12 Tf 10 10 Td (a) Tj ET")
		}, ""},
		{"DeviceGray image under an RGB intent", func(m *minimalPDF) { withImage(m, "/DeviceGray") }, ""},
		{"DeviceRGB image under a grey intent", func(m *minimalPDF) { intent(m, "GRAY", 1); withImage(m, "/DeviceRGB") },
			"6.2.4.3: DeviceRGB as an image's colour space under an output intent that is not RGB"},
		{"DeviceRGB image under a CMYK intent", func(m *minimalPDF) { intent(m, "CMYK", 4); withImage(m, "/DeviceRGB") },
			"6.2.4.3: DeviceRGB as an image's colour space"},
		{"Separation of three entries", func(m *minimalPDF) { withImage(m, "[/Separation /Spot /DeviceCMYK]") },
			"6.2.4.3: DeviceCMYK as a Separation colour space's alternate"},
		{"Indexed of two entries", func(m *minimalPDF) { withImage(m, "[/Indexed /DeviceCMYK]") }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMinimalPDF(t)
			tc.edit(m)
			p := PDFA(m.bytes())
			if tc.want == "" && len(p) > 0 || tc.want != "" && (len(p) != 1 || !strings.Contains(p[0], tc.want)) {
				t.Errorf("PDFA: %q, want %q", p, tc.want)
			}
		})
	}
}

// TestPDFAButtonAppearance: a check box's or radio button's widget may
// hold a dictionary of appearance states, its field type its own or its
// parent's.
func TestPDFAButtonAppearance(t *testing.T) {
	t.Parallel()
	for _, widget := range []string{
		"<< /Type /Annot /Subtype /Widget /FT /Btn /Rect [0 0 10 10] /F 4 /AP << /N << /On 13 0 R /Off 13 0 R >> >> >>",
		"<< /Type /Annot /Subtype /Widget /Parent << /FT /Btn >> /Rect [0 0 10 10] /F 4 /AP << /N << /On 13 0 R >> >> >>",
	} {
		m := newMinimalPDF(t)
		m.objs[12] = widget
		m.objs[13] = stream("/Type /XObject /Subtype /Form /BBox [0 0 10 10]", "")
		m.addToPage("/Annots [12 0 R]")
		if p := PDFA(m.bytes()); len(p) > 0 {
			t.Errorf("%s: %q", widget, p)
		}
	}
}
