package main

import (
	"embed"
	"path"
	"strings"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/urfave/cli/v2"
)

// Each command's reference beyond its description and flags (how it
// behaves in detail, its examples), one markdown file per command: its man
// page shows it under DETAILS, and `refbatch help COMMAND` after the
// command's help.
//
//go:embed commands/*.md
var referenceFiles embed.FS

// reference is the reference of the command named name, if it has one.
func reference(name string) (string, bool) {
	b, err := referenceFiles.ReadFile(path.Join("commands", name+".md"))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// withReferences points each command's help to its reference.
func withReferences(cs []*cli.Command) {
	for _, c := range cs {
		if _, ok := reference(c.Name); ok {
			c.Description = strings.TrimSpace(c.Description) + "\n\nIn detail, with examples: refbatch help " + c.Name + ", or man refbatch-" + c.Name + "."
		}
	}
}

// mdRoff renders markdown as the body of a man page: a level-2 heading is
// a section, a level-3 one a subsection; a table needs the page to start
// with tbl's mark, which pageMark is.
func mdRoff(md string) string {
	body := string(md2man.Render([]byte(md)))
	body = strings.TrimPrefix(body, pageMark)
	body = strings.TrimPrefix(body, ".nh\n")
	return roffASCII(wrapTableCells(body))
}

// wrapTableCells makes every long cell of the page's tables a text block
// (T{ ... T}), which tbl wraps, so that a table fits the page's width.
// md2man wraps only cells with much plain text, not one of many `codes`.
func wrapTableCells(roff string) string {
	var b strings.Builder
	for {
		start := strings.Index(roff, "\n.TS\n")
		if start < 0 {
			b.WriteString(roff)
			return b.String()
		}
		end := strings.Index(roff[start:], "\n.TE\n")
		if end < 0 {
			b.WriteString(roff)
			return b.String()
		}
		end += start
		table := roff[start:end]
		// The format ends at the first line that ends with a period.
		// Its text blocks are too narrow to justify: no adjusting in
		// the table, the mode before it after.
		format := strings.Index(table, ".\n")
		b.WriteString(roff[:start] + "\n.na" + table[:format+2])
		b.WriteString(wrapCells(table[format+2:]))
		b.WriteString("\n.TE\n.ad\n")
		roff = roff[end+len("\n.TE\n"):]
	}
}

// longCell is the length from which a plain cell becomes a text block.
const longCell = 24

// wrapCells rewrites a table's rows: cells separated by tabs, rows by
// newlines, a text block running from "T{\n" to "\nT}".
func wrapCells(data string) string {
	var b strings.Builder
	// The first row is the header: its cells stay whole.
	if i := strings.IndexByte(data, '\n'); i >= 0 {
		b.WriteString(data[:i+1])
		data = data[i+1:]
	}
	for data != "" {
		var cell string
		if strings.HasPrefix(data, "T{\n") {
			i := strings.Index(data, "\nT}")
			if i < 0 {
				return b.String() + data
			}
			cell, data = data[:i+3], data[i+3:]
		} else {
			i := strings.IndexAny(data, "\t\n")
			if i < 0 {
				i = len(data)
			}
			cell, data = data[:i], data[i:]
			if len(cell) > longCell {
				cell = "T{\n" + cell + "\nT}"
			}
		}
		b.WriteString(cell)
		if data != "" {
			b.WriteByte(data[0]) // the tab or the newline after it
			data = data[1:]
		}
	}
	return b.String()
}

// pageMark asks man to run tbl, for the tables md2man writes.
const pageMark = "'\\\" t\n"
