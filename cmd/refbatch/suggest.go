package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// This file is what refbatch says to a mistyped command or flag, and to
// no command at all.

// rootAction runs for `refbatch` with no command, or with one it does not
// know: the short help (on stderr) and exit 2, or "did you mean".
func rootAction(c *cli.Context) error {
	if c.NArg() == 0 {
		c.App.Writer, c.App.ErrWriter = c.App.ErrWriter, c.App.Writer
		cli.ShowAppHelp(c)
		c.App.Writer, c.App.ErrWriter = c.App.ErrWriter, c.App.Writer
		return usageErr("no command given", "refbatch COMMAND [flags]; refbatch help COMMAND says more")
	}
	name := c.Args().First()
	var names []string
	for _, cmd := range c.App.VisibleCommands() {
		names = append(names, cmd.Names()...)
	}
	hint := "refbatch help lists the commands"
	if s := closest(name, names); s != "" {
		hint = fmt.Sprintf("did you mean refbatch %s?", s)
	}
	return usageErr(fmt.Sprintf("unknown command %q", name), hint)
}

// onUsageError makes a bad flag a usage error (exit 2), with "did you
// mean" for a flag the command does not have.
func onUsageError(c *cli.Context, err error, _ bool) error {
	hint := "see refbatch --help"
	if isSubcommand(c) {
		hint = "see refbatch " + c.Command.FullName() + " --help"
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
		flags := c.App.Flags
		if isSubcommand(c) {
			flags = c.Command.Flags
		}
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		if s := closest(strings.TrimLeft(name, "-"), names); s != "" {
			hint = fmt.Sprintf("did you mean --%s? %s", s, hint)
		}
	}
	return usageErrf(hint, "%w", err)
}

// isSubcommand reports whether c is a command's context rather than the
// app's, whose own command carries the app's name.
func isSubcommand(c *cli.Context) bool {
	return c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name
}

// closest is the name nearest to s, if it is near enough to be a typo:
// within a third of its length in edits (at least 1, at most 3), or s a
// prefix of it.
func closest(s string, names []string) string {
	best, bestD := "", 1<<30
	for _, n := range names {
		if len(n) > 1 && strings.HasPrefix(n, s) && len(s) >= 3 {
			return n
		}
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD <= min(3, max(1, len(s)/3)) {
		return best
	}
	return ""
}

// editDistance is the Damerau (optimal string alignment) distance of a
// and b: insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
