package export

// Mending a source's stream framing for PDF/A (issue 51). ISO 19005-2
// 6.1.7.1 wants the keyword stream followed by CR LF or LF, and the
// stream's Length bytes followed by an end of line and endstream; PDFBox
// Preflight takes only CR LF or LF for that end of line. Scanners write
// streams without it, or with a CR alone, and readers do not mind. The
// update mends such a stream by writing the object again, under its own
// number, with the same dictionary and the same data, byte for byte (the
// Length bytes every reader reads), framed as PDF/A asks; the source's
// copy stays in the file, superseded, so the file still begins with the
// source's bytes and every page draws from the same data. A source's
// cross-reference streams are mended too: readers reach them by their
// offsets, not their numbers, so the copy is read by validators alone
// (PDFBox lists them among the file's objects and checks their framing).

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// framedData returns the data of the stream whose data begins at data in
// src, Length bytes long, and whether its framing is already as PDF/A
// asks. ok is false when the Length does not end at endstream (after at
// most an end of line): the data is then not known for sure.
func framedData(src []byte, data, length int64) (b []byte, conforms, ok bool) {
	if data < 1 || length < 0 || data+length > int64(len(src)) {
		return nil, false, false
	}
	b = src[data : data+length]
	head := bytes.HasSuffix(src[:data], []byte("stream\n")) || bytes.HasSuffix(src[:data], []byte("stream\r\n"))
	rest := src[data+length:]
	switch {
	case bytes.HasPrefix(rest, []byte("\r\nendstream")), bytes.HasPrefix(rest, []byte("\nendstream")):
		return b, head, true
	case bytes.HasPrefix(rest, []byte("\rendstream")), bytes.HasPrefix(rest, []byte("endstream")):
		return b, false, true
	}
	return nil, false, false
}

// streamOf is the stream dictionary of a table object, nil for others.
func streamOf(o types.Object) *types.StreamDict {
	switch o := o.(type) {
	case types.StreamDict:
		return &o
	case types.ObjectStreamDict:
		return &o.StreamDict
	case types.XRefStreamDict:
		return &o.StreamDict
	}
	return nil
}

// badFraming says which stream of src breaks 6.1.7.1 so that it cannot be
// mended (its Length does not end at endstream), "" when none.
func badFraming(ctx *model.Context, src []byte) string {
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Compressed {
			continue
		}
		if sd := streamOf(e.Object); sd != nil {
			if _, _, ok := framedData(src, sd.StreamOffset, streamLength(ctx, sd)); !ok {
				return fmt.Sprintf("object %d: a stream's Length does not match its data", n)
			}
		}
	}
	return ""
}

// streamLength is a stream's Length, -1 when it has none that is read.
func streamLength(ctx *model.Context, sd *types.StreamDict) int64 {
	if l, err := ctx.DereferenceInteger(sd.Dict["Length"]); err == nil && l != nil {
		return int64(l.Value())
	}
	return -1
}

// mendStreams writes again every stream of src whose framing breaks
// 6.1.7.1 (badFraming found none it cannot mend), and returns how many it
// mended.
func (u *update) mendStreams(ctx *model.Context, src []byte) int {
	mended := 0
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Compressed {
			continue
		}
		sd := streamOf(e.Object)
		if sd == nil {
			continue
		}
		data, conforms, ok := framedData(src, sd.StreamOffset, streamLength(ctx, sd))
		if conforms || !ok {
			continue
		}
		gen := 0
		if e.Generation != nil {
			gen = *e.Generation
		}
		mended++
		d := types.Dict{}
		maps.Copy(d, sd.Dict)
		d["Length"] = types.Integer(len(data))
		u.offsets[n] = [2]int64{int64(u.buf.Len()), int64(gen)}
		fmt.Fprintf(&u.buf, "%d %d obj\n%s\nstream\n", n, gen, d.PDFString())
		u.buf.Write(data)
		u.buf.WriteString("\nendstream\nendobj\n")
	}
	return mended
}
