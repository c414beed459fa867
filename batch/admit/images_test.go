package admit

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/report/outcome"
)

// The images the renderer sizes from more than an image dictionary's
// /Width and /Height: inline images in content streams, forms and Type 3
// glyphs, and the sizes JBIG2, JPEG, JPEG 2000 and CCITT data declare in
// their own headers. Each builder takes the declared size, so that one
// builder makes the hostile fixture (testdata/admit/hostile) and its
// harmless seed (hostileSeeds).

// drawingPage is the one-page document whose page has the resources res
// and draws content, with objs as objects 5 and on.
func drawingPage(res, content string, objs ...string) []byte {
	o := pageObjects("")
	o[2] = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources " + res + " /Contents 4 0 R >>"
	o[3] = stream("", []byte(content))
	return buildPDF(append(o, objs...), "")
}

// inlineImagePDF draws an unfiltered RGB inline image of w×h px, with
// three bytes of its data: the renderer allocates it whole.
func inlineImagePDF(w, h int) []byte {
	return drawingPage("<< >>", fmt.Sprintf("q 612 0 0 792 0 0 cm BI /W %d /H %d /CS /RGB /BPC 8 ID \x00\x00\x00 EI Q", w, h))
}

// inlineFormPDF draws a form whose deflated content holds an image mask
// of w×h px, its dictionary in full names and its data hex-encoded.
func inlineFormPDF(w, h int) []byte {
	form := fmt.Sprintf("q 1 0 0 1 0 0 cm BI /Width %d /Height %d /ImageMask true /Filter /AHx ID 00> EI Q", w, h)
	return drawingPage("<< /XObject << /Fm1 5 0 R >> >>", "q 612 0 0 792 0 0 cm /Fm1 Do Q",
		stream("/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Filter /FlateDecode", deflate([]byte(form))))
}

// inlineType3PDF shows a Type 3 glyph whose procedure draws a gray inline
// image of w×h px.
func inlineType3PDF(w, h int) []byte {
	glyph := fmt.Sprintf("1000 0 0 0 1000 1000 d1 q 1000 0 0 1000 0 0 cm BI /W %d /H %d /CS /G /BPC 8 ID \x00 EI Q", w, h)
	return drawingPage("<< /Font << /F1 5 0 R >> >>", "BT /F1 12 Tf 72 720 Td (a) Tj ET",
		"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1000 1000] /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << /a 6 0 R >> "+
			"/Encoding << /Type /Encoding /Differences [97 /a] >> /FirstChar 97 /LastChar 97 /Widths [1000] /Resources << >> >>",
		stream("", []byte(glyph)))
}

// imageXObjectPDF draws a 100×100 image XObject with the given filter
// dictionary entries and data.
func imageXObjectPDF(bpc int, filter string, data []byte) []byte {
	return drawingPage("<< /XObject << /Im1 5 0 R >> >>", "q 612 0 0 792 0 0 cm /Im1 Do Q",
		stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width 100 /Height 100 /ColorSpace /DeviceGray /BitsPerComponent %d %s", bpc, filter), data))
}

// jbig2Segment is a JBIG2 segment (ITU-T T.88 7.2) of page 1 that refers
// to no other segment.
func jbig2Segment(nr uint32, typ byte, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, nr)
	b = append(b, typ, 0, 1)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// jbig2PDF's image is a JBIG2 stream whose page information segment
// declares a w×h page, then ends the page.
func jbig2PDF(w, h uint32) []byte {
	info := binary.BigEndian.AppendUint32(nil, w)
	info = binary.BigEndian.AppendUint32(info, h)
	info = append(info, make([]byte, 11)...) // resolutions, flags, striping
	data := append(jbig2Segment(0, jbig2PageInfo, info), jbig2Segment(1, 49, nil)...)
	return imageXObjectPDF(1, "/Filter /JBIG2Decode", data)
}

// jpegPDF's image is a JPEG whose progressive frame header (SOF2)
// declares w×h px in three components: a progressive decoder holds every
// coefficient of the image.
func jpegPDF(w, h uint16) []byte {
	data := []byte{0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc2, 0, 17, 8}
	data = binary.BigEndian.AppendUint16(data, h)
	data = binary.BigEndian.AppendUint16(data, w)
	data = append(data, 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0, 0xff, 0xd9)
	return imageXObjectPDF(8, "/Filter /DCTDecode", data)
}

// jpxPDF's image is a JP2 file whose image header box and codestream
// both declare w×h px.
func jpxPDF(w, h uint32) []byte {
	u32 := binary.BigEndian.AppendUint32
	d := u32(nil, 12)
	d = append(d, "jP  \r\n\x87\n"...)
	d = append(u32(d, 20), "ftypjp2 \x00\x00\x00\x00jp2 "...)
	d = append(u32(d, 30), "jp2h"...)
	d = append(u32(d, 22), "ihdr"...)
	d = append(u32(u32(d, h), w), 0, 1, 7, 7, 0, 0)
	d = append(u32(d, 0), "jp2c\xff\x4f\xff\x51\x00\x29\x00\x00"...)
	d = u32(u32(u32(u32(d, w), h), 0), 0)
	d = u32(u32(u32(u32(d, w), h), 0), 0)
	d = append(d, 0, 1, 7, 1, 1, 0xff, 0xd9)
	return imageXObjectPDF(8, "/Filter /JPXDecode", d)
}

// ccittPDF's image is CCITT G4 data whose parameters declare rows of
// columns pixels: the decoder allocates its line buffers by /Columns.
func ccittPDF(columns int) []byte {
	return imageXObjectPDF(1, fmt.Sprintf("/Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns %d /Rows 100 >>", columns), []byte{0x00, 0x10, 0x01})
}

// imageHostile are the hostile fixtures of this file, and imageSeeds
// their harmless sizes.
var (
	imageHostile = map[string]func() []byte{
		"inline-image.pdf":        func() []byte { return inlineImagePDF(28000, 28000) },
		"inline-image-form.pdf":   func() []byte { return inlineFormPDF(100000, 100000) },
		"inline-image-type3.pdf":  func() []byte { return inlineType3PDF(30000, 30000) },
		"jbig2-page-size.pdf":     func() []byte { return jbig2PDF(65536, 65536) },
		"jpeg-frame-size.pdf":     func() []byte { return jpegPDF(65000, 65000) },
		"jpx-image-size.pdf":      func() []byte { return jpxPDF(60000, 60000) },
		"ccitt-columns-large.pdf": func() []byte { return ccittPDF(2_000_000_000) },
	}
	imageSeeds = map[string]func() []byte{
		"inline-image":       func() []byte { return inlineImagePDF(1, 1) },
		"inline-image-form":  func() []byte { return inlineFormPDF(8, 8) },
		"inline-image-type3": func() []byte { return inlineType3PDF(1, 1) },
		"jbig2":              func() []byte { return jbig2PDF(100, 100) },
		"jpeg":               func() []byte { return jpegPDF(100, 100) },
		"jpx":                func() []byte { return jpxPDF(100, 100) },
		"ccitt":              func() []byte { return ccittPDF(100) },
	}
)

func init() {
	for name, build := range imageHostile {
		hostileFixtures[name] = build
	}
	for name, build := range imageSeeds {
		hostileSeeds[name] = build
	}
}

// TestImageSizes admits the image fixtures in process (admission never
// decodes an image, so they are harmless here): each hostile one is
// page_too_large with a detail that names the object and the header, and
// each seed is admitted.
func TestImageSizes(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"inline-image.pdf":        "stream object 4: an inline image is 28000×28000 px, 784 Mpx, over the 50 Mpx cap",
		"inline-image-form.pdf":   "stream object 5: an inline image is 100000×100000 px",
		"inline-image-type3.pdf":  "stream object 6: an inline image is 30000×30000 px",
		"jbig2-page-size.pdf":     "image object 5: its JBIG2 page information declares it is 65536×65536 px",
		"jpeg-frame-size.pdf":     "image object 5: its JPEG frame header declares it is 65000×65000 px",
		"jpx-image-size.pdf":      "image object 5: its JPEG 2000 image header declares it is 60000×60000 px",
		"ccitt-columns-large.pdf": "image object 5: its CCITT /Columns and /Rows declares it is 2000000000×100 px",
	}
	for name, build := range imageHostile {
		t.Run(name, func(t *testing.T) {
			_, err := inspect(build(), DefaultLimits())
			r, ok := IsRejection(err)
			if !ok || r.Reason != outcome.PageTooLarge || !strings.Contains(r.Detail, want[name]) {
				t.Errorf("got %v, want page_too_large: …%s…", err, want[name])
			}
		})
	}
	for name, build := range imageSeeds {
		t.Run(name, func(t *testing.T) {
			if dpis, err := inspect(build(), DefaultLimits()); err != nil || len(dpis) != 1 {
				t.Errorf("got %v, %v; want admitted, one page", dpis, err)
			}
		})
	}
}

// TestImageSizeCases covers the ways an image's size can be written or
// hidden: each case is rejected (want names the reason and a piece of
// the detail) or admitted (want empty).
func TestImageSizeCases(t *testing.T) {
	t.Parallel()
	big := "BI /W 9000 /H 9000 /CS /G ID \x00 EI"
	striped := func(rows uint32) []byte {
		info := binary.BigEndian.AppendUint32(nil, 1000)
		info = binary.BigEndian.AppendUint32(info, 0xffffffff)
		info = append(info, make([]byte, 9)...)
		info = append(info, 0x80, 0x80) // striped, stripes of 128 rows
		data := jbig2Segment(0, jbig2PageInfo, info)
		data = append(data, jbig2Segment(1, jbig2EndOfStripe, binary.BigEndian.AppendUint32(nil, rows))...)
		return imageXObjectPDF(1, "/Filter /JBIG2Decode", data)
	}
	// jpegAfter is a w×w JPEG whose frame header comes after n bytes
	// of APP1 segments, deflated.
	jpegAfter := func(n int, w uint16) []byte {
		data := []byte{0xff, 0xd8}
		for ; n > 0; n -= 65533 {
			data = append(data, 0xff, 0xe1, 0xff, 0xff)
			data = append(data, make([]byte, 65533)...)
		}
		data = append(data, 0xff, 0xc0, 0, 11, 8)
		data = binary.BigEndian.AppendUint16(data, w)
		data = binary.BigEndian.AppendUint16(data, w)
		data = append(data, 1, 1, 0x11, 0, 0xff, 0xd9)
		return imageXObjectPDF(8, "/Filter [/FlateDecode /DCTDecode]", deflate(data))
	}
	// The page's contents, object 5, dressed as an image.
	dressed := bytes.Replace(buildPDF(append(pageObjects(""), stream("/Subtype /Image /Width 1 /Height 1", []byte(big))), ""),
		[]byte("/Contents 4 0 R"), []byte("/Contents 5 0 R"), 1)
	cases := []struct {
		name string
		pdf  []byte
		want string
	}{
		{"name with a #xx escape", drawingPage("<< >>", "BI /#57 9000 /H 9000 /CS /G ID \x00 EI"), "page_too_large: stream object 4: an inline image is 9000×9000 px"},
		{"comment and string before", drawingPage("<< >>", "% BI /W 9000 /H 9000 ID\n(BI /W 9000 /H 9000 ID \\) ) "+big), "page_too_large: stream object 4"},
		{"in a comment or a string only", drawingPage("<< >>", "% "+big+"\n("+big+")"), ""},
		{"data that reads as an image", drawingPage("<< >>", "BI /W 40 /H 1 /CS /G /BPC 8 ID BI /W 9000 /H 9000 ID \x00 EI          EI"), ""},
		{"after flate data with EI in it", drawingPage("<< >>", "BI /W 10 /H 10 /CS /G /F /Fl ID "+string(deflate([]byte(" EI BI /W 9000 /H 9000 ID EI")))+" EI"), ""},
		{"after one of no size", drawingPage("<< >>", "BI /W 10 /H -1 /CS /G ID EI BI /W 1e300 /H 1e-300 /CS /G ID EI "+big), "stream object 4: an inline image is 9000×9000 px"},
		{"after a small one", drawingPage("<< >>", "BI /W 2 /H 1 /CS /G ID \x00\x00 EI "+big), "stream object 4: an inline image is 9000×9000 px"},
		{"inline CCITT columns", drawingPage("<< >>", "BI /W 10 /H 10 /IM true /F /CCF /DP << /K -1 /Columns 90000000 >> ID \x00 EI"), "its CCITT /Columns and /Rows declares it is 90000000×10 px"},
		{"inline JPEG frame", drawingPage("<< >>", "BI /W 10 /H 10 /CS /G /F /DCT ID \xff\xd8\xff\xc0\x00\x0b\x08\x27\x10\x27\x10\x01\x01\x11\x00\xff\xd9 EI"), "its JPEG frame header declares it is 10000×10000 px"},
		{"split across two content streams", buildPDF([]string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents [4 0 R 5 0 R] >>",
			stream("", []byte("q BI /W 9000 /H")), stream("", []byte("9000 /CS /G ID \x00 EI Q")),
		}, ""), "page_too_large: the content streams 4 to 5: an inline image is 9000×9000 px"},
		{"under a filter no one knows", drawingPage("<< /XObject << /Fm1 5 0 R >> >>", "/Fm1 Do",
			stream("/Subtype /Form /BBox [0 0 1 1] /Filter /NoSuchDecode", []byte(big))), "stream object 5: an inline image is 9000×9000 px"},
		{"an embedded file", withCatalog("/Names << /EmbeddedFiles << /Names [(a) 5 0 R] >> >>",
			"<< /Type /Filespec /F (a) /EF << /F 6 0 R >> >>", stream("", []byte(big))), ""},
		{"an unreferenced stream", withObject(stream("", []byte(big))), "stream object 5: an inline image"},
		{"contents dressed as an image", dressed, "stream object 5: an inline image is 9000×9000 px"},
		{"striped JBIG2 page, short", striped(1000), ""},
		{"striped JBIG2 page, long", striped(100000), "its JBIG2 end of stripe declares it is 1000×100001 px"},
		{"JPEG frame after 200 KB, deflated", jpegAfter(200_000, 100), ""},
		{"JPEG frame after 200 KB, too wide", jpegAfter(200_000, 60000), "its JPEG frame header declares it is 60000×60000 px"},
		{"JPEG frame after 2 MB, deflated", jpegAfter(2_000_000, 100), "malformed_pdf: image object 5: no JPEG header in its first 1024 KiB"},
		{"predictor row too long", drawingPage("<< /XObject << /Fm1 5 0 R >> >>", "/Fm1 Do",
			stream("/Subtype /Form /BBox [0 0 1 1] /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 100000000 >>", deflate(nil))), "malformed_pdf: stream object 5: a predictor row over 4 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := inspect(c.pdf, DefaultLimits())
			switch {
			case c.want == "" && err != nil:
				t.Errorf("got %v, want admitted", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want …%s…", err, c.want)
			}
		})
	}
}

// TestDecodeBudget: the streams decoded for the image checks share one
// budget per file, and a stream past it is a bomb, not an image to skip.
func TestDecodeBudget(t *testing.T) {
	t.Parallel()
	raw := deflate(make([]byte, 1<<20))
	b := &budget{left: 1 << 19}
	r, _, err := decode(raw, []types.PDFFilter{{Name: "FlateDecode"}}, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inlineImages(r, func(inlineImage, *bufio.Reader) error { return nil }); !errors.Is(err, errOverBudget) {
		t.Errorf("inlineImages = %v, want over the budget", err)
	}
	err = decodeRejection("stream object 4", errOverBudget)
	if r, ok := IsRejection(err); !ok || r.Reason != outcome.MalformedPDF {
		t.Errorf("decodeRejection = %v, want malformed_pdf", err)
	}
}

// FuzzImageHeaders feeds bytes to the content lexer and to each header
// reader as they run in the admission child, without pdfcpu around them:
// whatever the bytes, they must end (no loop on a stuck reader), never
// panic, and read within the budget. Run a campaign with
//
//	go test -run '^$' -fuzz FuzzImageHeaders -fuzztime 5m -parallel 1 ./batch/admit
func FuzzImageHeaders(f *testing.F) {
	for _, s := range []string{
		"q BI /W 10 /H 10 /CS /G /F /Fl ID x EI Q",
		"BI /Width 9000 /Height 9000 /IM true /F [/AHx /CCF] /DP [null << /K -1 /Columns 9 >>] ID 00> EI",
		"% comment\n(str (nested) \\) ) <abcd> << /A [1 2 {3}] >> BI /W 2 /H 1 /CS /G ID \x00\x00 EI",
		"BI /W 10 /H 10 /CS /G /F /DCT ID \xff\xd8\xff\xc0\x00\x0b\x08\x00\x10\x00\x10\x01\x01\x11\x00\xff\xd9 EI",
	} {
		f.Add([]byte(s))
	}
	for _, c := range [][]byte{jbig2Segment(0, jbig2PageInfo, make([]byte, 19)), {0xff, 0xd8, 0xff, 0xc2, 0, 17}, {0xff, 0x4f, 0xff, 0x51}} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := DefaultLimits()
		check := func(string, int64, int64) error { return nil }
		b := &budget{left: 64 << 20}
		_, _ = inlineImages(budgetReader{bytes.NewReader(data), b}, func(img inlineImage, br *bufio.Reader) error {
			if len(img.filters) == 1 && img.filters[0] == "DCTDecode" {
				return jpegSizes(newHdrReader(br, hdrWindow), check)
			}
			return overCap(lim, "x", img.w, img.h)
		})
		for _, walk := range []func(*hdrReader, sizeCheck) error{jpegSizes, jpxSizes, jbig2Sizes} {
			_ = walk(newHdrReader(bytes.NewReader(data), int64(len(data))), check)
			_ = walk(newHdrReader(bytes.NewReader(data), 64), check)
		}
	})
}

// TestTextBomb: a content stream showing more text than any page holds
// (issue 28's text bombs, a 36 KB file claiming 10 MB) is refused at
// admission, the stream named; a page of ordinary text is not.
func TestTextBomb(t *testing.T) {
	show := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("BT /F1 1 Tf 3 Tr\n")
		for range n / 1000 {
			b.WriteString("(" + strings.Repeat("a ", 500) + ") Tj\n")
		}
		b.WriteString("ET\n")
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		data []byte
		bomb bool
	}{
		{"a page of print", show(20_000), false},
		{"a megabyte of text", show(1 << 20), false},
		{"ten megabytes of text", show(10 << 20), true},
		{"ten megabytes in hex strings", bytes.Repeat([]byte("<6120612061206120> Tj\n"), 600_000), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkInline("stream object 4", bytes.NewReader(tc.data), Limits{})
			rej, ok := IsRejection(err)
			switch {
			case tc.bomb && (!ok || rej.Reason != outcome.MalformedPDF || !strings.Contains(rej.Detail, "stream object 4: more than 2 MiB of text")):
				t.Errorf("got %v, want malformed_pdf naming the stream and its text", err)
			case !tc.bomb && err != nil:
				t.Errorf("got %v, want it admitted", err)
			}
		})
	}
}
