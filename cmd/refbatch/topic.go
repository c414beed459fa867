package main

import (
	"cmp"
	"embed"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The manual's topics, one markdown file each: `refbatch help TOPIC`
// prints one for the terminal and `refbatch __man` writes each as the man
// page refbatch-TOPIC(7).
//
//go:embed topics/*.md
var topicFiles embed.FS

// topic is one page of the manual beside the commands' own help.
type topic struct {
	name    string // manifest, outcomes, ...
	title   string // its first heading
	summary string // what it covers, in a line
	text    string // markdown
}

// topicSummaries say in a line what each topic covers: help's list of the
// topics and the man pages' NAME show it.
var topicSummaries = map[string]string{
	"usage":          "the output folder, a shared journal, sizes, completion",
	"manifest":       "the manifest: its columns, encoding, and what is refused and why",
	"outcomes":       "every state and reason code, the bands, the review lane, the exit codes",
	"custody":        "the custody log and the batch root, the files on disk, the logs",
	"searchable-pdf": "what export's searchable PDF is made of and what it promises",
	"hostile-files":  "what a hostile PDF can do, and what stops it",
	"reading":        "how a page is read: rendering, text layers, coverage, recovery, columns, the cascade",
	"notifications":  "the batch's events, their receivers, signing and delivery",
	"scale-out":      "one batch across many machines over a PostgreSQL journal",
	"benchmarks":     "make bench: the figures, and how the defaults were chosen",
	"development":    "the make targets, the tests and what they need",
}

// topics lists the manual's topics, sorted by name.
func topics() []topic {
	ents, err := topicFiles.ReadDir("topics")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	var out []topic
	for _, e := range ents {
		b, err := topicFiles.ReadFile(path.Join("topics", e.Name()))
		if err != nil {
			panic(err)
		}
		t := topic{name: strings.TrimSuffix(e.Name(), ".md"), text: string(b)}
		first, _, _ := strings.Cut(t.text, "\n")
		t.title = strings.TrimPrefix(first, "# ")
		t.summary = cmp.Or(topicSummaries[t.name], t.title)
		out = append(out, t)
	}
	return out
}

// topicNamed is the topic called name, if there is one.
func topicNamed(name string) (topic, bool) {
	i := slices.IndexFunc(topics(), func(t topic) bool { return t.name == name })
	if i < 0 {
		return topic{}, false
	}
	return topics()[i], true
}

// topicNames is "benchmarks, commands, ...".
func topicNames() string {
	var names []string
	for _, t := range topics() {
		names = append(names, t.name)
	}
	return strings.Join(names, ", ")
}

// topicList is the app's description: the topics, a line each.
func topicList() string {
	var b strings.Builder
	b.WriteString("The manual's topics, beside each command's help: refbatch help TOPIC, or\nman refbatch-TOPIC.\n")
	for _, t := range topics() {
		fmt.Fprintf(&b, "\n  %-15s %s", t.name, t.summary)
	}
	return b.String()
}

// helpCommand is urfave's help with the topics: `refbatch help TOPIC`
// prints a topic, anything else goes to urfave's own help.
func helpCommand() *cli.Command {
	builtin := &cli.App{}
	builtin.Setup()
	show := builtin.Command("help").Action
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show the commands, a command's help, or a topic of the manual",
		ArgsUsage: "[COMMAND|TOPIC]",
		Description: `Without an argument, lists the commands and the topics. With a command,
shows its help, as COMMAND --help does, then its reference in detail (as
man refbatch-COMMAND does). With a topic, prints that page of the manual (man refbatch-TOPIC shows the same).

Topics: ` + topicNames() + `.

Exit status: 0 shown; 2 no such command or topic.`,
		Action: func(c *cli.Context) error {
			name := c.Args().First()
			if c.NArg() > 1 {
				return usageErr("help takes one command or topic", "refbatch help [COMMAND|TOPIC]")
			}
			if name == "" || c.App.Command(name) != nil {
				if err := show(c); err != nil {
					return err
				}
				if ref, ok := reference(name); ok {
					if _, err := io.WriteString(c.App.Writer, "\nDETAILS:\n\n"+indent(terminalText(ref))); err != nil {
						return err
					}
				}
				// A topic that shares the command's name (manifest: the
				// command prints one, the topic says what one holds) follows.
				if t, ok := topicNamed(name); ok && name != "" {
					_, err := io.WriteString(c.App.Writer, "\n"+terminalText(t.text))
					return err
				}
				return nil
			}
			t, ok := topicNamed(name)
			if !ok {
				return usageErr(fmt.Sprintf("no command or topic %q", name), "refbatch help lists the commands; the topics are "+topicNames())
			}
			_, err := io.WriteString(c.App.Writer, terminalText(t.text))
			return err
		},
	}
}

var (
	mdLink   = regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)
	mdStrong = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// terminalText renders a topic's markdown for a terminal: headings in
// capitals (the first) or underlined, code blocks indented, links as their
// text, bold as plain text. Tables and `code` stay as written: they read
// as they are.
func terminalText(md string) string {
	var b strings.Builder
	fence := false
	for line := range strings.Lines(md) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "```"):
			fence = !fence
			continue
		case fence:
			b.WriteString("    " + line + "\n")
			continue
		case strings.HasPrefix(line, "# "):
			b.WriteString(strings.ToUpper(strings.TrimPrefix(line, "# ")) + "\n")
			continue
		case strings.HasPrefix(line, "#"):
			h := strings.TrimSpace(strings.TrimLeft(line, "#"))
			b.WriteString(h + "\n" + strings.Repeat("-", len([]rune(h))) + "\n")
			continue
		}
		line = mdLink.ReplaceAllString(line, "$1")
		b.WriteString(mdStrong.ReplaceAllString(line, "$1") + "\n")
	}
	return b.String()
}

// topicPage is refbatch-TOPIC.7: the topic's markdown as roff, its
// headings one level down (md2man makes a first-level heading the title,
// which the header below is), tables through tbl.
func topicPage(app *cli.App, t topic) string {
	var md strings.Builder
	fence := false
	for line := range strings.Lines(t.text) {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			line = "#" + line
		}
		md.WriteString(line)
	}
	var b strings.Builder
	b.WriteString(pageMark)
	header(&b, "refbatch-"+t.name, 7, t.summary, app.Version)
	b.WriteString(mdRoff(md.String()))
	b.WriteString(".SH SEE ALSO\n.BR refbatch (1)\n")
	return b.String()
}

// roffASCII writes each character beyond ASCII as groff's \[uXXXX], so
// that the page reads the same whatever the reader's encoding.
func roffASCII(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "\\[u%04X]", r)
		}
	}
	return b.String()
}

// indent indents every line that is not empty by three spaces, as urfave
// indents help's sections.
func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "   " + l
		}
	}
	return strings.Join(lines, "\n")
}
