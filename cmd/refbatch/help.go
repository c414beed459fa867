package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Help prints each flag as flagDoc says; the man pages use the same
// flagDoc, so that both read alike.
func init() {
	cli.FlagStringer = func(f cli.Flag) string {
		d, ok := docOf(f)
		if !ok {
			return ""
		}
		return d.names() + "\t" + d.text()
	}
}

// flagDoc is a flag as help and the man pages show it: its names, the
// placeholder of its value written once after them (urfave would print it
// after every name and again inside the usage), the usage, the default and
// the environment variables it reads.
type flagDoc struct {
	flags       []string // --out, -o
	placeholder string
	usage       string
	def         string
	env         []string
}

// docOf describes f. A flag's usage names its value's placeholder in
// backquotes, anywhere (urfave's convention); a flag with none gets one
// from its type.
func docOf(f cli.Flag) (flagDoc, bool) {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return flagDoc{}, false
	}
	d := flagDoc{env: df.GetEnvVars()}
	d.placeholder, d.usage = splitPlaceholder(df.GetUsage())
	if df.TakesValue() && d.placeholder == "" {
		d.placeholder = typePlaceholder(f)
	}
	for _, n := range f.Names() {
		if len(n) == 1 {
			d.flags = append(d.flags, "-"+n)
		} else {
			d.flags = append(d.flags, "--"+n)
		}
	}
	// A switch's default is off; saying so on every one is noise.
	if _, isBool := f.(*cli.BoolFlag); !isBool {
		d.def = df.GetDefaultText()
	}
	return d, true
}

// names is "--out, -o DIR".
func (d flagDoc) names() string {
	s := strings.Join(d.flags, ", ")
	if d.placeholder != "" {
		s += " " + d.placeholder
	}
	return s
}

// text is the usage with the default and the environment variables.
func (d flagDoc) text() string {
	s := d.usage
	if d.def != "" {
		s += " (default: " + d.def + ")"
	}
	if len(d.env) > 0 {
		s += " [$" + strings.Join(d.env, ", $") + "]"
	}
	return s
}

// splitPlaceholder takes the first backquoted word out of usage: the
// placeholder, and the usage that reads without it.
func splitPlaceholder(usage string) (placeholder, rest string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	placeholder = usage[i+1 : i+1+j]
	rest = strings.Join(strings.Fields(usage[:i]+" "+usage[i+2+j:]), " ")
	for _, p := range []string{",", ":", ";", ")"} {
		rest = strings.ReplaceAll(rest, " "+p, p)
	}
	return placeholder, strings.ReplaceAll(rest, "( ", "(")
}

// typePlaceholder names the value of a flag whose usage names none.
func typePlaceholder(f cli.Flag) string {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag:
		return "N"
	case *cli.Float64Flag:
		return "NUMBER"
	case *cli.DurationFlag:
		return "DURATION"
	}
	return "VALUE"
}

// versionCommand is `refbatch version`, which prints what --version does.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print refbatch's version, as artifacts and reports record it",
		Description: `Prints the version of this build: what make build stamped (git describe),
else the module version of a go install, else "devel-" and the revision Go
stamped. Every artifact's provenance and every report records the same
under "refbatch". refbatch --version prints the same.

Exit status: 0.`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("version takes no arguments", "refbatch version")
			}
			cli.ShowVersion(c)
			return nil
		},
	}
}
