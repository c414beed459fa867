package admit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// The sizes the image codecs' own headers declare, read by the header
// walkers alone: each case is a header laid out one way a file may lay it
// out, and want is every size the walker hands its check, in order. A
// walker that loses its place in the bytes reads no size or a wrong one.

// headerSizes runs walk over data within limit and returns the sizes it
// checked as "what w×h".
func headerSizes(walk func(*hdrReader, sizeCheck) error, data []byte, limit int64) ([]string, error) {
	var got []string
	err := walk(newHdrReader(bytes.NewReader(data), limit), func(what string, w, h int64) error {
		got = append(got, fmt.Sprintf("%s %d×%d", what, w, h))
		return nil
	})
	return got, err
}

type headerCase struct {
	name  string
	data  []byte
	limit int64 // 0: no limit
	want  []string
	err   error
}

func runHeaderCases(t *testing.T, walk func(*hdrReader, sizeCheck) error, cases []headerCase) {
	t.Helper()
	for _, c := range cases {
		limit := c.limit
		if limit == 0 {
			limit = 1 << 40
		}
		got, err := headerSizes(walk, c.data, limit)
		if !slices.Equal(got, c.want) || !errors.Is(err, c.err) {
			t.Errorf("%s: got %q, %v; want %q, %v", c.name, got, err, c.want, c.err)
		}
	}
}

// jpegSeg is a JPEG marker segment with its length.
func jpegSeg(m byte, payload ...byte) []byte {
	return append([]byte{0xff, m, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)}, payload...)
}

// jpegSOF is a one-component frame header of w×h px under marker m.
func jpegSOF(m byte, w, h uint16) []byte {
	return jpegSeg(m, 8, byte(h>>8), byte(h), byte(w>>8), byte(w), 1, 1, 0x11, 0)
}

func jpeg(parts ...[]byte) []byte {
	return slices.Concat(append([][]byte{{0xff, 0xd8}}, parts...)...)
}

func TestJPEGHeaderSizes(t *testing.T) {
	t.Parallel()
	app := jpegSeg(0xe0, make([]byte, 14)...)
	frame := "JPEG frame header 300×200"
	cases := []headerCase{
		{name: "baseline after APP0", data: jpeg(app, jpegSOF(0xc0, 300, 200)), want: []string{frame}},
		{name: "not a JPEG", data: slices.Concat([]byte{0xff, 0xd9}, jpegSOF(0xc0, 300, 200))},
		{name: "half a signature", data: []byte{0xff, 0x00}},
		{name: "empty", data: nil},
		{name: "junk and fill bytes", data: jpeg([]byte{1, 2, 0xff, 0xff}, jpegSOF(0xc2, 300, 200)[1:]), want: []string{frame}},
		{name: "markers without a length", data: jpeg([]byte{0xff, 0x01, 0xff, 0x00, 0xff, 0xd0, 0xff, 0xd7, 0xff, 0xd8}, jpegSOF(0xc1, 300, 200)), want: []string{frame}},
		{name: "end of image first", data: jpeg([]byte{0xff, 0xd9}, jpegSOF(0xc0, 300, 200))},
		{name: "a scan first", data: jpeg([]byte{0xff, 0xda}, jpegSOF(0xc0, 300, 200))},
		{name: "DHT, JPG and DAC are not frames", data: jpeg(jpegSOF(0xc4, 1, 1), jpegSOF(0xc8, 2, 2), jpegSOF(0xcc, 3, 3), jpegSOF(0xc0, 300, 200)), want: []string{frame}},
		{name: "SOF15", data: jpeg(jpegSOF(0xcf, 300, 200)), want: []string{frame}},
		{name: "APP15 and COM are not frames", data: jpeg(jpegSOF(0xef, 1, 1), jpegSOF(0xfe, 2, 2), jpegSOF(0xbf, 3, 3), jpegSOF(0xc3, 300, 200)), want: []string{frame}},
		{name: "cut in the frame", data: jpeg(app, jpegSOF(0xc0, 300, 200)[:6])},
		{name: "cut in a length", data: jpeg([]byte{0xff, 0xe0, 0})},
		{name: "cut after a marker's fill", data: jpeg([]byte{0xff, 0xff})},
		{name: "frame within the window", data: jpeg(app, jpegSOF(0xc0, 300, 200)), limit: 2 + 18 + 9, want: []string{frame}},
		{name: "frame past the window", data: jpeg(app, jpegSOF(0xc0, 300, 200)), limit: 2 + 18 + 8, err: errHeaderBeyond},
		{name: "segment past the window", data: jpeg(app, jpegSOF(0xc0, 300, 200)), limit: 19, err: errHeaderBeyond},
		{name: "segment past the window and the data", data: jpeg([]byte{0xff, 0xe1, 0xff, 0xff}, make([]byte, 20)), limit: 30, err: errHeaderBeyond},
		{name: "segment past the data only", data: jpeg([]byte{0xff, 0xe1, 0xff, 0xff}, make([]byte, 20))},
	}
	runHeaderCases(t, jpegSizes, cases)
}

// jp2Box is a JP2 box with a 32-bit length.
func jp2Box(typ string, payload ...byte) []byte {
	return append(append(binary.BigEndian.AppendUint32(nil, uint32(8+len(payload))), typ...), payload...)
}

// jpxSIZ is a codestream's start and SIZ marker segment: an image area
// from (x0, y0) to (x, y).
func jpxSIZ(x, y, x0, y0 uint32) []byte {
	u32 := binary.BigEndian.AppendUint32
	b := []byte{0xff, 0x4f, 0xff, 0x51, 0, 41, 0, 0}
	return append(u32(u32(u32(u32(b, x), y), x0), y0), make([]byte, 20)...)
}

func jpxIHDR(w, h uint32) []byte {
	u32 := binary.BigEndian.AppendUint32
	return jp2Box("ihdr", append(u32(u32(nil, h), w), 0, 1, 7, 7, 0, 0)...)
}

func TestJPEG2000HeaderSizes(t *testing.T) {
	t.Parallel()
	sig := jp2Box("jP  ", []byte("\r\n\x87\n")...)
	ftyp := jp2Box("ftyp", []byte("jp2 \x00\x00\x00\x00jp2 ")...)
	xlFtyp := append(binary.BigEndian.AppendUint64([]byte("\x00\x00\x00\x01ftyp"), 16+12), "jp2 \x00\x00\x00\x00jp2 "...)
	ihdr, siz := "JPEG 2000 image header 300×200", "JPEG 2000 SIZ marker 300×200"
	jp2c := jp2Box("jp2c", jpxSIZ(300, 200, 0, 0)...)
	cases := []headerCase{
		{name: "JP2", data: slices.Concat(sig, ftyp, jp2Box("jp2h", jpxIHDR(300, 200)...), jp2c), want: []string{ihdr, siz}},
		{name: "JP2, an extended box length", data: slices.Concat(sig, xlFtyp, jp2Box("jp2h", jpxIHDR(300, 200)...), jp2c), want: []string{ihdr, siz}},
		{name: "JP2, boxes after the image header", data: slices.Concat(sig, jp2Box("jp2h", slices.Concat(jpxIHDR(300, 200), jp2Box("colr", 1, 0, 0, 0, 16))...), jp2c), want: []string{ihdr, siz}},
		{name: "a first box 81 bytes long", data: slices.Concat(jp2Box("free", make([]byte, 73)...), jp2Box("jp2h", jpxIHDR(300, 200)...)), want: []string{ihdr}},
		{name: "a bare codestream", data: jpxSIZ(500, 400, 200, 200), want: []string{siz}},
		{name: "an origin past the end", data: jpxSIZ(500, 400, 600, 0), want: []string{"JPEG 2000 SIZ marker 0×400"}},
		{name: "the last box has length 0", data: slices.Concat(sig, []byte("\x00\x00\x00\x00free"), jp2Box("jp2h", jpxIHDR(300, 200)...))},
		{name: "a box shorter than its header", data: slices.Concat(sig, []byte("\x00\x00\x00\x07free"), jp2Box("jp2h", jpxIHDR(300, 200)...))},
		{name: "a codestream box that is not one", data: slices.Concat(sig, jp2Box("jp2c", 0xff, 0x4f, 0xff, 0x52), jpxSIZ(300, 200, 0, 0))},
		{name: "cut in the SIZ marker", data: jpxSIZ(500, 400, 0, 0)[:20]},
		{name: "cut in the image header", data: slices.Concat(sig, jp2Box("jp2h", jpxIHDR(300, 200)...)[:20])},
		{name: "cut in an extended length", data: []byte("\x00\x00\x00\x01ftyp\x00\x00")},
		{name: "empty", data: nil},
		{name: "the codestream past the window", data: slices.Concat(sig, jp2c), limit: 12 + 8 + 4 + 19, err: errHeaderBeyond},
		{name: "the codestream within the window", data: slices.Concat(sig, jp2c), limit: 12 + 8 + 4 + 20, want: []string{siz}},
	}
	runHeaderCases(t, jpxSizes, cases)
}

// jbig2Seg is a JBIG2 segment header and data: nr, a type with its flags,
// refs referred-to segments of refSize bytes each, and a page association
// of 1 byte (4 with typ's 0x40 flag).
func jbig2Seg(nr uint32, typ byte, refs, refSize int, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, nr)
	b = append(b, typ, byte(refs<<5))
	b = append(b, make([]byte, refs*refSize)...)
	if typ&0x40 != 0 {
		b = append(b, 0, 0, 0, 1)
	} else {
		b = append(b, 1)
	}
	return append(binary.BigEndian.AppendUint32(b, uint32(len(data))), data...)
}

// jbig2Info is a page information segment's data: w×h, striped in
// stripes of stripe rows when stripe is not 0.
func jbig2Info(w, h uint32, stripe uint16) []byte {
	b := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h)
	b = append(b, make([]byte, 9)...)
	if stripe != 0 {
		stripe |= 0x8000
	}
	return binary.BigEndian.AppendUint16(b, stripe)
}

func jbig2RegionInfo(w, h uint32) []byte {
	return append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h), make([]byte, 9)...)
}

func TestJBIG2HeaderSizes(t *testing.T) {
	t.Parallel()
	page := jbig2Seg(0, jbig2PageInfo, 0, 0, jbig2Info(300, 200, 0))
	pageWant := "JBIG2 page information 300×200"
	stripe := func(row uint32) []byte {
		return jbig2Seg(2, jbig2EndOfStripe, 0, 0, binary.BigEndian.AppendUint32(nil, row))
	}
	// A header whose referred-to count takes the long form (T.88
	// 7.2.4): 9 segments, then 2 bytes of retention flags.
	long := binary.BigEndian.AppendUint32(nil, 1)
	long = append(long, jbig2PageInfo, 0xe0, 0, 0, 9, 0, 0)
	long = append(long, make([]byte, 9)...) // 9 one-byte segment numbers
	long = append(long, 1)                  // page association
	long = binary.BigEndian.AppendUint32(long, 19)
	long = append(long, jbig2Info(300, 200, 0)...)
	var regions []byte
	var regionWant []string
	for i, typ := range []byte{4, 6, 7, 20, 22, 23, 36, 38, 39, 40, 42, 43} {
		regions = append(regions, jbig2Seg(uint32(i+1), typ, 0, 0, jbig2RegionInfo(uint32(i+1), 7))...)
		regionWant = append(regionWant, fmt.Sprintf("JBIG2 region segment %d×7", i+1))
	}
	cases := []headerCase{
		{name: "page information", data: page, want: []string{pageWant}},
		{name: "after a segment of another type", data: slices.Concat(jbig2Seg(0, 0, 0, 0, make([]byte, 30)), page), want: []string{pageWant}},
		{name: "a striped page and its stripes", data: slices.Concat(jbig2Seg(0, jbig2PageInfo, 0, 0, jbig2Info(300, 0xffffffff, 128)), stripe(127), stripe(999)),
			want: []string{"JBIG2 page information 300×128", "JBIG2 end of stripe 300×128", "JBIG2 end of stripe 300×1000"}},
		{name: "end of stripe of a page of known height", data: slices.Concat(page, stripe(999)), want: []string{pageWant}},
		{name: "end of stripe before any page", data: slices.Concat(stripe(999), page), want: []string{pageWant}},
		{name: "every region type", data: regions, want: regionWant},
		{name: "a type next to a region's is not one", data: slices.Concat(jbig2Seg(1, 5, 0, 0, jbig2RegionInfo(9, 9)), jbig2Seg(2, 41, 0, 0, jbig2RegionInfo(9, 9)), page), want: []string{pageWant}},
		{name: "segment 256 refers by 1 byte", data: slices.Concat(jbig2Seg(256, 0, 2, 1, make([]byte, 3)), page), want: []string{pageWant}},
		{name: "segment 257 refers by 2 bytes", data: slices.Concat(jbig2Seg(257, 0, 2, 2, make([]byte, 3)), page), want: []string{pageWant}},
		{name: "segment 65536 refers by 2 bytes", data: slices.Concat(jbig2Seg(65536, 0, 3, 2, make([]byte, 3)), page), want: []string{pageWant}},
		{name: "segment 65537 refers by 4 bytes", data: slices.Concat(jbig2Seg(65537, 0, 4, 4, make([]byte, 3)), page), want: []string{pageWant}},
		{name: "a page association of 4 bytes", data: slices.Concat(jbig2Seg(1, 0x40, 0, 0, make([]byte, 3)), page), want: []string{pageWant}},
		{name: "the long form of referred-to segments", data: long, want: []string{pageWant}},
		{name: "5 referred-to segments is no header", data: slices.Concat(jbig2Seg(1, 0, 5, 1, nil), page)},
		{name: "a region of unknown length ends the walk", data: slices.Concat(jbig2Seg(1, 38, 0, 0, jbig2RegionInfo(9, 9))[:7], []byte{0xff, 0xff, 0xff, 0xff}, jbig2RegionInfo(9, 9), page),
			want: []string{"JBIG2 region segment 9×9"}},
		{name: "cut in the page information", data: page[:20]},
		{name: "cut in a region", data: jbig2Seg(1, 38, 0, 0, jbig2RegionInfo(9, 9))[:15]},
		{name: "cut in an end of stripe", data: slices.Concat(page, stripe(5)[:13]), want: []string{pageWant}},
		{name: "cut in a long form", data: long[:8]},
		{name: "page information past the window", data: slices.Concat(jbig2Seg(0, 0, 0, 0, make([]byte, 30)), page), limit: 11 + 30 + 11 + 18, err: errHeaderBeyond},
		{name: "page information within the window", data: slices.Concat(jbig2Seg(0, 0, 0, 0, make([]byte, 30)), page), limit: 11 + 30 + 11 + 19, want: []string{pageWant}},
		{name: "the window ends in a segment before the page", data: slices.Concat(jbig2Seg(0, 0, 0, 0, make([]byte, 30)), page), limit: 20, err: errHeaderBeyond},
		{name: "the window ends in a header before the page", data: slices.Concat(jbig2Seg(0, 0, 0, 0, make([]byte, 30)), page), limit: 11 + 30 + 5, err: errHeaderBeyond},
		{name: "the window ends after the page", data: slices.Concat(page, jbig2Seg(1, 0, 0, 0, make([]byte, 30))), limit: 30 + 11 + 10, want: []string{pageWant}},
		{name: "the window ends in a segment after the page", data: slices.Concat(page, jbig2Seg(1, 0, 0, 0, make([]byte, 30))), limit: 30 + 11 + 20, want: []string{pageWant}},
	}
	runHeaderCases(t, jbig2Sizes, cases)
}
