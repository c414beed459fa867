package pdfcheck

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// minimalPDF is a small PDF/A-2b file as objects, each a body (a stream's
// holding its keywords and data); the cases of TestPDFAClauses change
// one thing of it each.
type minimalPDF struct {
	header  string
	objs    map[int]string
	trailer string // the trailer's entries but Size
	tail    string // after the last %%EOF
	// packed are objects kept in one object stream, numbered after the
	// others, the cross-reference section then a stream.
	packed map[int]string
}

const minimalXMP = `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<pdfaid:part>%s</pdfaid:part><pdfaid:conformance>B</pdfaid:conformance>
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">t</rdf:li></rdf:Alt></dc:title>
</rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>`

func stream(dict, data string) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

func newMinimalPDF(t *testing.T) *minimalPDF {
	icc, err := os.ReadFile("../srgb.icc")
	if err != nil {
		t.Fatal(err)
	}
	return &minimalPDF{
		header: "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n",
		objs: map[int]string{
			1:  "<< /Type /Catalog /Pages 2 0 R /Metadata 5 0 R /OutputIntents [6 0 R] >>",
			2:  "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			3:  "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 8 0 R >> >> >>",
			4:  stream("", "BT /F1 12 Tf 10 10 Td (a) Tj ET"),
			5:  stream("/Type /Metadata /Subtype /XML", fmt.Sprintf(minimalXMP, "2")),
			6:  "<< /Type /OutputIntent /S /GTS_PDFA1 /OutputConditionIdentifier (sRGB) /DestOutputProfile 7 0 R >>",
			7:  stream("/N 3", string(icc)),
			8:  "<< /Type /Font /Subtype /TrueType /BaseFont /X /FirstChar 97 /LastChar 97 /Widths [500] /FontDescriptor 9 0 R >>",
			9:  "<< /Type /FontDescriptor /FontName /X /Flags 32 /FontBBox [0 0 500 700] /ItalicAngle 0 /Ascent 700 /Descent 0 /CapHeight 700 /StemV 80 /FontFile2 10 0 R >>",
			10: stream("", "a font program"),
			11: "<< /Title (t) >>",
		},
		trailer: "/Root 1 0 R /Info 11 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]",
		tail:    "\n",
	}
}

// bytes writes the file, with a cross-reference table that holds.
func (m *minimalPDF) bytes() []byte {
	var b bytes.Buffer
	b.WriteString(m.header)
	nums := slices.Sorted(maps.Keys(m.objs))
	size := nums[len(nums)-1] + 1
	offsets := make([]int, size)
	for _, n := range nums {
		offsets[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, m.objs[n])
	}
	if len(m.packed) > 0 {
		return m.packedBytes(&b, offsets)
	}
	at := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f\r\n", size)
	for n := 1; n < size; n++ {
		kind := 'n'
		if _, ok := m.objs[n]; !ok {
			kind = 'f'
		}
		fmt.Fprintf(&b, "%010d 00000 %c\r\n", offsets[n], kind)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d %s >>\nstartxref\n%d\n%%%%EOF%s", size, m.trailer, at, m.tail)
	return b.Bytes()
}

// packedBytes ends the file begun in b (objs written at offsets) with
// the object stream of m.packed and a cross-reference stream.
func (m *minimalPDF) packedBytes(b *bytes.Buffer, offsets []int) []byte {
	packed := slices.Sorted(maps.Keys(m.packed))
	stm := packed[len(packed)-1] + 1
	var head, body strings.Builder
	for _, n := range packed {
		fmt.Fprintf(&head, "%d %d ", n, body.Len())
		body.WriteString(m.packed[n] + "\n")
	}
	offsets = append(offsets, make([]int, stm+2-len(offsets))...)
	offsets[stm] = b.Len()
	fmt.Fprintf(b, "%d 0 obj\n%s\nendobj\n", stm, stream(fmt.Sprintf("/Type /ObjStm /N %d /First %d", len(packed), head.Len()), head.String()+body.String()))
	xref := stm + 1
	offsets[xref] = b.Len()
	var rows bytes.Buffer
	for n := range xref + 1 {
		row := []byte{1, 0, 0, 0, 0, 0, 0}
		switch {
		case n == 0:
			row[0] = 0
		case m.packed[n] != "":
			row[0], row[4], row[6] = 2, byte(stm), byte(slices.Index(packed, n))
		case m.objs[n] == "" && n != stm && n != xref:
			row[0] = 0
		default:
			row[1], row[2], row[3], row[4] = byte(offsets[n]>>24), byte(offsets[n]>>16), byte(offsets[n]>>8), byte(offsets[n])
		}
		rows.Write(row)
	}
	dict := fmt.Sprintf("/Type /XRef /Size %d /W [1 4 2] %s", xref+1, m.trailer)
	fmt.Fprintf(b, "%d 0 obj\n%s\nendobj\nstartxref\n%d\n%%%%EOF%s", xref, stream(dict, rows.String()), offsets[xref], m.tail)
	return b.Bytes()
}

// addToPage adds entries to the page dictionary.
func (m *minimalPDF) addToPage(entries string) {
	m.objs[3] = strings.Replace(m.objs[3], "/Type /Page ", "/Type /Page "+entries+" ", 1)
}

// TestPDFAClauses is the checker's negative table: the minimal file
// passes, and each clause the checker claims fails on a file that breaks
// it alone, with no other clause failing.
func TestPDFAClauses(t *testing.T) {
	t.Parallel()
	if p := PDFA(newMinimalPDF(t).bytes()); len(p) > 0 {
		t.Fatalf("the minimal PDF/A fails: %q", p)
	}
	annot := func(extra string) func(m *minimalPDF) {
		return func(m *minimalPDF) {
			m.objs[12] = "<< /Type /Annot /Subtype /Text /Rect [0 0 10 10] /F 4 " + extra + " >>"
			m.objs[13] = stream("/Type /XObject /Subtype /Form /BBox [0 0 10 10]", "")
			m.addToPage("/Annots [12 0 R]")
		}
	}
	image := func(dict string) func(m *minimalPDF) {
		return func(m *minimalPDF) {
			m.objs[12] = stream("/Type /XObject /Subtype /Image /Width 1 /Height 1 /BitsPerComponent 8 "+dict, "\x80\x80\x80")
			m.objs[3] = strings.Replace(m.objs[3], "/Resources << ", "/Resources << /XObject << /Im1 12 0 R >> ", 1)
		}
	}
	for _, tc := range []struct {
		name, clause, want string
		edit               func(m *minimalPDF)
	}{
		{"header without binary comment", "6.1.2", "header", func(m *minimalPDF) { m.header = "%PDF-1.7\n%abcd\n" }},
		{"data after %%EOF", "6.1.3", "after the last", func(m *minimalPDF) { m.tail = "\ngarbage" }},
		{"no ID", "6.1.3", "no ID", func(m *minimalPDF) { m.trailer = "/Root 1 0 R /Info 11 0 R" }},
		{"no Metadata", "6.6.2.1", "no Metadata", func(m *minimalPDF) {
			m.objs[1] = strings.Replace(m.objs[1], "/Metadata 5 0 R ", "", 1)
			delete(m.objs, 5)
		}},
		{"Metadata filtered", "6.6.2.1", "filtered", func(m *minimalPDF) {
			m.objs[5] = strings.Replace(m.objs[5], "/Subtype /XML", "/Subtype /XML /Filter /ASCIIHexDecode", 1)
		}},
		{"part 1", "6.6.4", "part", func(m *minimalPDF) { m.objs[5] = stream("/Type /Metadata /Subtype /XML", fmt.Sprintf(minimalXMP, "1")) }},
		{"Info and XMP differ", "6.6.2.3", "Title", func(m *minimalPDF) { m.objs[11] = "<< /Title (u) >>" }},
		{"no output intent", "6.2.3", "no OutputIntents", func(m *minimalPDF) { m.objs[1] = strings.Replace(m.objs[1], "/OutputIntents [6 0 R] ", "", 1) }},
		{"profile's N", "6.2.3", "N is not 3", func(m *minimalPDF) { m.objs[7] = strings.Replace(m.objs[7], "/N 3", "/N 4", 1) }},
		{"font not embedded", "6.2.11.4", "font is not embedded", func(m *minimalPDF) { m.objs[9] = strings.Replace(m.objs[9], " /FontFile2 10 0 R", "", 1) }},
		{"Type 0 descendant not embedded", "6.2.11.4", "descendant", func(m *minimalPDF) {
			m.objs[12] = "<< /Type /Font /Subtype /Type0 /BaseFont /Y /Encoding /Identity-H /DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Y /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>] >>"
			m.objs[3] = strings.Replace(m.objs[3], "/F1 8 0 R", "/F1 8 0 R /F2 12 0 R", 1)
		}},
		{"LZW stream", "6.1.7", "LZWDecode", func(m *minimalPDF) { m.objs[4] = strings.Replace(m.objs[4], "<< ", "<< /Filter /LZWDecode ", 1) }},
		{"external stream", "6.1.7", "has F", func(m *minimalPDF) { m.objs[4] = strings.Replace(m.objs[4], "<< ", "<< /F (x.bin) ", 1) }},
		{"no end of line before endstream", "6.1.7.1", "no end of line", func(m *minimalPDF) { m.objs[4] = strings.Replace(m.objs[4], "\nendstream", "endstream", 1) }},
		{"CR alone before endstream", "6.1.7.1", "CR alone", func(m *minimalPDF) { m.objs[4] = strings.Replace(m.objs[4], "\nendstream", "\rendstream", 1) }},
		{"Length too long", "6.1.7.1", "Length does not end", func(m *minimalPDF) { m.objs[4] = strings.Replace(m.objs[4], "/Length 31", "/Length 29", 1) }},
		{"stream then CR alone", "6.1.7.1", "not followed by CR LF or LF", func(m *minimalPDF) { m.objs[4] = strings.Replace(m.objs[4], "stream\nBT", "stream\rBT", 1) }},
		{"image interpolated", "6.2.8", "Interpolate", image("/ColorSpace /DeviceRGB /Interpolate true")},
		{"image with Alternates", "6.2.8", "Alternates", image("/ColorSpace /DeviceRGB /Alternates []")},
		{"DeviceCMYK image", "6.2.4.3", "DeviceCMYK as an image's", image("/ColorSpace /DeviceCMYK")},
		{"DeviceN with a CMYK alternate", "6.2.4.3", "DeviceN", image("/ColorSpace [/DeviceN [/Spot] /DeviceCMYK << /FunctionType 2 /Domain [0 1] /C0 [0 0 0 0] /C1 [0 0 0 1] /N 1 >>]")},
		{"Separation with a CMYK alternate", "6.2.4.3", "Separation", image("/ColorSpace [/Separation /Spot /DeviceCMYK << /FunctionType 2 /Domain [0 1] /C0 [0 0 0 0] /C1 [0 0 0 1] /N 1 >>]")},
		{"Indexed on DeviceCMYK", "6.2.4.3", "Indexed", image("/ColorSpace [/Indexed /DeviceCMYK 0 <00000000>]")},
		{"DeviceCMYK resource", "6.2.4.3", "resource", func(m *minimalPDF) {
			m.objs[3] = strings.Replace(m.objs[3], "/Resources << ", "/Resources << /ColorSpace << /CS0 /DeviceCMYK >> ", 1)
		}},
		{"CMYK operator in a page's content", "6.2.4.3", "operators", func(m *minimalPDF) { m.objs[4] = stream("", "0 0 0 1 k BT /F1 12 Tf 10 10 Td (a) Tj ET") }},
		{"PostScript XObject", "6.2.9", "PostScript", func(m *minimalPDF) { m.objs[12] = stream("/Type /XObject /Subtype /PS", "") }},
		{"JavaScript", "6.5", "JavaScript", func(m *minimalPDF) { m.objs[12] = "<< /JS (x) >>"; m.addToPage("/X 12 0 R") }},
		{"Launch action", "6.5.1", "Launch", func(m *minimalPDF) { m.objs[12] = "<< /S /Launch /F (x) >>" }},
		{"page additional actions", "6.5.2", "additional actions", func(m *minimalPDF) { m.addToPage("/AA << >>") }},
		{"JavaScript name tree", "6.5", "JavaScript name tree", func(m *minimalPDF) {
			m.objs[1] = strings.Replace(m.objs[1], "/Type /Catalog ", "/Type /Catalog /Names << /JavaScript << /Names [] >> >> ", 1)
		}},
		{"embedded files", "6.8", "embedded files", func(m *minimalPDF) {
			m.objs[1] = strings.Replace(m.objs[1], "/Type /Catalog ", "/Type /Catalog /Names << /EmbeddedFiles << /Names [] >> >> ", 1)
		}},
		{"Movie annotation", "6.3.1", "Movie", func(m *minimalPDF) {
			m.objs[12] = "<< /Type /Annot /Subtype /Movie /Rect [0 0 10 10] /F 4 >>"
			m.addToPage("/Annots [12 0 R]")
		}},
		{"hidden annotation", "6.3.2", "hidden", func(m *minimalPDF) {
			m.objs[12] = "<< /Type /Annot /Subtype /Text /Rect [0 0 10 10] /F 6 >>"
			m.addToPage("/Annots [12 0 R]")
		}},
		{"appearance with D", "6.3.3", "has D", annot("/AP << /N 13 0 R /D 13 0 R >>")},
		{"appearance with D in an object stream", "6.3.3", "has D", func(m *minimalPDF) {
			annot("/AP << /N 13 0 R /D 13 0 R >>")(m)
			m.packed = map[int]string{20: m.objs[12]}
			m.objs[12] = "<< /Type /Annot /Subtype /Link /Rect [0 0 10 10] /F 4 >>"
			m.addToPage("/Extra [20 0 R]")
		}},
		{"appearance states on a text annotation", "6.3.3", "dictionary of states", annot("/AP << /N << /On 13 0 R >> >>")},
	} {
		t.Run(tc.name, func(t *testing.T) { failsAlone(t, tc.edit, tc.clause, tc.want) })
	}
}

// failsAlone checks that the minimal PDF changed by edit fails clause,
// with a reason that says want, and no other clause.
func failsAlone(t *testing.T, edit func(m *minimalPDF), clause, want string) {
	t.Helper()
	m := newMinimalPDF(t)
	edit(m)
	p := PDFA(m.bytes())
	found := false
	for _, why := range p {
		if !strings.Contains(why, clause+":") {
			t.Errorf("another clause fails too: %q", why)
		}
		found = found || strings.Contains(why, want)
	}
	if !found {
		t.Errorf("clause %s (%q) does not fail: %q", clause, want, p)
	}
}
