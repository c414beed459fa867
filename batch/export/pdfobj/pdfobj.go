// Package pdfobj reads what PDF/A's rules are about in a PDF pdfcpu has
// parsed: an object out of its object stream, whether an annotation is a
// button widget, whether a content stream sets DeviceCMYK colour. The
// export, which decides whether a document can be PDF/A, and its checker
// read them the same way.
package pdfobj

import (
	"bytes"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// TableObject is table entry e's object, object n, read out of its object
// stream when it sits in one (pdfcpu reads those only when asked).
func TableObject(ctx *model.Context, n int, e *model.XRefTableEntry) types.Object {
	if _, ok := e.Object.(types.LazyObjectStreamObject); !ok {
		return e.Object
	}
	gen := 0
	if e.Generation != nil {
		gen = *e.Generation
	}
	o, err := ctx.Dereference(*types.NewIndirectRef(n, gen))
	if err != nil {
		return nil
	}
	return o
}

// ButtonWidget says whether annotation d is a widget of a Btn field, its
// own FT or one its parents give it.
func ButtonWidget(ctx *model.Context, d types.Dict) bool {
	if s := d.Subtype(); s == nil || *s != "Widget" {
		return false
	}
	for range 32 {
		if ft := d.NameEntry("FT"); ft != nil {
			return *ft == "Btn"
		}
		parent, err := ctx.DereferenceDict(d["Parent"])
		if err != nil || parent == nil {
			return false
		}
		d = parent
	}
	return false
}

// UsesCMYK says whether content stream c sets a DeviceCMYK colour: the k
// or K operator, cs or CS after /DeviceCMYK, or an inline image whose
// colour space is DeviceCMYK. Strings, comments and inline images' data
// are skipped.
func UsesCMYK(c []byte) bool {
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
