package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"image"
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
	// Number the objects first: a page names its font before the font is
	// written.
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

	w := &pdfWriter{offsets: make([]int, n+1), sec: o.Security}
	// The second line's high bytes mark the file as binary for transfer
	// tools, as the PDF specification recommends.
	w.b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	w.begin(1)
	w.b.WriteString("<< /Type /Catalog /Pages 2 0 R >>\n")
	w.end()

	w.begin(2)
	w.b.WriteString("<< /Type /Pages /Kids [")
	for i := range pages {
		if i > 0 {
			w.b.WriteByte(' ')
		}
		fmt.Fprintf(&w.b, "%d 0 R", objs[i].page)
	}
	fmt.Fprintf(&w.b, "] /Count %d >>\n", len(pages))
	w.end()

	for i, p := range pages {
		if err := w.page(p, objs[i], fontObj); err != nil {
			return nil, fmt.Errorf("page %d: %w", i+1, err)
		}
	}
	if text {
		if err := w.font(fontObj); err != nil {
			return nil, err
		}
	}
	if padObj != 0 {
		// Spaces: the file gets big on disk but stays small in git.
		w.stream(padObj, "", bytes.Repeat([]byte{' '}, o.Pad))
	}
	trailer := ""
	if s := o.Security; s != nil {
		w.begin(encObj)
		w.b.WriteString(s.dict())
		w.b.WriteString("\n")
		w.end()
		id := hex.EncodeToString(s.id)
		trailer = fmt.Sprintf(" /Encrypt %d 0 R /ID [<%s> <%s>]", encObj, id, id)
	}

	xref := w.b.Len()
	fmt.Fprintf(&w.b, "xref\n0 %d\n", n+1)
	// Each entry is exactly 20 bytes: the space before the newline is part
	// of the format.
	w.b.WriteString("0000000000 65535 f \n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&w.b, "%010d 00000 n \n", w.offsets[i])
	}
	fmt.Fprintf(&w.b, "trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", n+1, trailer, xref)
	return w.b.Bytes(), nil
}

// pageObjs are the numbers of a page's objects: the page, its content
// stream and its image (0 for none).
type pageObjs struct{ page, content, image int }

// pdfWriter writes a PDF's objects, recording where each begins, and
// encrypts its streams when sec is set.
type pdfWriter struct {
	b       bytes.Buffer
	offsets []int
	sec     *stdSecurity
}

func (w *pdfWriter) begin(n int) {
	w.offsets[n] = w.b.Len()
	fmt.Fprintf(&w.b, "%d 0 obj\n", n)
}

func (w *pdfWriter) end() { w.b.WriteString("endobj\n") }

func (w *pdfWriter) stream(num int, dict string, data []byte) {
	if w.sec != nil {
		data = w.sec.encrypt(num, data)
	}
	w.begin(num)
	fmt.Fprintf(&w.b, "<< %s /Length %d >>\nstream\n", dict, len(data))
	w.b.Write(data)
	w.b.WriteString("\nendstream\n")
	w.end()
}

// page writes a page's object, its content stream and its image.
func (w *pdfWriter) page(p pageSpec, objs pageObjs, fontObj int) error {
	res := "<< "
	if p.Image != nil {
		res += fmt.Sprintf("/XObject << /Im0 %d 0 R >> ", objs.image)
	}
	if len(p.Runs) > 0 {
		res += fmt.Sprintf("/Font << /F1 %d 0 R >> ", fontObj)
	}
	res += ">>"
	rotate := ""
	if p.Rotate != 0 {
		rotate = fmt.Sprintf(" /Rotate %d", p.Rotate)
	}
	w.begin(objs.page)
	fmt.Fprintf(&w.b, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s]%s /Resources %s /Contents %d 0 R >>\n",
		p.W, p.H, rotate, res, objs.content)
	w.end()

	var content []string
	if p.Image != nil {
		content = append(content, fmt.Sprintf("q\n%s 0 0 %s 0 0 cm\n/Im0 Do\nQ", p.W, p.H))
	}
	if len(p.Runs) > 0 {
		t, err := textContent(p.Runs, p.Invisible)
		if err != nil {
			return err
		}
		content = append(content, t)
	}
	w.stream(objs.content, "", []byte(strings.Join(content, "\n")))

	if im := p.Image; im != nil {
		dict := fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /%s /BitsPerComponent %d",
			im.W, im.H, im.ColorSpace, im.BPC)
		if im.Filter != "" {
			dict += " /Filter /" + im.Filter
		}
		if im.Parms != "" {
			dict += " /DecodeParms " + im.Parms
		}
		w.stream(objs.image, dict, im.Data)
	}
	return nil
}

// font writes the embedded font: its dictionary, descriptor and file.
func (w *pdfWriter) font(fontObj int) error {
	f, err := embeddedFont()
	if err != nil {
		return err
	}
	w.begin(fontObj)
	fmt.Fprintf(&w.b, "<< /Type /Font /Subtype /TrueType /BaseFont /%s /FirstChar %d /LastChar %d /Widths [%s] /Encoding /WinAnsiEncoding /FontDescriptor %d 0 R >>\n",
		f.Name, firstChar, lastChar, f.Widths, fontObj+1)
	w.end()
	w.begin(fontObj + 1)
	fmt.Fprintf(&w.b, "<< /Type /FontDescriptor /FontName /%s /Flags 32 /FontBBox [%s] /ItalicAngle 0 /Ascent %d /Descent %d /CapHeight %d /StemV 80 /FontFile2 %d 0 R >>\n",
		f.Name, f.BBox, f.Ascent, f.Descent, f.CapHeight, fontObj+2)
	w.end()
	w.stream(fontObj+2, fmt.Sprintf("/Length1 %d /Filter /FlateDecode", f.Length1), f.Data)
	return nil
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
