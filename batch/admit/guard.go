package admit

import (
	"bytes"
	"compress/zlib"
	"encoding/ascii85"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unsafe"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/report/outcome"
)

// maxInflated caps the decoded bytes of the streams pdfcpu decodes in full
// while reading and validating: xref streams, object streams and the
// catalog's XMP metadata. pdfcpu decodes them into memory with no limit,
// in the parent process: without this cap testdata/admit/bomb-metadata.pdf
// (694 bytes) made it allocate 2 GB in 4 s. Real files decode these
// streams to a few MB.
const maxInflated = 256 << 20

// dictWindow is the longest stream dictionary the raw scan reads.
const dictWindow = 64 << 10

// inflation tracks the decode budget of one file.
type inflation struct {
	left int64
}

// checkRawStreams finds, without pdfcpu, the streams pdfcpu.Read will
// decode in full and decodes each within the budget: any stream with /First
// and /N (pdfcpu takes it for an object stream without checking /Type), any
// /Type /XRef stream, and any stream that a startxref or /Prev offset names
// (pdfcpu decodes whatever it finds there as an xref stream).
func (inf *inflation) checkRawStreams(data []byte) *Rejection {
	streams := scanStreams(data)
	xrefAt := map[int]bool{}
	for _, off := range startxrefOffsets(data) {
		xrefAt[off] = true
	}
	for _, s := range streams {
		if prev := s.dict.IntEntry("Prev"); prev != nil {
			xrefAt[*prev] = true
		}
	}
	for _, s := range streams {
		_, hasFirst := s.dict.Find("First")
		_, hasN := s.dict.Find("N")
		t := s.dict.Type()
		if !(hasFirst && hasN) && !(t != nil && *t == "XRef") && !xrefAt[s.offset] {
			continue
		}
		if r := inf.spend(s.raw, pipeline(s.dict), s.dict, fmt.Sprintf("stream object %d", s.objNr)); r != nil {
			return r
		}
	}
	return nil
}

// checkMetadata decodes, within the budget, the catalog's /Metadata stream
// that validation decodes in full.
func (inf *inflation) checkMetadata(xt *model.XRefTable) *Rejection {
	root, err := xt.Catalog()
	if err != nil || root == nil {
		return nil // validation reports it
	}
	o, ok := root.Find("Metadata")
	if !ok {
		return nil
	}
	o, err = xt.Dereference(o)
	if err != nil {
		return nil
	}
	sd, ok := o.(types.StreamDict)
	if !ok {
		return nil
	}
	return inf.spend(sd.Raw, sd.FilterPipeline, sd.Dict, "the metadata stream")
}

// spend decodes raw through the filters, never holding more than the
// remaining budget, and rejects the file once the budget is exhausted.
// A filter pdfcpu does not decode, or data that stops decoding, ends the
// walk there, as it ends pdfcpu's.
func (inf *inflation) spend(raw []byte, filters []types.PDFFilter, d types.Dict, what string) *Rejection {
	cur := raw
	for i, f := range filters {
		last := i == len(filters)-1
		var (
			size int64
			out  []byte
			stop bool
		)
		parms := filterParms(f.DecodeParms)
		switch f.Name {
		case filter.Flate:
			size, out, stop = inflate(cur, inf.left, last)
		case filter.RunLength:
			size, out = runLength(cur, inf.left, last)
		case filter.CCITTFax:
			// Bitonal rows: the size follows from the parameters, and
			// pdfcpu's decoder ignores any length limit.
			size, stop = ccittSize(parms, d), true
		case filter.ASCIIHex:
			out, stop = asciiHex(cur), false
			size = int64(len(out))
		case filter.ASCII85:
			size, out, stop = ascii85Decode(cur, inf.left)
		case filter.LZW:
			size, out, stop = viaPDFCPU(cur, f.Name, parms, inf.left)
		default:
			stop = true // DCT, JPX, JBIG2, Crypt: pdfcpu leaves them encoded
		}
		if size > inf.left {
			return reject(outcome.MalformedPDF, "%s decodes to more than %d MiB (a decompression bomb)", what, maxInflated>>20)
		}
		if stop || last {
			inf.left -= size
			return nil
		}
		cur = out
	}
	inf.left -= int64(len(cur))
	return nil
}

// inflate decodes Flate data up to limit+1 bytes, keeping them only when
// a later filter needs them. Broken data counts as far as it decodes, as
// pdfcpu tolerates truncated zlib streams.
func inflate(b []byte, limit int64, countOnly bool) (size int64, out []byte, stop bool) {
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return 0, nil, true
	}
	r := io.LimitReader(zr, limit+1)
	if countOnly {
		size, _ = io.Copy(io.Discard, r)
		return size, nil, false
	}
	out, _ = io.ReadAll(r)
	return int64(len(out)), out, false
}

// runLength decodes RunLengthDecode data (ISO 32000 7.4.5), or only
// counts its length when nothing follows it.
func runLength(b []byte, limit int64, countOnly bool) (size int64, out []byte) {
	for i := 0; i < len(b) && size <= limit; {
		n := int(b[i])
		i++
		switch {
		case n == 128:
			return size, out
		case n < 128:
			end := min(i+n+1, len(b))
			if !countOnly {
				out = append(out, b[i:end]...)
			}
			size += int64(end - i)
			i = end
		case i < len(b):
			if !countOnly {
				out = append(out, bytes.Repeat(b[i:i+1], 257-n)...)
			}
			size += int64(257 - n)
			i++
		}
	}
	return size, out
}

// ccittSize is the decoded size of a CCITT stream: whole bytes per row
// times rows, with pdfcpu's defaults (1728 columns, rows from /Height).
func ccittSize(parms map[string]int, d types.Dict) int64 {
	rows, ok := parms["Rows"]
	if h := d.IntEntry("Height"); !ok && h != nil {
		rows = *h
	}
	cols, ok := parms["Columns"]
	if !ok {
		cols = 1728
	}
	if rows <= 0 || cols <= 0 {
		return 0
	}
	return (int64(cols) + 7) / 8 * int64(rows)
}

// asciiHex decodes ASCIIHexDecode data as pdfcpu does: white space
// skipped, ">" ends it, an odd last digit is padded with 0. It only
// shrinks data, so it needs no limit.
func asciiHex(b []byte) []byte {
	digits := make([]byte, 0, len(b))
	for _, c := range b {
		if c == '>' {
			break
		}
		if !isSpace(c) {
			digits = append(digits, c)
		}
	}
	if len(digits)%2 == 1 {
		digits = append(digits, '0')
	}
	out := make([]byte, len(digits)/2)
	n, _ := hex.Decode(out, digits)
	return out[:n]
}

// ascii85Decode decodes ASCII85Decode data up to its "~>" marker.
func ascii85Decode(b []byte, limit int64) (size int64, out []byte, stop bool) {
	if i := bytes.Index(b, []byte("~>")); i >= 0 {
		b = b[:i]
	}
	out, err := io.ReadAll(io.LimitReader(ascii85.NewDecoder(bytes.NewReader(b)), limit+1))
	if err != nil && len(out) == 0 {
		return 0, nil, true
	}
	return int64(len(out)), out, false
}

// viaPDFCPU runs one of pdfcpu's own decoders, which stop at a length.
func viaPDFCPU(b []byte, name string, parms map[string]int, limit int64) (size int64, out []byte, stop bool) {
	fi, err := filter.NewFilter(name, parms)
	if err != nil {
		return 0, nil, true
	}
	r, err := fi.DecodeLength(bytes.NewReader(b), limit+1)
	if err != nil {
		return 0, nil, true
	}
	out, err = io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return 0, nil, true
	}
	return int64(len(out)), out, false
}

// rawStream is a stream found by scanning the bytes.
type rawStream struct {
	objNr  int
	offset int // of the "N G obj" header
	dict   types.Dict
	raw    []byte
}

// scanStreams finds every "N G obj << ... >> stream" in data by trying
// each object header it meets, so a dictionary that quotes "obj" or
// "stream" in a string cannot hide its stream. A stream dictionary longer
// than dictWindow is not seen.
func scanStreams(data []byte) []rawStream {
	var out []rawStream
	// Where every "endstream" is, found once: a stream's end is the first
	// after its start. Searching the rest of the file for each stream was
	// quadratic in a file of streams without one
	// (testdata/admit/hostile/stream-flood.pdf: 73 s for 2 MB).
	var ends []int
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte("endstream"))
		if i < 0 {
			break
		}
		ends = append(ends, off+i)
		off += i + len("endstream")
	}
	kw := []byte("obj")
	for off := 0; ; {
		i := bytes.Index(data[off:], kw)
		if i < 0 {
			return out
		}
		p := off + i
		off = p + len(kw)
		if p >= 3 && string(data[p-3:p]) == "end" {
			continue
		}
		objNr, header, ok := objHeader(data, p)
		if !ok {
			continue
		}
		if s, ok := streamAt(data, off, ends); ok {
			s.objNr, s.offset = objNr, header
			out = append(out, s)
		}
	}
}

// streamAt parses the object that starts at data[at:] (just after "obj")
// and returns it if it is a stream; ends are the offsets of every
// "endstream" in data, in order.
func streamAt(data []byte, at int, ends []int) (rawStream, bool) {
	n := min(len(data)-at, dictWindow)
	if n <= 0 {
		return rawStream{}, false
	}
	// A zero-copy view: data is never written while admission runs, and
	// copying a window per object would cost more than parsing it.
	s := unsafe.String(&data[at], n)
	o, err := model.ParseObject(&s)
	if err != nil {
		return rawStream{}, false
	}
	d, ok := o.(types.Dict)
	if !ok {
		return rawStream{}, false
	}
	rest := skipSpace(data[at+n-len(s):])
	if !bytes.HasPrefix(rest, []byte("stream")) {
		return rawStream{}, false
	}
	start := len(data) - len(rest) + len("stream")
	for start < len(data) && data[start] == ' ' {
		start++
	}
	if start < len(data) && data[start] != '\r' && data[start] != '\n' {
		return rawStream{}, false // "stream" must end its line
	}
	if start < len(data) && data[start] == '\r' {
		start++
	}
	if start < len(data) && data[start] == '\n' {
		start++
	}
	end := len(data) - start
	if k, _ := slices.BinarySearch(ends, start); k < len(ends) {
		end = ends[k] - start
	}
	if l := d.IntEntry("Length"); l != nil && *l >= 0 && *l <= len(data)-start {
		end = *l
	}
	return rawStream{dict: d, raw: data[start : start+end]}, true
}

// objHeader reads the "N G" before the obj keyword at p and returns N and
// where the header starts.
func objHeader(data []byte, p int) (objNr, header int, ok bool) {
	k := p
	var nums [2]int
	for n := 1; n >= 0; n-- {
		for k > 0 && isSpace(data[k-1]) {
			k--
		}
		e := k
		for k > 0 && data[k-1] >= '0' && data[k-1] <= '9' && e-k < 10 {
			k--
		}
		v, err := strconv.Atoi(string(data[k:e]))
		if err != nil {
			return 0, 0, false
		}
		nums[n] = v
	}
	return nums[0], k, true
}

// startxrefOffsets returns the offset after every startxref keyword: when
// the last one is wrong pdfcpu falls back to earlier ones.
func startxrefOffsets(data []byte) []int {
	var offs []int
	kw := []byte("startxref")
	for off := 0; ; {
		i := bytes.Index(data[off:], kw)
		if i < 0 {
			return offs
		}
		off += i + len(kw)
		rest := skipSpace(data[off:])
		n := 0
		for n < len(rest) && n < 18 && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if v, err := strconv.Atoi(string(rest[:n])); err == nil {
			offs = append(offs, v)
		}
	}
}

// pipeline reads a stream dictionary's /Filter and /DecodeParms as pdfcpu
// does; indirect values end the pipeline (pdfcpu resolves them, the raw
// scan cannot).
func pipeline(d types.Dict) []types.PDFFilter {
	var names []types.Object
	switch f := d["Filter"].(type) {
	case types.Name:
		names = []types.Object{f}
	case types.Array:
		names = f
	}
	var parms []types.Object
	switch p := d["DecodeParms"].(type) {
	case types.Dict:
		parms = []types.Object{p}
	case types.Array:
		parms = p
	}
	var out []types.PDFFilter
	for i, n := range names {
		name, ok := n.(types.Name)
		if !ok {
			break
		}
		f := types.PDFFilter{Name: expandFilterName(name.Value())}
		if i < len(parms) {
			f.DecodeParms, _ = parms[i].(types.Dict)
		}
		out = append(out, f)
	}
	return out
}

// expandFilterName maps the abbreviations some producers use in stream
// dictionaries (legal only for inline images) to the full names.
func expandFilterName(s string) string {
	switch s {
	case "AHx":
		return filter.ASCIIHex
	case "A85":
		return filter.ASCII85
	case "LZW":
		return filter.LZW
	case "Fl":
		return filter.Flate
	case "RL":
		return filter.RunLength
	case "CCF":
		return filter.CCITTFax
	}
	return s
}

// filterParms converts decode parameters the way pdfcpu does: integers as
// they are, booleans as 0 or 1.
func filterParms(d types.Dict) map[string]int {
	m := map[string]int{}
	for k, v := range d {
		switch v := v.(type) {
		case types.Integer:
			m[k] = v.Value()
		case types.Boolean:
			if v.Value() {
				m[k] = 1
			} else {
				m[k] = 0
			}
		}
	}
	return m
}
