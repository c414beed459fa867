package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
)

// outFlag is every command's --out: the output folder, batch.DefaultOut in
// the current folder unless given. usage says what the command does with it.
func outFlag(dest *string, usage string) *cli.StringFlag {
	return &cli.StringFlag{Name: "out", Usage: usage + " `DIR`", Value: layout.DefaultOut,
		DefaultText: layout.DefaultOut + " in the current folder", Destination: dest}
}

// givenOut returns the --out given to the command or, when it gave none,
// to a command it is part of (`review --out DIR accept ID`).
func givenOut(c *cli.Context) (string, bool) {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet("out") {
			return ctx.String("out"), true
		}
	}
	return "", false
}

// checkOut refuses an output folder that is not there, naming where it
// looked and, when --out was left out, the rule that chose the folder. The
// commands that read a batch call it first; it writes nothing.
func checkOut(c *cli.Context, out string) error {
	st, err := os.Stat(out)
	if err == nil && st.IsDir() {
		return nil
	}
	where := out
	if abs, aerr := filepath.Abs(out); aerr == nil {
		where = abs
	}
	msg := "no output folder at " + where
	if err == nil {
		msg = where + " is not a folder"
	}
	hint := "pass --out DIR, the folder `refbatch run` wrote"
	if _, given := givenOut(c); !given {
		hint = "without --out, refbatch looks for " + layout.DefaultOut + " in the current folder; " + hint
	}
	return usageErr(msg, hint)
}

// refuseOldDefault stops a run without --out from starting a new batch in
// the current folder when refbatch-out beside the manifest, the default
// before every command shared one, already holds a batch and the current
// folder none: rerunning the command that made it must resume it, not
// read every document again.
func refuseOldDefault(c *cli.Context, manifest string) error {
	if c.IsSet("out") {
		return nil
	}
	here, err1 := filepath.Abs(layout.DefaultOut)
	beside, err2 := filepath.Abs(filepath.Join(filepath.Dir(manifest), layout.DefaultOut))
	if err1 != nil || err2 != nil || here == beside {
		return nil
	}
	_, errHere := os.Stat(filepath.Join(here, layout.JournalFile))
	if _, err := os.Stat(filepath.Join(beside, layout.JournalFile)); err != nil || errHere == nil {
		return nil
	}
	return usageErr(fmt.Sprintf("no --out given, and %s holds a batch while %s does not", beside, here),
		fmt.Sprintf("pass --out %s to resume that batch (refbatch-out beside the manifest was the default of earlier versions), or --out %s to start a new one", beside, layout.DefaultOut))
}

// bytesFlag is a flag for a number of bytes, bound to dest (set to def
// until the flag is given): plain bytes, or a number with a unit as
// byteSize reads it.
func bytesFlag(name, usage string, def int64, dest *int64) *cli.GenericFlag {
	*dest = def
	return &cli.GenericFlag{Name: name, Usage: usage + " `SIZE`", Value: byteSize{dest}}
}

// sizeHelp says once, in the descriptions of the commands with byte flags,
// what SIZE takes.
const sizeHelp = `A SIZE is bytes (67108864) or a number with a unit: KiB, MiB, GiB (powers
of 1024: 64MiB, 4GiB) or kB, MB, GB (powers of 1000: 2GB).`

// byteSize is a byte count's flag value: bytes, or a number with a unit
// (64MiB, 64 MiB, 1.5GiB, 2GB), as go-humanize reads them. A leading minus
// is kept, so that the setting's own check refuses it by the flag's name.
type byteSize struct{ n *int64 }

func (b byteSize) Set(s string) error {
	neg := strings.HasPrefix(s, "-")
	v, err := humanize.ParseBytes(strings.TrimPrefix(s, "-"))
	if err != nil {
		return errors.New("want bytes, or a size with a unit such as 64MiB or 2GB")
	}
	if v > math.MaxInt64 {
		return errors.New("too large")
	}
	*b.n = int64(v)
	if neg {
		*b.n = -*b.n
	}
	return nil
}

// String prints the count with the largest binary unit that divides it,
// as the flag would take it back (64MiB, 4GiB), else in bytes.
func (b byteSize) String() string {
	if b.n == nil {
		return ""
	}
	n := *b.n
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprint(n)
}

// envNoted is a flag whose command reads an environment variable itself,
// under a rule urfave's EnvVars cannot say (REFBATCH_RECIPIENTS counts only
// when no recipient flag is given): help and the man pages list the
// variable beside the flag, and urfave leaves it alone.
type envNoted struct {
	*cli.StringSliceFlag
	env string
}

func (f envNoted) GetEnvVars() []string { return []string{f.env} }

func (f envNoted) String() string { return cli.FlagStringer(f) }

// journalEnv names the variable that gives --journal when the flag is not
// given: export it once for a shell that works on a shared batch.
const journalEnv = "REFBATCH_JOURNAL"

// journalFlag is every batch command's --journal: the batch's PostgreSQL
// journal, which processes on several machines share.
func journalFlag(dest *string) *cli.StringFlag {
	return &cli.StringFlag{Name: "journal", EnvVars: []string{journalEnv}, Destination: dest,
		Usage: "the batch's PostgreSQL journal, shared by processes on many machines (put the password in PGPASSWORD or ~/.pgpass, not in it); without it, journal.db in --out `URL`"}
}

// placeOf returns where the batch a command works on is: --journal and
// --out, each as given to the command or to a command it is part of. With
// a journal, a --out not given is the folder the journal recorded;
// without one, the folder must be there (checkOut).
func placeOf(c *cli.Context, out, journalURL string) (layout.Place, error) {
	p := layout.Place{Out: out, Journal: journalURL}
	for _, ctx := range c.Lineage() {
		if ctx.IsSet("journal") {
			p.Journal = ctx.String("journal")
			break
		}
	}
	given, isGiven := givenOut(c)
	if isGiven {
		p.Out = given
	}
	if p.Journal == "" {
		return p, checkOut(c, p.Out)
	}
	if !journal.IsURL(p.Journal) {
		return p, journalNotURL(p.Journal)
	}
	if !isGiven {
		p.Out = ""
	}
	return layout.Locate(p)
}

// journalNotURL is the usage error of a --journal that is not a
// PostgreSQL URL.
func journalNotURL(location string) error {
	return usageErr("--journal takes a postgres:// URL, not "+journal.Redact(location),
		"a SQLite journal is always journal.db in --out: pass --out DIR; for PostgreSQL, --journal postgres://USER@HOST:PORT/DB")
}
