package admit

import (
	"bufio"
	"compress/zlib"
	"errors"
	"io"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
)

// skipInlineData reads past an inline image's data: exactly its size when
// it is unfiltered and the size is known, to the end of the Flate data
// when that is its one filter, and then to the EI operator.
func skipInlineData(br *bufio.Reader, img inlineImage) error {
	switch {
	case len(img.filters) == 0 && img.comps > 0 && img.bpc > 0 && img.bpc <= 32 &&
		img.w >= 1 && img.h >= 1 && img.w*img.h <= 1<<40:
		row := (int64(img.w)*img.comps*img.bpc + 7) / 8
		if _, err := br.Discard(int(min(row*int64(img.h), 1<<40))); err != nil {
			return err
		}
	case len(img.filters) == 1 && img.filters[0] == filter.Flate:
		// flate reads a ByteReader byte by byte, so it stops where its
		// data does.
		if zr, err := zlib.NewReader(br); err == nil {
			if _, err := io.Copy(io.Discard, zr); errors.Is(err, errOverBudget) {
				return err
			}
		}
	}
	prevSpace := true
	for {
		c, err := br.ReadByte()
		if err != nil {
			return err
		}
		if prevSpace && c == 'E' {
			if b, _ := br.Peek(2); len(b) >= 1 && b[0] == 'I' && (len(b) == 1 || isSpace(b[1]) || isDelimiter(b[1])) {
				_, _ = br.ReadByte()
				return nil
			}
		}
		prevSpace = isSpace(c)
	}
}
