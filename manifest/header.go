package manifest

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads the header: which character separates the columns, and
// which field holds which known column.

// Separators are the column separators a manifest may use, in the order
// they are preferred: a comma (RFC 4180), a semicolon (what spreadsheets
// write where the comma is the decimal mark) and a tab.
var Separators = []rune{',', ';', '\t'}

// sniffWindow is how much of the file is looked at to find the header
// line and its separator.
const sniffWindow = 64 << 10

// sniffSeparator returns the separator of the header line at the start of
// head (after any blank lines): the first of Separators that splits it
// into every required column, else the one that finds the most of them,
// or on a tie the most fields (the comma when all tie), so the error about
// the header names what the likeliest reading found.
func sniffSeparator(head []byte) rune {
	line := headerLine(head)
	best, bestN, bestFields := Separators[0], -1, 0
	for _, sep := range Separators {
		cr := csv.NewReader(bytes.NewReader(line))
		cr.Comma = sep
		cr.LazyQuotes = true
		cr.FieldsPerRecord = -1
		fields, err := cr.Read()
		if err != nil {
			continue
		}
		var idx [numColumns]int
		matchColumns(fields, &idx)
		n := 0
		for c := range numRequired {
			if idx[c] >= 0 {
				n++
			}
		}
		if n == numRequired {
			return sep
		}
		if n > bestN || n == bestN && len(fields) > bestFields {
			best, bestN, bestFields = sep, n, len(fields)
		}
	}
	return best
}

// headerLine returns the first line of head that is not blank, without
// its line end; the whole of head when no line end follows it.
func headerLine(head []byte) []byte {
	for len(head) > 0 {
		line, rest, _ := bytes.Cut(head, []byte{'\n'})
		if line = bytes.TrimSuffix(line, []byte{'\r'}); len(line) > 0 {
			return line
		}
		head = rest
	}
	return nil
}

// columnKey is a header name as it is compared: ASCII letters lowered
// (strings.ToLower would fold look-alikes such as the Kelvin sign), and
// white space, '_', '-' and '.' dropped, so that "Source ID", "source-id"
// and "SourceID" all name source_id, and "SHA-256" names sha256. No two
// known columns share a key, so this never makes a header ambiguous.
func columnKey(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case unicode.IsSpace(r) || r == '_' || r == '-' || r == '.':
		case 'A' <= r && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// columnKeys are the known columns' keys, in column order.
var columnKeys = func() (keys [numColumns]string) {
	for c, name := range columnNames {
		keys[c] = columnKey(name)
	}
	return keys
}()

// matchColumns fills idx with the field of each known column in header,
// -1 for a column it does not name. It returns the first known column
// named twice and the fields naming it, or dup -1.
func matchColumns(header []string, idx *[numColumns]int) (dup column, first, second int) {
	for i := range idx {
		idx[i] = -1
	}
	dup = -1
	for i, h := range header {
		key := columnKey(h)
		for c, known := range columnKeys {
			if key != known {
				continue
			}
			if prev := idx[c]; prev >= 0 {
				if dup < 0 {
					dup, first, second = column(c), prev, i
				}
				continue
			}
			idx[c] = i
		}
	}
	return dup, first, second
}

// headerHint is the hint of every error about the header's columns.
var headerHint = "name the columns " + strings.Join(columnNames[:numRequired], ", ") + " (and optionally " + ColSHA256 +
	") in the first row, in any order; case, spaces, '-' and '_' do not matter; separate them with ',', ';' or a tab"

// mapHeader fills m.idx from the header record found at line.
func (m *Reader) mapHeader(header []string, line int) error {
	dup, first, second := matchColumns(header, &m.idx)
	if dup >= 0 {
		return &FileError{Line: line, Hint: headerHint,
			Msg: fmt.Sprintf("column %s is named twice in the header: %s and %s", columnNames[dup], quoteName(header[first]), quoteName(header[second]))}
	}
	var missing []string
	for c := range numRequired {
		if m.idx[c] < 0 {
			missing = append(missing, columnNames[c])
		}
	}
	switch {
	case len(missing) == numRequired:
		// A data row where the header should be names none of the columns;
		// say so rather than listing five "missing" columns. Its fields may
		// be values, so only those that read as names are shown.
		return &FileError{Line: line, Hint: headerHint,
			Msg: fmt.Sprintf("no header row: the first row names none of the required columns %s (read as %s: %s)",
				strings.Join(columnNames[:numRequired], ", "), separatorName(m.csv.Comma), showHeader(header, false))}
	case len(missing) == 1:
		return &FileError{Line: line, Hint: headerHint,
			Msg: fmt.Sprintf("missing required column %s; the header names %s", missing[0], showHeader(header, true))}
	case len(missing) > 1:
		return &FileError{Line: line, Hint: headerHint,
			Msg: fmt.Sprintf("missing required columns %s; the header names %s", strings.Join(missing, ", "), showHeader(header, true))}
	}
	return nil
}

// maxShown caps how many of a header's names an error lists.
const maxShown = 12

// showHeader lists a header's names for an error message. A header that
// names some required column is a header, and all its names are shown;
// one that names none may be a data row, so only fields that read as a
// name (letters, spaces, '_' and '-', up to 40 bytes: no digit, no path,
// no date) are shown, the others only counted.
func showHeader(header []string, isHeader bool) string {
	var parts []string
	for i, h := range header {
		if i == maxShown {
			parts = append(parts, fmt.Sprintf("and %d more", len(header)-maxShown))
			break
		}
		if isHeader || looksLikeName(h) {
			parts = append(parts, quoteName(h))
		} else {
			parts = append(parts, "(a value, not shown)")
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// looksLikeName reports whether s could only be a column's name, never a
// participant ID, a path or a date.
func looksLikeName(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && r != ' ' && r != '_' && r != '-' {
			return false
		}
	}
	return true
}

// quoteName quotes a header name as found, trimmed; invalid UTF-8 and
// control characters are escaped.
func quoteName(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 60 {
		cut := 60
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

// separatorName names a column separator in messages.
func separatorName(sep rune) string {
	if sep == '\t' {
		return "tab-separated"
	}
	return fmt.Sprintf("'%c'-separated", sep)
}

// fieldName names field i of a record for an error message: the known
// column it holds, or the header's name for it, so that the user finds it
// in the spreadsheet.
func (m *Reader) fieldName(i int) string {
	for c, f := range m.idx {
		if f == i {
			return "column " + columnNames[c]
		}
	}
	if i < len(m.header) {
		if name := strings.TrimSpace(m.header[i]); name != "" {
			return "column " + quoteName(name)
		}
		return "an unnamed column"
	}
	return "a field after the header's last column"
}
