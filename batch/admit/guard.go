package admit

import (
	"bytes"
	"compress/zlib"
	"encoding/ascii85"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
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
			return reject(ReasonMalformedPDF, "%s decodes to more than %d MiB (a decompression bomb)", what, maxInflated>>20)
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
