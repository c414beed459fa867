package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"math"
	"strconv"
)

// pdfPage is one scanned page to wrap: the image, the DPI it was scanned
// at, and whether to store it as 1-bit.
type pdfPage struct {
	Img     *image.Gray
	DPI     int
	Bitonal bool
}

// imagePDF returns an image-only PDF with one page per image, each page
// exactly the size of its image at its DPI. The file carries no dates and
// no /ID, so the same pages always give the same bytes.
func imagePDF(pages []pdfPage) ([]byte, error) {
	var b bytes.Buffer
	// The second line's high bytes mark the file as binary for transfer
	// tools, as the PDF specification recommends.
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	nobj := 2 + 3*len(pages)
	offsets := make([]int, nobj+1)
	begin := func(n int) {
		offsets[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n", n)
	}
	end := func() { b.WriteString("endobj\n") }
	stream := func(dict string, data []byte) {
		fmt.Fprintf(&b, "<< %s /Length %d >>\nstream\n", dict, len(data))
		b.Write(data)
		b.WriteString("\nendstream\n")
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
		fmt.Fprintf(&b, "%d 0 R", 3+3*i)
	}
	fmt.Fprintf(&b, "] /Count %d >>\n", len(pages))
	end()

	for i, p := range pages {
		page, content, img := 3+3*i, 4+3*i, 5+3*i
		bounds := p.Img.Bounds()
		w, h := pt(bounds.Dx(), p.DPI), pt(bounds.Dy(), p.DPI)

		begin(page)
		fmt.Fprintf(&b, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Resources << /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>\n",
			w, h, img, content)
		end()

		begin(content)
		stream("", fmt.Appendf(nil, "q\n%s 0 0 %s 0 0 cm\n/Im0 Do\nQ", w, h))
		end()

		// Best compression saves about a tenth on 1-bit pages at little
		// cost, but on grey pages it ran 40 times slower than the default
		// to save under a tenth.
		data, bpc, level := p.Img.Pix, 8, zlib.DefaultCompression
		if p.Bitonal {
			data, bpc, level = packBits(p.Img), 1, zlib.BestCompression
		} else if bounds.Dx() != p.Img.Stride || bounds.Min != (image.Point{}) {
			data = grayRows(p.Img)
		}
		z, err := deflate(data, level)
		if err != nil {
			return nil, fmt.Errorf("compressing page %d: %w", i+1, err)
		}
		begin(img)
		stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent %d /Filter /FlateDecode",
			bounds.Dx(), bounds.Dy(), bpc), z)
		end()
	}

	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n", nobj+1)
	// Each entry is exactly 20 bytes: the space before the newline is part
	// of the format.
	b.WriteString("0000000000 65535 f \n")
	for n := 1; n <= nobj; n++ {
		fmt.Fprintf(&b, "%010d 00000 n \n", offsets[n])
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", nobj+1, xref)
	return b.Bytes(), nil
}

// pt converts a length in pixels at dpi to points, with at most four
// decimals so the number's text never depends on float formatting quirks.
func pt(px, dpi int) string {
	v := math.Round(float64(px)*72/float64(dpi)*1e4) / 1e4
	return strconv.FormatFloat(v, 'f', -1, 64)
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
