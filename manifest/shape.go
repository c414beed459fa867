package manifest

import (
	"regexp"
	"strings"
	"unicode"
)

// This file finds, in a document's text, what looks like a manifest
// field: the IDs shaped like a participant ID, and the dates. When the
// manifest's value is not found, they tell a person at once whether the
// letter prints another one (a wrong ID in the manifest, or a misread
// one) or none at all. What they return is document text: it goes to the
// person deciding, never into a log or the journal (which keep Shape and
// counts only).

// Shape is id's shape, which names no ID: each letter written A, each
// digit 9, anything else as it is ("P-701538" is "A-999999").
func Shape(id string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(id) {
		switch {
		case unicode.IsLetter(r):
			b.WriteRune('A')
		case unicode.IsDigit(r):
			b.WriteRune('9')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ShapedLike returns the strings of text shaped like id (Shape), each
// once, in the order they first appear, id itself excepted (compared
// ignoring case): a string of the shape that neither follows nor is
// followed by a letter or digit. For an id whose shape has no digit it
// returns nothing: a word of letters would match any word.
func ShapedLike(text, id string) []string {
	shape := []rune(Shape(id))
	if len(shape) == 0 || !strings.ContainsRune(string(shape), '9') {
		return nil
	}
	rs := []rune(text)
	alnum := func(i int) bool { return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) }
	var out []string
	seen := map[string]bool{}
	for i := 0; i+len(shape) <= len(rs); i++ {
		if alnum(i-1) || alnum(i+len(shape)) || !fits(rs[i:i+len(shape)], shape) {
			continue
		}
		s := string(rs[i : i+len(shape)])
		if k := strings.ToUpper(s); !seen[k] && !strings.EqualFold(s, strings.TrimSpace(id)) {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

func fits(rs, shape []rune) bool {
	for i, r := range rs {
		switch shape[i] {
		case 'A':
			if !unicode.IsLetter(r) {
				return false
			}
		case '9':
			if !unicode.IsDigit(r) {
				return false
			}
		default:
			if r != shape[i] {
				return false
			}
		}
	}
	return true
}

// datePattern matches the dates letters print: 2024-03-14, 14/03/2024,
// 14.03.24, 14 March 2024, March 14, 2024 (months in English, full or
// abbreviated).
var datePattern = regexp.MustCompile(`(?i)\b(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{1,2}(?:st|nd|rd|th)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,? \d{4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4})\b`)

// Dates returns the dates text prints, each once, in the order they first
// appear.
func Dates(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range datePattern.FindAllString(text, -1) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
