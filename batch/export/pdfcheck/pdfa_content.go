package pdfcheck

// DeviceCMYK set by content streams' operators (6.2.4.3), the checker's
// own reading (the export has its own: the checker is meant to be a
// second look, not the export's code run twice).

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// contentProblems looks at the content streams of every page and form
// XObject for DeviceCMYK colour under an output intent that is not CMYK.
func contentProblems(ctx *model.Context, intent string) []string {
	if intent == "" || intent == "CMYK" || ctx.EnsurePageCount() != nil {
		return nil
	}
	var streams []types.IndirectRef
	for i := 1; i <= ctx.PageCount; i++ {
		d, _, _, err := ctx.PageDict(i, false)
		if err != nil || d == nil {
			continue
		}
		c, err := ctx.Dereference(d["Contents"])
		if err != nil {
			continue
		}
		if ref, ok := d["Contents"].(types.IndirectRef); ok {
			if _, isStream := c.(types.StreamDict); isStream {
				streams = append(streams, ref)
				continue
			}
		}
		if arr, ok := c.(types.Array); ok {
			for _, o := range arr {
				if ref, ok := o.(types.IndirectRef); ok {
					streams = append(streams, ref)
				}
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Compressed {
			continue
		}
		if sd, ok := e.Object.(types.StreamDict); ok && sd.Subtype() != nil && *sd.Subtype() == "Form" {
			streams = append(streams, *types.NewIndirectRef(n, 0))
		}
	}
	var p []string
	for _, ref := range streams {
		sd, _, err := ctx.DereferenceStreamDict(ref)
		if err != nil || sd == nil || sd.Decode() != nil {
			continue
		}
		if usesCMYK(sd.Content) {
			p = append(p, fmt.Sprintf("object %d: 6.2.4.3: DeviceCMYK set by a content stream's operators under an output intent that is not CMYK", ref.ObjectNumber.Value()))
		}
	}
	return p
}

// usesCMYK says whether content stream c sets a DeviceCMYK colour: the k
// or K operator, cs or CS after /DeviceCMYK, or an inline image whose
// colour space is DeviceCMYK. Strings, comments and inline images' data
// are skipped.
func usesCMYK(c []byte) bool {
	prev := ""
	for i := 0; i < len(c); {
		b := c[i]
		switch {
		case isSpace(b):
			i++
		case b == '%':
			for i < len(c) && c[i] != '\r' && c[i] != '\n' {
				i++
			}
		case b == '(':
			i = skipString(c, i)
		case b == '<' && i+1 < len(c) && c[i+1] == '<', b == '>' && i+1 < len(c) && c[i+1] == '>':
			i += 2
		case b == '<':
			for i < len(c) && c[i] != '>' {
				i++
			}
			i++
		case bytes.IndexByte([]byte("[]{}>)"), b) >= 0:
			i++
		default:
			j := i + 1
			for j < len(c) && bytes.IndexByte([]byte(" \t\r\n\f\x00()<>[]{}/%"), c[j]) < 0 {
				j++
			}
			tok := string(c[i:j])
			switch {
			case tok == "k" || tok == "K":
				return true
			case (tok == "cs" || tok == "CS") && prev == "/DeviceCMYK":
				return true
			case (prev == "/CS" || prev == "/ColorSpace") && (tok == "/DeviceCMYK" || tok == "/CMYK"):
				return true // an inline image's
			case tok == "ID":
				j = skipInlineImage(c, j)
			}
			prev, i = tok, j
		}
	}
	return false
}

// skipString returns the offset after the literal string starting at c[i].
func skipString(c []byte, i int) int {
	depth := 0
	for ; i < len(c); i++ {
		switch c[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// skipInlineImage returns the offset after an inline image's data that
// starts after its ID operator at c[i]: at EI between white space.
func skipInlineImage(c []byte, i int) int {
	for j := i + 1; j+2 <= len(c); j++ {
		if c[j] == 'E' && c[j+1] == 'I' && isSpace(c[j-1]) && (j+2 == len(c) || isSpace(c[j+2])) {
			return j + 2
		}
	}
	return len(c)
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == '\f' || b == 0
}
