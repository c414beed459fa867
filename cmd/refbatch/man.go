package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
)

// manCommandName is the hidden command make install runs to write the man
// pages.
const manCommandName = "__man"

func manCommand() *cli.Command {
	return &cli.Command{
		Name:      manCommandName,
		Hidden:    true,
		Usage:     "internal: write a man page per command into DIR, and one per topic into TOPICDIR (default DIR) (make install runs it)",
		ArgsUsage: "DIR [TOPICDIR]",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 && c.NArg() != 2 {
				return usageErr("__man takes the folder to write the pages into, and the topics' folder", "refbatch __man DIR [TOPICDIR]")
			}
			topicDir := c.Args().Get(1)
			if topicDir == "" {
				topicDir = c.Args().First()
			}
			return writeManPages(c.App, c.Args().First(), topicDir)
		},
	}
}

// writeManPages writes refbatch.1 and a refbatch-CMD.1 per visible command
// into dir, generated from the CLI's own definition: its usage, description
// and flags, as help shows them. A paragraph of a description that starts
// "Exit status:" or "Environment:" becomes that section of the page. Each
// topic of the manual becomes refbatch-TOPIC.7 in topicDir.
func writeManPages(app *cli.App, dir, topicDir string) error {
	pages := map[string]string{filepath.Join(dir, "refbatch.1"): appPage(app)}
	for _, c := range manCommands(app.VisibleCommands()) {
		pages[filepath.Join(dir, "refbatch-"+c.Name+".1")] = commandPage(app, c)
	}
	for _, t := range topics() {
		pages[filepath.Join(topicDir, "refbatch-"+t.name+".7")] = topicPage(app, t)
	}
	for name, page := range pages {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(name, []byte(page), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// appPage is refbatch.1: the commands, the global flags, the pages to read.
func appPage(app *cli.App) string {
	var b strings.Builder
	header(&b, "refbatch", 1, app.Usage, app.Version)
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B refbatch\n[\\fB\\-\\-help\\fR] [\\fB\\-\\-version\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]\n")
	b.WriteString(".SH DESCRIPTION\n" + roffText(app.Usage+".") + "\n")
	b.WriteString(".PP\nEach command has its own page, refbatch\\-COMMAND(1), and its own \\fBrefbatch help\\fR \\fICOMMAND\\fR.\n")
	b.WriteString(".SH COMMANDS\n")
	var see []string
	for _, c := range manCommands(app.VisibleCommands()) {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffText(c.Name), roffText(c.Usage))
		see = append(see, fmt.Sprintf(".BR refbatch\\-%s (1)", roffText(c.Name)))
	}
	flagSection(&b, "OPTIONS", app.VisibleFlags())
	b.WriteString(".SH TOPICS\n.PP\nThe manual's topics: \\fBrefbatch help\\fR \\fITOPIC\\fR, or refbatch\\-TOPIC(7).\n")
	for _, t := range topics() {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffText(t.name), roffText(t.summary))
		see = append(see, fmt.Sprintf(".BR refbatch\\-%s (7)", roffText(t.name)))
	}
	b.WriteString(".SH SEE ALSO\n" + strings.Join(see, ",\n") + "\n")
	return b.String()
}

// commandPage is refbatch-CMD.1, with a section per subcommand.
func commandPage(app *cli.App, c *cli.Command) string {
	var b strings.Builder
	b.WriteString(pageMark)
	header(&b, "refbatch-"+c.Name, 1, c.Usage, app.Version)
	b.WriteString(".SH SYNOPSIS\n")
	synopsis(&b, "refbatch "+c.Name, c)
	subs := manCommands(c.VisibleCommands())
	for _, s := range subs {
		synopsis(&b, "refbatch "+c.Name+" "+s.Name, s)
	}
	desc, env, exit := splitDescription(c.Description)
	if desc == "" {
		desc = roffText(c.Usage + ".")
	}
	b.WriteString(".SH DESCRIPTION\n" + desc)
	flagSection(&b, "OPTIONS", c.VisibleFlags())
	for _, s := range subs {
		fmt.Fprintf(&b, ".SH %s\n", roffText(strings.ToUpper(c.Name+" "+s.Name)))
		if d, _, _ := splitDescription(s.Description); d != "" {
			b.WriteString(d)
		} else {
			b.WriteString(roffText(s.Usage+".") + "\n")
		}
		flagSection(&b, "", s.VisibleFlags())
	}
	if ref, ok := reference(c.Name); ok {
		b.WriteString(".SH DETAILS\n" + mdRoff(ref))
	}
	var envFlags []flagDoc
	for _, f := range c.VisibleFlags() {
		if d, ok := docOf(f); ok && len(d.env) > 0 {
			envFlags = append(envFlags, d)
		}
	}
	if env != "" || len(envFlags) > 0 {
		b.WriteString(".SH ENVIRONMENT\n" + env)
		for _, d := range envFlags {
			fmt.Fprintf(&b, ".TP\n.B %s\nread as %s: %s\n", roffText(strings.Join(d.env, ", ")), roffText(d.flags[0]), roffText(d.usage))
		}
	}
	if exit != "" {
		b.WriteString(".SH EXIT STATUS\n" + exit)
	}
	b.WriteString(".SH SEE ALSO\n.BR refbatch (1)\n")
	return b.String()
}

// manCommands are the commands that get a page or a section: all but help,
// which the pages replace.
func manCommands(cs []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cs {
		if c.Name != "help" {
			out = append(out, c)
		}
	}
	return out
}

// header starts a page; no hyphenation, so that flags and file names stay
// whole.
func header(b *strings.Builder, name string, section int, usage, version string) {
	fmt.Fprintf(b, ".TH %s %d \"\" \"refbatch %s\" \"refbatch manual\"\n.nh\n", roffText(strings.ToUpper(name)), section, roffText(version))
	fmt.Fprintf(b, ".SH NAME\n%s \\- %s\n", roffText(name), roffText(usage))
}

func synopsis(b *strings.Builder, name string, c *cli.Command) {
	fmt.Fprintf(b, ".PP\n.B %s\n", roffText(name))
	if len(c.VisibleFlags()) > 0 {
		b.WriteString("[\\fIoptions\\fR]")
	}
	if c.ArgsUsage != "" {
		fmt.Fprintf(b, " \\fI%s\\fR", roffText(c.ArgsUsage))
	}
	b.WriteString("\n")
}

// flagSection lists flags as help does, under title when there is one.
func flagSection(b *strings.Builder, title string, flags []cli.Flag) {
	if len(flags) == 0 {
		return
	}
	if title != "" {
		b.WriteString(".SH " + title + "\n")
	}
	for _, f := range flags {
		d, ok := docOf(f)
		if !ok {
			continue
		}
		var names []string
		for _, n := range d.flags {
			names = append(names, `\fB`+roffText(n)+`\fR`)
		}
		line := strings.Join(names, ", ")
		if d.placeholder != "" {
			line += ` \fI` + roffText(d.placeholder) + `\fR`
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", line, roffText(d.text()))
	}
}

// splitDescription turns a command's description into roff paragraphs:
// the description, and the text of its "Environment:" and "Exit status:"
// paragraphs, each without that label. A paragraph of indented lines (an
// example) keeps its lines.
func splitDescription(s string) (desc, env, exit string) {
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		switch {
		case strings.HasPrefix(p, "Exit status:"):
			exit += ".PP\n" + roffText(strings.TrimSpace(strings.TrimPrefix(p, "Exit status:"))) + "\n"
		case strings.HasPrefix(p, "Environment:"):
			env += ".PP\n" + roffText(strings.TrimSpace(strings.TrimPrefix(p, "Environment:"))) + "\n"
		case strings.HasPrefix(p, "  "):
			desc += ".PP\n.nf\n" + roffText(p) + "\n.fi\n"
		default:
			desc += ".PP\n" + roffText(p) + "\n"
		}
	}
	return desc, env, exit
}

// backquoted is `code` in help text: bold in a man page.
var backquoted = regexp.MustCompile("`([^`]+)`")

// roffText escapes text for roff: backslashes, hyphens (so that flags
// copied from the page are minus signs), and a period or quote that would
// start a line as a request; `code` becomes bold.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	s = backquoted.ReplaceAllString(s, `\fB$1\fR`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}
