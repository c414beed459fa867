package main

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"strconv"
	"strings"
)

// pdfPage is one scanned page to wrap: the image, the DPI it was scanned
// at, and whether to store it as 1-bit.
type pdfPage struct {
	Img     *image.Gray
	DPI     int
	Bitonal bool
}

// pdfImage is an image XObject with its pixels already encoded.
type pdfImage struct {
	W, H       int
	ColorSpace string // DeviceGray or DeviceRGB
	BPC        int
	Filter     string // FlateDecode, DCTDecode, CCITTFaxDecode; empty for raw bytes
	Parms      string // the /DecodeParms dictionary, or empty
	Data       []byte
}

// pdfRun is a piece of text drawn with the embedded font: X and Y are the
// start of its baseline in points from the page's lower left corner.
type pdfRun struct {
	X, Y, Size float64
	Text       string
}

// pageSpec is one page to write: its MediaBox size in points, its /Rotate,
// a full-page image, and text over it.
type pageSpec struct {
	W, H      string
	Rotate    int
	Image     *pdfImage
	Runs      []pdfRun
	Invisible bool // text render mode 3, as OCR tools write their text layer
}

// pdfOptions change how writePDF writes a file.
type pdfOptions struct {
	Security *stdSecurity // encrypt every stream; nil writes plain text
	Pad      int          // bytes of an unreferenced stream, to make a file big
}

// imagePDF returns an image-only PDF with one page per image, each page
// exactly the size of its image at its DPI. The file carries no dates and
// no /ID, so the same pages always give the same bytes.
func imagePDF(pages []pdfPage) ([]byte, error) {
	specs, err := imageSpecs(pages)
	if err != nil {
		return nil, err
	}
	return writePDF(specs, pdfOptions{})
}

// imageSpecs encodes scanned pages for writePDF: 1-bit pages as packed
// bits, grey ones as bytes, both with /FlateDecode.
func imageSpecs(pages []pdfPage) ([]pageSpec, error) {
	specs := make([]pageSpec, len(pages))
	for i, p := range pages {
		bounds := p.Img.Bounds()
		var err error
		var img pdfImage
		if p.Bitonal {
			img, err = bitonalFlate(p.Img)
		} else {
			img, err = grayFlate(p.Img)
		}
		if err != nil {
			return nil, fmt.Errorf("compressing page %d: %w", i+1, err)
		}
		specs[i] = pageSpec{W: pt(bounds.Dx(), p.DPI), H: pt(bounds.Dy(), p.DPI), Image: &img}
	}
	return specs, nil
}

// writePDF returns a PDF 1.4 file holding pages. Objects are numbered in
// a fixed order (catalog, page tree, then each page's page, content and
// image objects, then the font, the padding and the encryption
// dictionary), and nothing in the file depends on the time, so the same
// pages give the same bytes.
func writePDF(pages []pageSpec, o pdfOptions) ([]byte, error) {
	var b bytes.Buffer
	// The second line's high bytes mark the file as binary for transfer
	// tools, as the PDF specification recommends.
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")

	// Number the objects first: a page names its font before the font is
	// written.
	type pageObjs struct{ page, content, image int }
	objs := make([]pageObjs, len(pages))
	n := 2
	text := false
	for i, p := range pages {
		n++
		objs[i].page = n
		n++
		objs[i].content = n
		if p.Image != nil {
			n++
			objs[i].image = n
		}
		text = text || len(p.Runs) > 0
	}
	var fontObj, padObj, encObj int
	if text {
		fontObj = n + 1
		n += 3 // font, descriptor, font file
	}
	if o.Pad > 0 {
		n++
		padObj = n
	}
	if o.Security != nil {
		n++
		encObj = n
	}

	offsets := make([]int, n+1)
	begin := func(n int) {
		offsets[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n", n)
	}
	end := func() { b.WriteString("endobj\n") }
	stream := func(num int, dict string, data []byte) {
		if o.Security != nil {
			data = o.Security.encrypt(num, data)
		}
		begin(num)
		fmt.Fprintf(&b, "<< %s /Length %d >>\nstream\n", dict, len(data))
		b.Write(data)
		b.WriteString("\nendstream\n")
		end()
	}

	begin(1)
	b.WriteString("<< /Type /Catalog /Pages 2 0 R >>\n")
	end()

	begin(2)
	b.WriteString("<< /Type /Pages /Kids [")
	for i := range pages {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d 0 R", objs[i].page)
	}
	fmt.Fprintf(&b, "] /Count %d >>\n", len(pages))
	end()

	for i, p := range pages {
		res := "<< "
		if p.Image != nil {
			res += fmt.Sprintf("/XObject << /Im0 %d 0 R >> ", objs[i].image)
		}
		if len(p.Runs) > 0 {
			res += fmt.Sprintf("/Font << /F1 %d 0 R >> ", fontObj)
		}
		res += ">>"
		rotate := ""
		if p.Rotate != 0 {
			rotate = fmt.Sprintf(" /Rotate %d", p.Rotate)
		}
		begin(objs[i].page)
		fmt.Fprintf(&b, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s]%s /Resources %s /Contents %d 0 R >>\n",
			p.W, p.H, rotate, res, objs[i].content)
		end()

		var content []string
		if p.Image != nil {
			content = append(content, fmt.Sprintf("q\n%s 0 0 %s 0 0 cm\n/Im0 Do\nQ", p.W, p.H))
		}
		if len(p.Runs) > 0 {
			t, err := textContent(p.Runs, p.Invisible)
			if err != nil {
				return nil, fmt.Errorf("page %d: %w", i+1, err)
			}
			content = append(content, t)
		}
		stream(objs[i].content, "", []byte(strings.Join(content, "\n")))

		if im := p.Image; im != nil {
			dict := fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /%s /BitsPerComponent %d",
				im.W, im.H, im.ColorSpace, im.BPC)
			if im.Filter != "" {
				dict += " /Filter /" + im.Filter
			}
			if im.Parms != "" {
				dict += " /DecodeParms " + im.Parms
			}
			stream(objs[i].image, dict, im.Data)
		}
	}

	if text {
		f, err := embeddedFont()
		if err != nil {
			return nil, err
		}
		begin(fontObj)
		fmt.Fprintf(&b, "<< /Type /Font /Subtype /TrueType /BaseFont /%s /FirstChar %d /LastChar %d /Widths [%s] /Encoding /WinAnsiEncoding /FontDescriptor %d 0 R >>\n",
			f.Name, firstChar, lastChar, f.Widths, fontObj+1)
		end()
		begin(fontObj + 1)
		fmt.Fprintf(&b, "<< /Type /FontDescriptor /FontName /%s /Flags 32 /FontBBox [%s] /ItalicAngle 0 /Ascent %d /Descent %d /CapHeight %d /StemV 80 /FontFile2 %d 0 R >>\n",
			f.Name, f.BBox, f.Ascent, f.Descent, f.CapHeight, fontObj+2)
		end()
		stream(fontObj+2, fmt.Sprintf("/Length1 %d /Filter /FlateDecode", f.Length1), f.Data)
	}
	if padObj != 0 {
		// Spaces: the file gets big on disk but stays small in git.
		stream(padObj, "", bytes.Repeat([]byte{' '}, o.Pad))
	}
	trailer := ""
	if s := o.Security; s != nil {
		begin(encObj)
		b.WriteString(s.dict())
		b.WriteString("\n")
		end()
		id := hex.EncodeToString(s.id)
		trailer = fmt.Sprintf(" /Encrypt %d 0 R /ID [<%s> <%s>]", encObj, id, id)
	}

	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n", n+1)
	// Each entry is exactly 20 bytes: the space before the newline is part
	// of the format.
	b.WriteString("0000000000 65535 f \n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%010d 00000 n \n", offsets[i])
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", n+1, trailer, xref)
	return b.Bytes(), nil
}

// textContent draws runs with font F1, visibly or in render mode 3
// (invisible, as an OCR text layer over a scan is).
func textContent(runs []pdfRun, invisible bool) (string, error) {
	var b strings.Builder
	b.WriteString("BT\n")
	if invisible {
		b.WriteString("3 Tr\n")
	}
	for _, r := range runs {
		s, err := pdfString(r.Text)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "/F1 %s Tf\n1 0 0 1 %s %s Tm\n%s Tj\n", num(r.Size), num(r.X), num(r.Y), s)
	}
	b.WriteString("ET")
	return b.String(), nil
}

// pdfString writes s as a literal string in WinAnsiEncoding, which the
// embedded font uses. Only printable ASCII is allowed: the corpus's text
// needs no more, and anything else would need an encoding table.
func pdfString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('(')
	for _, r := range s {
		if r < firstChar || r > lastChar {
			return "", fmt.Errorf("character %U is not printable ASCII", r)
		}
		if r == '(' || r == ')' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte(')')
	return b.String(), nil
}

// num formats v with at most four decimals, as pt does.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// pt converts a length in pixels at dpi to points, with at most four
// decimals so the number's text never depends on float formatting quirks.
func pt(px, dpi int) string {
	v := math.Round(float64(px)*72/float64(dpi)*1e4) / 1e4
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// grayFlate stores an 8-bit grey image with /FlateDecode.
func grayFlate(img *image.Gray) (pdfImage, error) {
	b := img.Bounds()
	data := img.Pix
	if b.Dx() != img.Stride || b.Min != (image.Point{}) {
		data = grayRows(img)
	}
	// Best compression on grey pages ran 40 times slower than the default
	// to save under a tenth.
	z, err := deflate(data, zlib.DefaultCompression)
	return pdfImage{W: b.Dx(), H: b.Dy(), ColorSpace: "DeviceGray", BPC: 8, Filter: "FlateDecode", Data: z}, err
}

// grayRaw stores an 8-bit grey image with no filter at all, as some
// scanner drivers do: a page is then megabytes.
func grayRaw(img *image.Gray) pdfImage {
	b := img.Bounds()
	return pdfImage{W: b.Dx(), H: b.Dy(), ColorSpace: "DeviceGray", BPC: 8, Data: grayRows(img)}
}

// bitonalFlate stores a black-and-white image as 1-bit rows with
// /FlateDecode. Best compression saves about a tenth on 1-bit pages at
// little cost.
func bitonalFlate(img *image.Gray) (pdfImage, error) {
	b := img.Bounds()
	z, err := deflate(packBits(img), zlib.BestCompression)
	return pdfImage{W: b.Dx(), H: b.Dy(), ColorSpace: "DeviceGray", BPC: 1, Filter: "FlateDecode", Data: z}, err
}

// bitonalCCITT stores a black-and-white image with /CCITTFaxDecode in
// Group 4, the usual encoding of document scanners' 1-bit output.
func bitonalCCITT(img *image.Gray) pdfImage {
	b := img.Bounds()
	return pdfImage{
		W: b.Dx(), H: b.Dy(), ColorSpace: "DeviceGray", BPC: 1, Filter: "CCITTFaxDecode",
		Parms: fmt.Sprintf("<< /K -1 /Columns %d /Rows %d >>", b.Dx(), b.Dy()),
		Data:  encodeG4(img),
	}
}

// rgbFlate stores a colour image as 8-bit RGB with /FlateDecode.
func rgbFlate(img *image.RGBA) (pdfImage, error) {
	b := img.Bounds()
	data := make([]byte, 0, b.Dx()*b.Dy()*3)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y):img.PixOffset(b.Max.X, y)]
		for x := 0; x < len(row); x += 4 {
			data = append(data, row[x], row[x+1], row[x+2])
		}
	}
	z, err := deflate(data, zlib.DefaultCompression)
	return pdfImage{W: b.Dx(), H: b.Dy(), ColorSpace: "DeviceRGB", BPC: 8, Filter: "FlateDecode", Data: z}, err
}

// dct stores a grey or colour image as a baseline JPEG. Go's encoder is
// integer arithmetic throughout, so the bytes do not vary by platform.
func dct(img image.Image, quality int) (pdfImage, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		return pdfImage{}, err
	}
	cs := "DeviceRGB"
	if _, ok := img.(*image.Gray); ok {
		cs = "DeviceGray"
	}
	b := img.Bounds()
	return pdfImage{W: b.Dx(), H: b.Dy(), ColorSpace: cs, BPC: 8, Filter: "DCTDecode", Data: buf.Bytes()}, nil
}

// packBits packs a black-and-white image into 1-bit rows, most significant
// bit first, each row padded to a whole byte. In /DeviceGray a 1 bit is
// white.
func packBits(img *image.Gray) []byte {
	b := img.Bounds()
	rowBytes := (b.Dx() + 7) / 8
	out := make([]byte, rowBytes*b.Dy())
	for y := 0; y < b.Dy(); y++ {
		row := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		for x := 0; x < b.Dx(); x++ {
			if row[x] >= 128 {
				out[y*rowBytes+x/8] |= 0x80 >> (x % 8)
			}
		}
	}
	return out
}

// grayRows copies img's pixels into tightly packed rows.
func grayRows(img *image.Gray) []byte {
	b := img.Bounds()
	out := make([]byte, 0, b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		out = append(out, img.Pix[img.PixOffset(b.Min.X, y):img.PixOffset(b.Max.X, y)]...)
	}
	return out
}

// deflate compresses data in the zlib format that /FlateDecode expects.
func deflate(data []byte, level int) ([]byte, error) {
	var b bytes.Buffer
	zw, err := zlib.NewWriterLevel(&b, level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
