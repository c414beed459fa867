package main

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Strings that come from a manifest, a file name or a journal (source_ids,
// paths, notes, details, hosts) may hold terminal control sequences: a
// source_id of "\x1b[2J" would clear the screen of whoever runs review,
// and one of "\n" would forge a line. Every text output shows them
// through termText, and every error and warning through escWriter; JSON
// output is escaped by encoding/json and logs by log/slog's text format.

// termText returns s fit for a terminal: each rune that is not printable
// (C0 and C1 control characters such as ESC, BEL, CR, LF and tab, Unicode
// format characters such as bidirectional overrides) is written as its Go
// escape (\x1b, \a, \r, \n, \t, \u202e), and so is each byte that is not
// UTF-8 (\xff); everything else, the backslash included, is as given.
func termText(s string) string { return escape(s, "") }

// termLines is termText for a message of several lines: its line breaks
// and tabs are kept.
func termLines(s string) string { return escape(s, "\n\t") }

func escape(s, keep string) string {
	clean := true
	for _, r := range s {
		if !printable(r) && !strings.ContainsRune(keep, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case printable(r) || strings.ContainsRune(keep, r):
			b.WriteString(s[i : i+n])
		default:
			q := fmt.Sprintf("%+q", string(r)) // "\x1b", "\a", "\u202e"
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// printable reports whether r shows as itself: a graphic rune (spaces
// included), and not the replacement rune of a byte that is not UTF-8 (a
// genuine U+FFFD is escaped too, which is harmless).
func printable(r rune) bool { return r != utf8.RuneError && unicode.IsGraphic(r) }

// escWriter writes messages to a terminal with termLines: what refbatch
// says about an error or a warning may quote a source_id, a path or a
// driver's text. One Write is one message (fmt.Fprintf's).
type escWriter struct{ w io.Writer }

func (e escWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(e.w, termLines(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
