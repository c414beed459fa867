package admit

import (
	"bytes"
	"slices"
	"strconv"
	"unsafe"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// This file finds a PDF's streams by scanning its bytes, not by parsing it,
// so the inflation guard sees every stream before pdfcpu decodes one.

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
	case "DCT":
		return filter.DCT
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
