package admit

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// This file decodes the streams the renderer interprets (content streams,
// forms, glyph procedures) and the first bytes of compressed images, for
// the image checks (images.go), as readers bounded by one budget per
// file: what admission reads here is never held whole unless a filter
// needs it (the ASCII ones, run length, LZW and predictors).

// maxScanned caps the bytes the image checks decode in one file, content
// streams and image headers together. Real files decode their content
// streams to a few MB; a file over the cap is a decompression bomb.
const maxScanned = 256 << 20

// maxPredictorRow caps the row of a PNG or TIFF predictor: the renderer
// allocates rows of that size, and no real image is that wide.
const maxPredictorRow = 4 << 20

// errOverBudget ends a read past the file's decode budget.
var errOverBudget = errors.New("over the decode budget")

// budget is the decode budget of one file.
type budget struct{ left int64 }

// budgetReader counts what it reads against a budget and fails past it.
type budgetReader struct {
	r io.Reader
	b *budget
}

func (br budgetReader) Read(p []byte) (int, error) {
	if br.b.left < 0 {
		return 0, errOverBudget
	}
	n, err := br.r.Read(p)
	br.b.left -= int64(n)
	if br.b.left < 0 {
		return n, errOverBudget
	}
	return n, err
}

// codec is an image filter the renderer decodes but admission does not:
// what remains of a stream after the filters decode applies.
type codec struct {
	name  string // filter.DCT, JPX, JBIG2 or CCITTFax; "" for none
	parms types.Dict
}

// decode applies filters to raw up to the first image codec, passing
// through a filter it does not know as the renderer does, and returns the decoded bytes as a reader that
// counts against b, with the codec left undone. A filter that fails to
// start ends the data there, as it ends the renderer's; a predictor row
// over maxPredictorRow is errPredictorRow.
func decode(raw []byte, filters []types.PDFFilter, b *budget) (io.Reader, codec, error) {
	var r io.Reader = bytes.NewReader(raw)
	for _, f := range filters {
		name := expandFilterName(f.Name)
		parms := filterParms(f.DecodeParms)
		switch name {
		case filter.DCT, filter.JPX, filter.JBIG2, filter.CCITTFax:
			return budgetReader{r, b}, codec{name, f.DecodeParms}, nil
		case filter.Flate, filter.LZW:
			if p := parms["Predictor"]; p > 1 || name == filter.LZW {
				if p > 1 && predictorRow(parms) > maxPredictorRow {
					return nil, codec{}, errPredictorRow
				}
				in, err := readAll(r, b)
				if err != nil {
					return nil, codec{}, err
				}
				_, out, stop := viaPDFCPU(in, name, parms, b.left)
				if stop {
					return bytes.NewReader(nil), codec{}, nil
				}
				r = bytes.NewReader(out)
				continue
			}
			zr, err := zlib.NewReader(r)
			if err != nil {
				return bytes.NewReader(nil), codec{}, nil
			}
			r = zr
		case filter.ASCIIHex, filter.ASCII85, filter.RunLength:
			in, err := readAll(r, b)
			if err != nil {
				return nil, codec{}, err
			}
			var out []byte
			switch name {
			case filter.ASCIIHex:
				out = asciiHex(in)
			case filter.ASCII85:
				_, out, _ = ascii85Decode(in, b.left)
			default:
				_, out = runLength(in, b.left, false)
			}
			r = bytes.NewReader(out)
		default:
			// Crypt (its identity filter, the only one in an unencrypted
			// file) or a name no renderer knows, which MuPDF warns about
			// and reads through as it is.
			continue
		}
	}
	return budgetReader{r, b}, codec{}, nil
}

// errPredictorRow refuses a predictor row over maxPredictorRow.
var errPredictorRow = errors.New("predictor row too long")

// readAll reads r whole within the budget. A read error other than the
// budget's ends the data, as a broken stream ends the renderer's.
func readAll(r io.Reader, b *budget) ([]byte, error) {
	out, err := io.ReadAll(budgetReader{r, b})
	if errors.Is(err, errOverBudget) {
		return nil, err
	}
	return out, nil
}

// predictorRow is the row length in bytes that a predictor's parameters
// declare (ISO 32000 table 8), with their defaults.
func predictorRow(parms map[string]int) int64 {
	get := func(k string, def int) int64 {
		if v, ok := parms[k]; ok && v > 0 {
			return int64(v)
		}
		return int64(def)
	}
	cols, colors, bpc := get("Columns", 1), get("Colors", 1), get("BitsPerComponent", 8)
	if cols > 1<<40 || colors > 1<<16 || bpc > 1<<8 {
		return 1 << 62
	}
	return (cols*colors*bpc + 7) / 8
}
