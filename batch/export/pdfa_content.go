package export

// DeviceCMYK set by a content stream's operators (6.2.4.3): the k and K
// operators, cs and CS with /DeviceCMYK, and an inline image in CMYK. The
// sRGB output intent does not cover them, and only converting the colours
// would.

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// contentObstacle looks at the content streams of every page and form
// XObject of ctx for DeviceCMYK colour; a stream that cannot be decoded
// is passed over (its filter is one of the others' concerns).
func contentObstacle(ctx *model.Context) string {
	var streams []types.IndirectRef
	for i := 1; i <= ctx.PageCount; i++ {
		d, _, _, err := ctx.PageDict(i, false)
		if err != nil || d == nil {
			continue
		}
		contents, err := pageContents(ctx, d)
		if err != nil {
			continue
		}
		for _, c := range contents {
			if ref, ok := c.(types.IndirectRef); ok {
				streams = append(streams, ref)
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(ctx.Table)) {
		e := ctx.Table[n]
		if e == nil || e.Free || e.Compressed {
			continue
		}
		if sd, ok := e.Object.(types.StreamDict); ok && sd.Subtype() != nil && *sd.Subtype() == "Form" {
			gen := 0
			if e.Generation != nil {
				gen = *e.Generation
			}
			streams = append(streams, *types.NewIndirectRef(n, gen))
		}
	}
	for _, ref := range streams {
		sd, _, err := ctx.DereferenceStreamDict(ref)
		if err != nil || sd == nil || sd.Decode() != nil {
			continue
		}
		if usesCMYK(sd.Content) {
			return fmt.Sprintf("object %d: DeviceCMYK set by a content stream's operators, which an sRGB output intent does not cover", ref.ObjectNumber.Value())
		}
	}
	return ""
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
