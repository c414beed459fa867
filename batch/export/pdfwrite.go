package export

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// update is an incremental update being appended to a PDF.
type update struct {
	buf     bytes.Buffer
	next    int              // the next free object number
	offsets map[int][2]int64 // object number → offset, generation
}

// newUpdate starts an update of src whose first free object number is
// next.
func newUpdate(src []byte, next int) *update {
	u := &update{next: next, offsets: map[int][2]int64{}}
	u.buf.Grow(len(src) + 64<<10)
	u.buf.Write(src)
	if len(src) > 0 && src[len(src)-1] != '\n' && src[len(src)-1] != '\r' {
		u.buf.WriteByte('\n')
	}
	return u
}

// alloc returns a new object number.
func (u *update) alloc() int {
	n := u.next
	u.next++
	return n
}

// object writes object n (generation gen) with the given body.
func (u *update) object(n, gen int, body string) {
	u.offsets[n] = [2]int64{int64(u.buf.Len()), int64(gen)}
	fmt.Fprintf(&u.buf, "%d %d obj\n%s\nendobj\n", n, gen, body)
}

// stream writes a new stream object holding data, compressed, and returns
// its reference. d is its dictionary without /Length and /Filter.
func (u *update) stream(d types.Dict, data []byte) types.IndirectRef {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	w.Write(data)
	w.Close()
	return u.rawStream(d, z.Bytes(), "FlateDecode")
}

// rawStream writes a new stream object whose data is already encoded
// with filter ("" for none).
func (u *update) rawStream(d types.Dict, data []byte, filter string) types.IndirectRef {
	n := u.alloc()
	if filter != "" {
		d["Filter"] = types.Name(filter)
	}
	d["Length"] = types.Integer(len(data))
	u.offsets[n] = [2]int64{int64(u.buf.Len()), 0}
	fmt.Fprintf(&u.buf, "%d 0 obj\n%s\nstream\n", n, d.PDFString())
	u.buf.Write(data)
	u.buf.WriteString("\nendstream\nendobj\n")
	return *types.NewIndirectRef(n, 0)
}

// finish writes the cross-reference section, as a stream when xrefStream
// (the source's last section is one), and the trailer, and returns the
// whole file. trailer holds /Root, /Info, /Prev and /ID.
func (u *update) finish(trailer types.Dict, xrefStream bool) []byte {
	if xrefStream {
		n := u.alloc()
		at := int64(u.buf.Len())
		u.offsets[n] = [2]int64{at, 0}
		nums := slices.Sorted(maps.Keys(u.offsets))
		var data bytes.Buffer
		var index types.Array
		for _, run := range runs(nums) {
			index = append(index, types.Integer(run[0]), types.Integer(run[1]))
			for k := range run[1] {
				e := u.offsets[run[0]+k]
				var row [7]byte
				row[0] = 1
				if run[0]+k == 0 {
					row[0] = 0 // the head of the free list
				}
				binary.BigEndian.PutUint32(row[1:5], uint32(e[0]))
				binary.BigEndian.PutUint16(row[5:7], uint16(e[1]))
				data.Write(row[:])
			}
		}
		trailer["Type"] = types.Name("XRef")
		trailer["Size"] = types.Integer(u.next)
		trailer["W"] = types.Array{types.Integer(1), types.Integer(4), types.Integer(2)}
		trailer["Index"] = index
		trailer["Length"] = types.Integer(data.Len())
		fmt.Fprintf(&u.buf, "%d 0 obj\n%s\nstream\n", n, trailer.PDFString())
		u.buf.Write(data.Bytes())
		fmt.Fprintf(&u.buf, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
		return u.buf.Bytes()
	}
	at := u.buf.Len()
	u.buf.WriteString("xref\n")
	nums := slices.Sorted(maps.Keys(u.offsets))
	for _, run := range runs(nums) {
		fmt.Fprintf(&u.buf, "%d %d\n", run[0], run[1])
		for k := range run[1] {
			e := u.offsets[run[0]+k]
			kind := 'n'
			if run[0]+k == 0 {
				kind = 'f' // the head of the free list
			}
			fmt.Fprintf(&u.buf, "%010d %05d %c\r\n", e[0], e[1], kind)
		}
	}
	trailer["Size"] = types.Integer(u.next)
	fmt.Fprintf(&u.buf, "trailer\n%s\nstartxref\n%d\n%%%%EOF\n", trailer.PDFString(), at)
	return u.buf.Bytes()
}

// runs groups sorted numbers into runs of consecutive ones: first, count.
func runs(nums []int) [][2]int {
	var out [][2]int
	for _, n := range nums {
		if l := len(out); l > 0 && out[l-1][0]+out[l-1][1] == n {
			out[l-1][1]++
			continue
		}
		out = append(out, [2]int{n, 1})
	}
	return out
}

// startxrefRe finds the last startxref of a file in its tail.
var startxrefRe = regexp.MustCompile(`startxref\s+(\d+)`)

// lastXRef returns the offset of src's last cross-reference section, the
// one its final startxref names, and whether that section is a stream.
// An update's /Prev must name it, and its own section must be of the same
// kind for readers of cross-reference streams.
func lastXRef(src []byte) (int64, bool, error) {
	tail := src[max(0, len(src)-2048):]
	all := startxrefRe.FindAllSubmatch(tail, -1)
	if len(all) == 0 {
		return 0, false, errors.New("the source has no startxref")
	}
	off, err := strconv.ParseInt(string(all[len(all)-1][1]), 10, 64)
	if err != nil || off <= 0 || off >= int64(len(src)) {
		return 0, false, fmt.Errorf("the source's startxref %q is outside the file", all[len(all)-1][1])
	}
	at := bytes.TrimLeft(src[off:], " \t\r\n\f\x00")
	switch {
	case bytes.HasPrefix(at, []byte("xref")):
		return off, false, nil
	case objHeaderRe.Match(at[:min(len(at), 32)]):
		return off, true, nil
	}
	return 0, false, errDamagedXRef
}

// errDamagedXRef: the source's startxref does not lead to its
// cross-reference section.
var errDamagedXRef = errors.New("the source's startxref names no cross-reference section (a damaged file)")

// objectOffsets is where each object of a source whose cross-reference
// section is damaged really is, as pdfcpu found them when it repaired the
// file on reading, each checked against the object's header in src. The
// update's section then lists every object, the free head 0 included, and
// names no /Prev: readers find the source's objects without a repair of
// their own. Objects inside object streams cannot be listed so, and such
// a file is refused.
func objectOffsets(ctx *model.Context, src []byte) (map[int][2]int64, error) {
	out := map[int][2]int64{0: {0, 65535}}
	for n, e := range ctx.Table {
		if n == 0 || e == nil || e.Free || e.Offset == nil {
			continue
		}
		gen := 0
		if e.Generation != nil {
			gen = *e.Generation
		}
		off := *e.Offset
		if e.Compressed || off <= 0 || off >= int64(len(src)) ||
			!bytes.HasPrefix(src[off:], fmt.Appendf(nil, "%d %d obj", n, gen)) {
			return nil, fmt.Errorf("%w, and object %d cannot be located for a new one", errDamagedXRef, n)
		}
		out[n] = [2]int64{off, int64(gen)}
	}
	return out, nil
}

// objHeaderRe matches the start of an indirect object, "12 0 obj".
var objHeaderRe = regexp.MustCompile(`^\d+\s+\d+\s+obj\b`)
