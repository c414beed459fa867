package admit

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
)

// This file reads the sizes that compressed images declare in their own
// headers, which the renderer's decoders allocate by whatever the image
// dictionary says: a JBIG2 page information segment, a JPEG frame header
// (SOF), a JPEG 2000 image header box and SIZ marker. Only the headers
// are read, within a window of the decoded bytes, never the image data.

// hdrWindow is how far into a filtered image's decoded bytes the header
// is looked for; an unfiltered image is walked to its end, since its bytes
// are already in memory. Real JPEG headers (a few APPn segments of at
// most 64 KiB each) and JBIG2 page headers come in the first kilobytes.
const hdrWindow = 1 << 20

// errHeaderBeyond means the window ended before the header was found:
// the renderer would go on reading, so admission cannot tell the size.
var errHeaderBeyond = errors.New("no header within the window")

// sizeCheck judges a size a header declares; what names the header.
type sizeCheck func(what string, w, h int64) error

// hdrReader reads a header from the first limit bytes of a stream,
// never past them, so that a content stream's lexer can go on after an
// inline image's header.
type hdrReader struct {
	br    *bufio.Reader
	limit int64
	n     int64
	buf   [32]byte
}

// newHdrReader reads r, or r's own buffer when it is a *bufio.Reader.
func newHdrReader(r io.Reader, limit int64) *hdrReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 4096)
	}
	return &hdrReader{br: br, limit: limit}
}

// read returns the next n (≤ 32) bytes. At the end of the data it returns
// io.EOF, or errHeaderBeyond when the limit, not the data, ended.
func (h *hdrReader) read(n int) ([]byte, error) {
	if h.n+int64(n) > h.limit {
		return nil, errHeaderBeyond
	}
	k, err := io.ReadFull(h.br, h.buf[:n])
	h.n += int64(k)
	if err != nil {
		return nil, eof(err)
	}
	return h.buf[:n], nil
}

// skip discards n bytes.
func (h *hdrReader) skip(n int64) error {
	if h.n+n > h.limit {
		return errHeaderBeyond
	}
	for n > 0 {
		k, err := h.br.Discard(int(min(n, 1<<30)))
		h.n += int64(k)
		n -= int64(k)
		if err != nil {
			return eof(err)
		}
	}
	return nil
}

// eof is io.EOF for any read error but the budget's: a broken stream ends
// the renderer's data too.
func eof(err error) error {
	if errors.Is(err, errOverBudget) {
		return err
	}
	return io.EOF
}

// ended maps the end of the data to nil: a header cut short is an image
// the renderer cannot decode either.
func ended(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// jpegSizes checks the size in a JPEG's frame header (SOFn). A stream
// that is not a JPEG, or reaches its scan first, has none.
func jpegSizes(h *hdrReader, check sizeCheck) error {
	b, err := h.read(2)
	if err != nil || b[0] != 0xff || b[1] != 0xd8 {
		return ended(err)
	}
	for {
		b, err := h.read(1)
		if err != nil {
			return ended(err)
		}
		if b[0] != 0xff {
			continue // junk between segments: libjpeg skips it too
		}
		m := byte(0xff)
		for m == 0xff {
			if b, err = h.read(1); err != nil {
				return ended(err)
			}
			m = b[0]
		}
		switch {
		case m == 0x00 || m == 0x01 || m >= 0xd0 && m <= 0xd8:
			continue // no length
		case m == 0xd9 || m == 0xda:
			return nil // end of image, or a scan before any frame
		}
		if b, err = h.read(2); err != nil {
			return ended(err)
		}
		length := int64(binary.BigEndian.Uint16(b))
		if isSOF(m) {
			if b, err = h.read(5); err != nil {
				return ended(err)
			}
			return check("JPEG frame header", int64(binary.BigEndian.Uint16(b[3:])), int64(binary.BigEndian.Uint16(b[1:])))
		}
		if err := h.skip(length - 2); err != nil {
			return ended(err)
		}
	}
}

// isSOF reports whether a marker starts a frame: SOF0–SOF15 except DHT
// (C4), JPG (C8) and DAC (CC).
func isSOF(m byte) bool {
	return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc
}

// jpxSizes checks the sizes in a JPEG 2000 file: the JP2 image header box
// (ihdr) and the codestream's SIZ marker, or the SIZ of a bare
// codestream.
func jpxSizes(h *hdrReader, check sizeCheck) error {
	b, err := h.read(4)
	if err != nil {
		return ended(err)
	}
	if b[0] == 0xff && b[1] == 0x4f && b[2] == 0xff && b[3] == 0x51 {
		return sizSize(h, check)
	}
	box := binary.BigEndian.Uint32(b)
	return jp2Boxes(h, int64(box), check)
}

// jp2Boxes walks JP2 boxes, first's length already read, descending into
// the header superbox and stopping at the codestream.
func jp2Boxes(h *hdrReader, length int64, check sizeCheck) error {
	for {
		b, err := h.read(4)
		if err != nil {
			return ended(err)
		}
		typ := string(b)
		hdr := int64(8)
		if length == 1 {
			if b, err = h.read(8); err != nil {
				return ended(err)
			}
			length, hdr = int64(binary.BigEndian.Uint64(b)&(1<<62-1)), 16
		}
		switch typ {
		case "jp2h":
			length = hdr // its boxes follow
		case "ihdr":
			if b, err = h.read(8); err != nil {
				return ended(err)
			}
			if err := check("JPEG 2000 image header", int64(binary.BigEndian.Uint32(b[4:])), int64(binary.BigEndian.Uint32(b))); err != nil {
				return err
			}
			hdr += 8
		case "jp2c":
			if b, err = h.read(4); err != nil {
				return ended(err)
			}
			if b[0] != 0xff || b[1] != 0x4f || b[2] != 0xff || b[3] != 0x51 {
				return nil
			}
			return sizSize(h, check)
		}
		if length == 0 {
			return nil // the last box, to the end: no codestream
		}
		if length < hdr {
			return nil // a broken box: the decoder stops there too
		}
		if err := h.skip(length - hdr); err != nil {
			return ended(err)
		}
		if b, err = h.read(4); err != nil {
			return ended(err)
		}
		length = int64(binary.BigEndian.Uint32(b))
	}
}

// sizSize checks a codestream's SIZ marker segment, its FF4F FF51 read:
// the image area is Xsiz−XOsiz by Ysiz−YOsiz.
func sizSize(h *hdrReader, check sizeCheck) error {
	b, err := h.read(20)
	if err != nil {
		return ended(err)
	}
	x, y := int64(binary.BigEndian.Uint32(b[4:])), int64(binary.BigEndian.Uint32(b[8:]))
	x0, y0 := int64(binary.BigEndian.Uint32(b[12:])), int64(binary.BigEndian.Uint32(b[16:]))
	return check("JPEG 2000 SIZ marker", max(x-x0, 0), max(y-y0, 0))
}
