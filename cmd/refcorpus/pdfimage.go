package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/jpeg"
)

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
// white: a pixel from 128 up, whose top bit is set.
func packBits(img *image.Gray) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	rowBytes := (w + 7) / 8
	out := make([]byte, rowBytes*h)
	for y := range h {
		off := img.PixOffset(b.Min.X, b.Min.Y+y)
		row, packed := img.Pix[off:off+w], out[y*rowBytes:(y+1)*rowBytes]
		// Eight pixels a byte while there are eight, then the rest.
		for i := range w / 8 {
			p := row[i*8 : i*8+8]
			packed[i] = p[0]>>7<<7 | p[1]>>7<<6 | p[2]>>7<<5 | p[3]>>7<<4 |
				p[4]>>7<<3 | p[5]>>7<<2 | p[6]>>7<<1 | p[7]>>7
		}
		for x := w &^ 7; x < w; x++ {
			packed[x/8] |= row[x] >> 7 << (7 - x%8)
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
