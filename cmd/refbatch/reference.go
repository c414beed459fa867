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
	return roffASCII(body)
}

// pageMark asks man to run tbl, for the tables md2man writes.
const pageMark = "'\\\" t\n"
