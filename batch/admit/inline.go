package admit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// This file finds the inline images (BI ... ID ... EI) of a decoded
// content stream with a lexer of its own, reading the stream once and
// holding a few bytes of it: the renderer allocates an inline image by
// its /W and /H like any image, and pdfcpu never looks inside content.

// inlineImage is what an inline image's dictionary declares.
type inlineImage struct {
	w, h    float64
	bpc     int64
	comps   int64 // 0 when the colour space is a named resource
	filters []string
	parms   map[string]float64 // the last filter's, when a dictionary
}

// maxInlineDict bounds the items kept of an array or a dictionary in an
// inline image's dictionary (real ones have a handful); the rest are
// read and dropped.
const maxInlineDict = 256

type tokKind int

const (
	tokEOF tokKind = iota
	tokName
	tokWord // a number, boolean or operator
	tokOpen // [ or <<
	tokClose
	tokOther // a string, or a stray delimiter
)

type token struct {
	kind tokKind
	text string // names without the slash, #xx decoded; words; capped
	long bool   // text was capped: it lost characters
}

// contentLexer splits a content stream into PDF tokens (ISO 32000 7.2).
type contentLexer struct {
	br   *bufio.Reader
	text []byte
	long bool // the last regular token was longer than maxTokenText
	// strings counts the bytes of the strings read, which in a content
	// stream are the text it shows (maxStreamText).
	strings int64
}

// maxStreamText bounds the text one content stream may show: 2 MiB, a
// hundred times a page of 6 pt print. The renderer's text extraction
// holds about 100 bytes a character, so a stream claiming megabytes of
// invisible text (a text bomb) would take a worker gigabytes; it is
// rejected here instead.
const maxStreamText = 2 << 20

// maxTokenText caps the text kept of one token; the rest is read and
// dropped, and the token marked long: a number of more characters
// (leading zeros, which the renderer reads through) is not read as the
// smaller number its first characters make.
const maxTokenText = 64

func (l *contentLexer) next() (token, error) {
	for {
		c, err := l.br.ReadByte()
		if err != nil {
			return token{kind: tokEOF}, err
		}
		switch {
		case isSpace(c):
			continue
		case c == '%':
			for c != '\n' && c != '\r' {
				if c, err = l.br.ReadByte(); err != nil {
					return token{kind: tokEOF}, err
				}
			}
		case c == '(':
			return token{kind: tokOther}, l.skipString()
		case c == '<':
			if b, _ := l.br.Peek(1); len(b) == 1 && b[0] == '<' {
				_, _ = l.br.ReadByte()
				return token{kind: tokOpen}, nil
			}
			for c != '>' {
				if c, err = l.br.ReadByte(); err != nil {
					return token{kind: tokEOF}, err
				}
				l.strings++ // two hex digits a byte: counted whole, to stay simple
			}
			return token{kind: tokOther}, nil
		case c == '>':
			if b, _ := l.br.Peek(1); len(b) == 1 && b[0] == '>' {
				_, _ = l.br.ReadByte()
			}
			return token{kind: tokClose}, nil
		case c == '[' || c == '{':
			return token{kind: tokOpen}, nil
		case c == ']' || c == '}':
			return token{kind: tokClose}, nil
		case c == ')':
			return token{kind: tokOther}, nil
		case c == '/':
			return token{kind: tokName, text: l.regular(true), long: l.long}, nil
		default:
			_ = l.br.UnreadByte()
			return token{kind: tokWord, text: l.regular(false), long: l.long}, nil
		}
	}
}

// regular reads a run of regular characters, decoding #xx in names.
func (l *contentLexer) regular(name bool) string {
	l.text, l.long = l.text[:0], false
	for {
		c, err := l.br.ReadByte()
		if err != nil {
			break
		}
		if isSpace(c) || isDelimiter(c) {
			_ = l.br.UnreadByte()
			break
		}
		if name && c == '#' {
			if b, _ := l.br.Peek(2); len(b) == 2 {
				if v, err := strconv.ParseUint(string(b), 16, 8); err == nil {
					_, _ = l.br.Discard(2)
					c = byte(v)
				}
			}
		}
		if len(l.text) < maxTokenText {
			l.text = append(l.text, c)
		} else {
			l.long = true
		}
	}
	return string(l.text)
}

// skipString reads a literal string to its closing parenthesis.
func (l *contentLexer) skipString() error {
	for depth := 1; depth > 0; {
		c, err := l.br.ReadByte()
		if err != nil {
			return err
		}
		l.strings++
		switch c {
		case '\\':
			if _, err := l.br.ReadByte(); err != nil {
				return err
			}
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return nil
}

func isDelimiter(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// inlineImages lexes a decoded content stream and calls check with each
// inline image's dictionary once its data is reached, then skips the
// data. Only check's errors and the budget's end the walk. It returns the
// text the stream shows (read so far), in bytes of its strings.
func inlineImages(r io.Reader, check func(img inlineImage, data *bufio.Reader) error) (int64, error) {
	l := &contentLexer{br: bufio.NewReaderSize(r, 64<<10)}
	for {
		t, err := l.next()
		if l.strings > maxStreamText {
			return l.strings, errTextBomb
		}
		if err != nil {
			return l.strings, budgetOnly(err)
		}
		if t.kind != tokWord || t.text != "BI" {
			continue
		}
		img, ok, err := l.inlineDict()
		if err != nil || !ok {
			if err != nil {
				return l.strings, budgetOnly(err)
			}
			continue
		}
		// One white-space character ends "ID"; the data follows it.
		if c, err := l.br.ReadByte(); err == nil && !isSpace(c) {
			_ = l.br.UnreadByte()
		}
		if err := check(img, l.br); err != nil {
			return l.strings, err
		}
		if err := skipInlineData(l.br, img); err != nil {
			return l.strings, budgetOnly(err)
		}
	}
}

// errTextBomb: a content stream shows more text than maxStreamText.
var errTextBomb = fmt.Errorf("more than %d MiB of text, more than any page shows: a text bomb", maxStreamText>>20)

// budgetOnly keeps the budget's error and drops the others: a broken
// stream ends the renderer's work there too.
func budgetOnly(err error) error {
	if errors.Is(err, errOverBudget) {
		return err
	}
	return nil
}

// inlineDict reads the key-value pairs after BI up to ID. A dictionary
// that is not one (a key that is not a name before
// ID) is not an image: ok is false and lexing goes on.
func (l *contentLexer) inlineDict() (img inlineImage, ok bool, err error) {
	img.bpc = 8
	for {
		t, err := l.next()
		if err != nil {
			return img, false, err
		}
		if t.kind == tokWord && t.text == "ID" {
			return img, true, nil
		}
		if t.kind != tokName {
			return img, false, nil
		}
		key := t.text
		v, err := l.value(0)
		if err != nil {
			return img, false, err
		}
		img.set(key, v)
	}
}

// inlineValue is a parsed value: a word or name, or the items of an
// array, or a dictionary's entries.
type inlineValue struct {
	text  string
	name  bool
	long  bool // text was capped (token's long)
	end   bool // the end of the enclosing array or dictionary
	items []inlineValue
	dict  map[string]inlineValue
}

// value reads one value, with arrays and dictionaries nested a few levels.
func (l *contentLexer) value(depth int) (inlineValue, error) {
	t, err := l.next()
	if err != nil {
		return inlineValue{}, err
	}
	switch t.kind {
	case tokName, tokWord:
		return inlineValue{text: t.text, name: t.kind == tokName, long: t.long}, nil
	case tokOpen:
		if depth > 4 {
			// Too deep to keep, but read to its end: its rest read as entries
			// ended the dictionary before /W and /H (8100 Mpx admitted).
			for open := 1; open > 0; {
				t, err := l.next()
				if err != nil {
					return inlineValue{}, err
				}
				switch t.kind {
				case tokOpen:
					open++
				case tokClose:
					open--
				}
			}
			return inlineValue{}, nil
		}
		var v inlineValue
		var key string
		for {
			item, err := l.value(depth + 1)
			if err != nil || item.end {
				break
			}
			if len(v.items) == maxInlineDict {
				continue // read to its end, as the renderer does; kept no further
			}
			// Pairs make the dictionary, items the array: the caller
			// reads whichever the key expects.
			v.items = append(v.items, item)
			if key == "" && item.name {
				key = item.text
			} else if key != "" {
				if v.dict == nil {
					v.dict = map[string]inlineValue{}
				}
				v.dict[key], key = item, ""
			}
		}
		return v, nil
	case tokClose:
		return inlineValue{end: true}, nil
	}
	return inlineValue{}, nil
}

// set records the entries that size an inline image (ISO 32000 table 91,
// abbreviations and full names).
func (img *inlineImage) set(key string, v inlineValue) {
	num := func(v inlineValue) float64 {
		if v.long {
			return 1 << 53 // more digits than kept: larger than any limit
		}
		f, err := strconv.ParseFloat(v.text, 64)
		if err != nil || math.IsNaN(f) {
			return 0
		}
		return f
	}
	switch key {
	case "W", "Width":
		img.w = num(v)
	case "H", "Height":
		img.h = num(v)
	case "BPC", "BitsPerComponent":
		img.bpc = int64(num(v))
	case "IM", "ImageMask":
		if v.text == "true" {
			img.bpc, img.comps = 1, 1
		}
	case "CS", "ColorSpace":
		switch v.text {
		case "G", "DeviceGray", "I", "Indexed", "CalGray":
			img.comps = 1
		case "RGB", "DeviceRGB", "CalRGB":
			img.comps = 3
		case "CMYK", "DeviceCMYK":
			img.comps = 4
		}
		if len(v.items) > 0 && (v.items[0].text == "I" || v.items[0].text == "Indexed") {
			img.comps = 1
		}
	case "F", "Filter":
		img.filters = img.filters[:0]
		for _, it := range append([]inlineValue{v}, v.items...) {
			if it.name {
				img.filters = append(img.filters, expandFilterName(it.text))
			}
		}
	case "DP", "DecodeParms":
		d := v.dict
		if len(v.items) > 0 && v.dict == nil {
			d = v.items[len(v.items)-1].dict
		}
		img.parms = map[string]float64{}
		for k, x := range d {
			img.parms[k] = num(x)
		}
	}
}
