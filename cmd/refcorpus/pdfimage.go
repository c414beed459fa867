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
