package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/age"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/handover"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
)

type verifyOptions struct {
	out      string
	journal  string
	place    layout.Place
	identity string
	sources  bool
	json     bool
	quiet    bool
	root     string
	rootLog  string
}

func verifyCommand() *cli.Command {
	var o verifyOptions
	return &cli.Command{
		Name:  "verify",
		Usage: "prove an output folder's chain of custody: journal, artifacts, and optionally content and sources",
		Description: `Checks the journal's integrity, that every finished document's artifact is
present and hashes to what the journal recorded, and that no unknown file
sits among the artifacts. With --identity it decrypts each artifact and
checks its content hash and that its provenance names the journal's source
hash; with --sources it re-hashes every source file.

It recomputes the journal's custody log, a hash chain over every fact the
journal holds, and checks every table against it: an event edited, removed,
inserted or moved, or a row changed behind the log, is journal_rewritten,
naming the row. --root HASH checks that the log reaches a batch root pinned
earlier (printed by run and report; still valid after later runs added
work); --root-log FILE checks every entry run --root-log appended for this
batch.

Each finding names a file and a stable kind: journal_missing,
journal_corrupt, missing_artifact_entry, missing_artifact,
artifact_hash_mismatch, artifacts_swapped (two artifacts holding each
other's bytes: one finding naming both), unknown_file, artifact_unreadable,
content_hash_mismatch, provenance_mismatch, source_missing, source_changed,
source_unreadable, unfinished_document, undecided_state,
journal_rewritten, artifact_not_regular (a link, a FIFO, a device in an
artifact's place: not read), artifact_oversized and artifact_undersized
(larger or smaller than the size the journal recorded when the artifact
was written, or, for an artifact published before sizes were recorded,
larger than its document's pages can hold: not read; see refbatch help
custody). It prints the recipients the journal records for the batch.

An artifact a decision superseded (refbatch review retry) stays on disk and
is checked against the decision that names it; a document whose state is
not its artifact's verdict must be explained by a person's decision (an
accept of a review artifact makes it done).

Exit status: 0 everything verified; 1 a finding (a mismatch, a missing or
altered file); 2 usage error; 3 interrupted (Ctrl-C or SIGTERM): it
checked only part of the batch, and its findings so far are not printed:
run it again.`,
		Flags: []cli.Flag{
			outFlag(&o.out, "the output folder to verify"),
			journalFlag(&o.journal),
			&cli.StringFlag{Name: "identity", Aliases: []string{"i"}, EnvVars: []string{identityEnv}, Usage: "age identity file to decrypt and check artifact content `FILE`", Destination: &o.identity},
			&cli.BoolFlag{Name: "sources", Usage: "re-hash every source file and compare with the journal", Destination: &o.sources},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON on stdout", Destination: &o.json},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar", Destination: &o.quiet},
			&cli.StringFlag{Name: "root", Usage: "a batch root pinned earlier, which the custody log must reach `HASH`", Destination: &o.root},
			&cli.StringFlag{Name: "root-log", Usage: "a root log run --root-log appended to, whose entries for this batch the custody log must reach `FILE`", Destination: &o.rootLog},
		},
		Action: func(c *cli.Context) error {
			if o.root != "" && !isRoot(o.root) {
				return usageErr("--root is a batch root: 64 hexadecimal digits", "copy the root line of `refbatch run` or `refbatch report`, or report.json's custody.root")
			}
			if c.NArg() != 0 {
				return usageErr("verify takes no arguments", "refbatch verify --out DIR [--identity FILE] [--sources] [--json]")
			}
			var err error
			if o.place, err = placeOf(c, o.out, o.journal); err != nil {
				return err
			}
			return runVerify(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// loadIdentities reads the age identities of --identity FILE (none for
// ""), warning on stderr when others may read the file (warnOpenIdentity).
func loadIdentities(path string, stderr io.Writer) ([]age.Identity, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrf("pass the file `refbatch keygen` wrote", "reading identity: %w", err)
	}
	defer f.Close()
	warnOpenIdentity(f, stderr)
	ids, err := age.ParseIdentities(f)
	if err != nil {
		return nil, usageErrf("pass the file `refbatch keygen` wrote", "identity file %s: %w", path, err)
	}
	return ids, nil
}

func runVerify(ctx context.Context, o verifyOptions, stdout, stderr io.Writer) error {
	ids, err := loadIdentities(o.identity, stderr)
	if err != nil {
		return err
	}
	vo := audit.VerifyOptions{Out: o.place.Out, Journal: o.place.Journal, Identities: ids, Sources: o.sources, Root: o.root, RootLog: o.rootLog}
	var bar *progressbar.ProgressBar
	if !o.quiet && isTerminal(stderr) {
		vo.Progress = func(done, total int) {
			if bar == nil {
				bar = countBar(stderr, total, "verifying")
			}
			bar.Set(done)
		}
	}
	res, err := audit.Verify(ctx, vo)
	if bar != nil {
		bar.Finish()
	}
	if err == nil && ctx.Err() != nil {
		// Cut short (a check ended by the interruption reads as a
		// finding): nothing it found is printed.
		err = ctx.Err()
	}
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if res.Findings == nil {
			res.Findings = []audit.Finding{}
		}
		if res.Recipients == nil {
			res.Recipients = []string{}
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		for _, f := range res.Findings {
			writeFinding(stdout, f)
		}
		switch {
		case res.Custody == nil && !res.Legacy:
			// The journal could not be read: it says nothing of the
			// artifacts' encryption (printNoCustody says why).
		case len(res.Recipients) > 0:
			fmt.Fprintf(stdout, "artifacts encrypted to %s\n", termText(strings.Join(res.Recipients, ", ")))
		case res.Encrypted:
			fmt.Fprintln(stdout, "artifacts encrypted; the journal records no recipients (it predates them: its next run records them)")
		default:
			fmt.Fprintln(stdout, "artifacts in plaintext")
		}
		fmt.Fprintf(stdout, "documents %d, artifacts checked %d, decrypted %d, sources checked %d, decisions checked %d",
			res.Documents, res.Artifacts, res.Decrypted, res.Sources, res.Decisions)
		if res.Transcriptions > 0 {
			fmt.Fprintf(stdout, ", transcriptions %d", res.Transcriptions)
		}
		if res.TranscriptionsWithdrawn > 0 {
			fmt.Fprintf(stdout, " (%d withdrawn)", res.TranscriptionsWithdrawn)
		}
		fmt.Fprint(stdout, ": ")
		if res.OK() {
			fmt.Fprintln(stdout, "verified, no findings")
		} else {
			fmt.Fprintf(stdout, "%d finding%s\n", len(res.Findings), plural(len(res.Findings)))
		}
		printRoot(stdout, o, res)
		if res.Unsized > 0 {
			fmt.Fprintf(stdout, "note: %d artifact%s have no size in the journal (published before it recorded sizes): each was bounded by its document's pages instead\n",
				res.Unsized, plural(res.Unsized))
		}
		if res.Incomplete {
			fmt.Fprintf(stdout, "note: the batch is unfinished (%d documents not final); run it again to complete it\n", res.Unfinished)
		}
	}
	if !res.OK() {
		return &exitError{code: exitFailure}
	}
	return nil
}

// writeFinding prints a finding of verify (or export) as one line: its
// kind, its file (and the other file of a finding about two), the
// source_id(s) and the detail.
func writeFinding(w io.Writer, f audit.Finding) {
	fmt.Fprintf(w, "%-24s %s", f.Kind, termText(f.File))
	if f.OtherFile != "" {
		fmt.Fprintf(w, " and %s", termText(f.OtherFile))
	}
	if f.SourceID != "" {
		fmt.Fprintf(w, "  source_id=%s", termText(f.SourceID))
		if f.OtherSourceID != "" {
			fmt.Fprintf(w, ",%s", termText(f.OtherSourceID))
		}
	}
	if f.Detail != "" {
		fmt.Fprintf(w, "  (%s)", termText(f.Detail))
	}
	fmt.Fprintln(w)
}

// printRoot prints the batch root the custody log recomputes to and where
// the pinned root sits in it.
func printRoot(w io.Writer, o verifyOptions, res *audit.VerifyResult) {
	if res.Custody == nil {
		printNoCustody(w, res)
		return
	}
	fmt.Fprintf(w, "batch root %s after %d event%s\n", res.Custody.Root, res.Custody.Events, plural(int(res.Custody.Events)))
	if n := res.Custody.Pending; n > 0 {
		fmt.Fprintf(w, "%d event%s committed and not yet chained, checked after it: the next write chains them\n", n, plural(int(n)))
	}
	if res.PinnedAt == 0 {
		return
	}
	pinned := "the pinned root"
	if o.root == "" {
		pinned = "the root log's latest root"
	}
	if since := res.Custody.Events - res.PinnedAt; since > 0 {
		fmt.Fprintf(w, "%s is the batch root after event %d; %d event%s came after it\n", pinned, res.PinnedAt, since, plural(int(since)))
	} else {
		fmt.Fprintf(w, "%s is the batch root now\n", pinned)
	}
}

// printNoCustody says why verify checked no custody log: the journal is
// one an earlier refbatch wrote, or it could not be read as a journal
// (missing, not a regular file, not SQLite, corrupt), as its finding says.
func printNoCustody(w io.Writer, res *audit.VerifyResult) {
	if res.Legacy {
		fmt.Fprintln(w, "note: this journal has no custody log (an earlier refbatch wrote it); the next run adds one")
		return
	}
	for _, f := range res.Findings {
		if f.Kind == audit.FindingJournalMissing || f.Kind == audit.FindingJournalCorrupt {
			fmt.Fprintf(w, "note: the journal %s could not be read (%s): its custody log was not checked, and nothing was written\n",
				termText(f.File), termText(f.Detail))
			return
		}
	}
	fmt.Fprintln(w, "note: the journal could not be read: its custody log was not checked")
}

// isRoot reports whether s is written as a batch root: 64 hex digits.
func isRoot(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}

func showCommand() *cli.Command {
	var out, journalURL, identity string
	var asJSON bool
	return &cli.Command{
		Name:      "show",
		Usage:     "print a document's text (the one way to read an artifact back)",
		ArgsUsage: "SOURCE_ID",
		Description: `Finds the document's artifact in the journal, checks its hash, decrypts it
with --identity, checks its content hash and prints its text, pages separated
by form feeds, to stdout, ending with a newline (added when the text has
none: the content hash and the exported .txt are of the text without it).
--json prints the whole artifact (text, words,
confidences, provenance).

Exit status: 0 printed; 1 not found, altered or undecryptable; 2 usage error
(no output folder or journal there, or encrypted artifacts and no --identity);
3 interrupted.`,
		Flags: []cli.Flag{
			outFlag(&out, "the output folder"),
			journalFlag(&journalURL),
			&cli.StringFlag{Name: "identity", Aliases: []string{"i"}, EnvVars: []string{identityEnv}, Usage: "age identity file `FILE`", Destination: &identity},
			&cli.BoolFlag{Name: "json", Usage: "print the whole artifact as JSON", Destination: &asJSON},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("show takes one argument, a source_id", "refbatch show --out DIR --identity FILE SOURCE_ID")
			}
			p, err := placeOf(c, out, journalURL)
			if err != nil {
				return err
			}
			ids, err := loadIdentities(identity, c.App.ErrWriter)
			if err != nil {
				return err
			}
			a, err := audit.Show(c.Context, p, c.Args().First(), ids)
			switch {
			case errors.Is(err, layout.ErrNoJournal) || errors.Is(err, journal.ErrNotJournal) || errors.Is(err, store.ErrNoIdentities):
				return err // a usage error, mapped in one place
			case err != nil:
				return &exitError{code: exitFailure, err: err}
			}
			if asJSON {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(a)
			}
			_, err = io.WriteString(c.App.Writer, withFinalNewline(layout.ContentText(a.Pages)+handover.TranscriptionsText(a.Transcriptions)))
			return err
		},
	}
}

// withFinalNewline is text as a terminal and line tools expect it: ending
// with a newline, added when it has none.
func withFinalNewline(text string) string {
	if text == "" || strings.HasSuffix(text, "\n") {
		return text
	}
	return text + "\n"
}
