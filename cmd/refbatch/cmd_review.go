package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/page"
	"github.com/refbatch/refbatch/report/outcome"
)

const reviewExit = `Exit status: 0 listed, or every decision recorded; 1 unexpected failure;
2 usage error (no journal, not a refbatch journal), or a decision refused:
the document is not in review (decided already, or never in review) or no
document has that source_id; 3 interrupted (Ctrl-C ends a wait for the
journal another process is writing), or the disk is full: the decisions
printed are recorded, run it again for the others.`

func reviewCommand() *cli.Command {
	var out, journalURL, identity string
	var asJSON bool
	return &cli.Command{
		Name:  "review",
		Usage: "list the documents a person must look at, and record decisions about them",
		Description: `Without a decision, lists the documents in review (source_id, manifest line,
reason, pages, confidence, band, any earlier decision; under a row, what
its verdict found when it says, as the pages of a handwritten note not
transcribed, or the IDs or dates a letter prints where the manifest's are
not found, named when the artifact can be read: a plaintext batch's, or
with --identity), then the rejected
rows that still need a person with what refused each (its detail) and the
advice, and writes nothing. --json prints the documents in review.

  refbatch review accept [--note TEXT] [--user NAME] SOURCE_ID...
      the text is good enough: the document is done (the review reason is
      kept in the decision)
  refbatch review reject [--note TEXT] [--user NAME] SOURCE_ID...
      the document is rejected rejected_by_person
  refbatch review retry [page flags] [--note TEXT] [--user NAME] SOURCE_ID...
      the next run reads the document again, under the latest run's page
      policy and validation settings with those given here (--dpi, --lang,
      --force-ocr, --no-deskew, ..., --no-id-check, --high-confidence,
      --low-confidence, --coverage-threshold) replacing its own, its
      attempts counted afresh; it prints the settings it records, complete
  refbatch review dismiss [--note TEXT] [--user NAME] SOURCE_ID...
      acknowledge a rejected row: it stays rejected, with its reason, and
      no longer needs a person (run exits 0 once nothing else does)
  refbatch review undo [--note TEXT] [--user NAME] SOURCE_ID...
      take back the latest accept or reject: the document is in review
      again, for the reason it had (a retry, a dismissal or a decision a
      later reading superseded cannot be undone); one more decision, the
      one undone kept in the history
  refbatch review withdraw [--note TEXT] [--user NAME] SOURCE_ID N
      withdraw the N-th transcription made at the desk (as show lists
      them): its text leaves every export; it stays in custody

Each decision is one journal transaction, recorded only if the document is
still in review, with the user (default $USER), the host, the time and the
note. Notes are stored in the clear in the journal and shown in the
report: write no patient data in them.

` + reviewExit,
		Flags: []cli.Flag{
			outFlag(&out, "the output folder"),
			journalFlag(&journalURL),
			&cli.BoolFlag{Name: "json", Usage: "print the list as JSON on stdout", Destination: &asJSON},
			&cli.StringFlag{Name: "identity", Aliases: []string{"i"}, EnvVars: []string{identityEnv},
				Usage: "age identity that decrypts the artifacts: under a document whose participant ID or referral date was not found, show the IDs or dates its text holds instead `FILE`", Destination: &identity},
		},
		Subcommands: []*cli.Command{
			decideCommand(journal.Accept, "accept the documents' text: they are done"),
			decideCommand(journal.Reject, "reject the documents: rejected_by_person"),
			decideCommand(journal.Retry, "have the next run read the documents again, under the page flags given"),
			decideCommand(journal.Dismiss, "acknowledge rejected rows: they stay rejected and no longer need a person"),
			decideCommand(journal.Undo, "take back the latest accept or reject of the documents: they are in review again"),
			withdrawCommand(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr(fmt.Sprintf("unknown review command %q", c.Args().First()),
					"refbatch review [--out DIR] [--json], or refbatch review accept|reject|retry [flags] SOURCE_ID...")
			}
			p, err := placeOf(c, out, journalURL)
			if err != nil {
				return err
			}
			items, err := review.ListReview(p)
			if err != nil {
				return err
			}
			if err := sayWhatTheLetterSays(c.Context, p, items, identity, c.App.ErrWriter); err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(items)
			}
			if err := writeReviewList(c.App.Writer, items); err != nil {
				return err
			}
			if n, err := review.QueuedRetries(p); err != nil {
				return err
			} else if n > 0 {
				fmt.Fprintf(c.App.Writer, "%d document%s sent back to be read again (retry) wait%s for the next refbatch run of %s manifest, into this --out\n",
					n, plural(n), map[bool]string{true: "s"}[n == 1], map[bool]string{true: "its", false: "their"}[n == 1])
			}
			rejected, err := review.ListRejected(p)
			if err != nil {
				return err
			}
			return writeRejectedList(c.App.Writer, rejected)
		},
	}
}

// sayWhatTheLetterSays replaces the detail of each item in review
// id_not_found or date_not_found with what its text holds instead, named
// (review.DeskDocument reads it as the desk does), when its artifact can
// be read: a plaintext batch's, or with the identity file. Otherwise the
// item keeps the journal's detail, which counts and names no value.
func sayWhatTheLetterSays(ctx context.Context, p layout.Place, items []review.ReviewItem, identity string, stderr io.Writer) error {
	ids, err := loadIdentities(identity, stderr)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		// Without an identity only a plaintext batch's artifacts read.
		if rec, err := layout.ReadRecorded(p, ""); err != nil || !rec.Plaintext {
			return err
		}
	}
	for i, it := range items {
		if it.Reason != outcome.IDNotFound && it.Reason != outcome.DateNotFound {
			continue
		}
		doc, err := review.DeskDocument(ctx, p, it.SourceID, ids)
		if err != nil {
			return err
		}
		if doc.ArtifactError == "" && doc.Detail != "" {
			items[i].Detail = doc.Detail
		}
	}
	return nil
}

// writeReviewList prints the review list as a table.
func writeReviewList(w io.Writer, items []review.ReviewItem) error {
	if len(items) == 0 {
		_, err := fmt.Fprintln(w, "no document is in review")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LINE\tSOURCE_ID\tREASON\tPAGES\tCONFIDENCE\tBAND\tEARLIER DECISION")
	for _, it := range items {
		earlier := ""
		if d := it.Decision; d != nil {
			earlier = fmt.Sprintf("%s by %s@%s at %s", d.Action, termText(d.User), termText(d.Host), d.At.Format("2006-01-02 15:04Z07:00"))
		}
		conf := ""
		if it.Band != "" {
			conf = fmt.Sprintf("%.1f", it.MeanConfidence)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", it.ManifestLine, termText(it.SourceID), it.Reason, it.Pages, conf, it.Band, earlier)
		if it.Detail != "" {
			// Under its row, outside the columns: a sentence would widen
			// every row's.
			fmt.Fprintf(tw, "\t    %s\n", termText(it.Detail))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d in review: decide with refbatch review accept|reject|retry SOURCE_ID...\n", len(items))
	return err
}

// writeRejectedList prints the rejected rows that still need a person,
// each with its detail and the advice chosen from it.
func writeRejectedList(w io.Writer, items []review.RejectedItem) error {
	if len(items) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%d rejected row%s need%s a person: fix each as advised and run again, or refbatch review dismiss --note TEXT SOURCE_ID\n",
		len(items), plural(len(items)), map[bool]string{true: "s"}[len(items) == 1])
	for _, it := range items {
		fmt.Fprintf(w, "line %d  %s  %s", it.ManifestLine, termText(it.SourceID), it.Reason)
		if it.Detail != "" {
			fmt.Fprintf(w, ": %s", termText(it.Detail))
		}
		fmt.Fprintf(w, "\n    %s\n", it.Advice)
	}
	return nil
}

// decideCommand is `review accept`, `review reject` or `review retry`.
func decideCommand(action journal.Action, usage string) *cli.Command {
	o := review.DecideOptions{Action: action, CheckLanguages: ocr.CheckLanguages}
	flags := []cli.Flag{
		outFlag(&o.Out, "the output folder"),
		journalFlag(&o.Journal),
		&cli.StringFlag{Name: "note", Usage: "why, in your words (stored in the clear: no patient data) `TEXT`", Destination: &o.Note},
		&cli.StringFlag{Name: "user", Usage: "who decides `NAME`", DefaultText: "$USER", Destination: &o.User},
	}
	var policy []cli.Flag
	if action == journal.Retry {
		rv := &o.RetryValidation
		policy = append(pageFlags(&o.Retry),
			&cli.BoolFlag{Name: "no-id-check", Usage: "judge the next reading without the participant ID and referral date checks", Destination: &rv.NoIDCheck},
			&cli.Float64Flag{Name: "high-confidence", Usage: "document confidence from which the next reading is in the high band", Destination: &rv.HighConfidence},
			&cli.Float64Flag{Name: "low-confidence", Usage: "document confidence under which the next reading goes to review low_confidence", Destination: &rv.LowConfidence},
			&cli.Float64Flag{Name: "coverage-threshold", Usage: "unread share of a page's print from which the next reading goes to review incomplete_text", Destination: &rv.CoverageThreshold})
		flags = append(flags, policy...)
	}
	return &cli.Command{
		Name:      string(action),
		Usage:     usage,
		ArgsUsage: "SOURCE_ID...",
		Description: usage + `. Each decision is recorded only if the document is in
review; the others given are decided all the same.

` + reviewExit,
		Flags: flags,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErr(fmt.Sprintf("review %s takes one or more source_ids", action),
					fmt.Sprintf("refbatch review %s [--out DIR] [--note TEXT] SOURCE_ID...; refbatch review lists them", action))
			}
			if err := refuseZero(c); err != nil {
				return err
			}
			for _, f := range policy {
				if name := f.Names()[0]; c.IsSet(name) {
					o.RetrySet = append(o.RetrySet, strings.ReplaceAll(name, "-", "_"))
				}
			}
			o.SourceIDs = c.Args().Slice()
			if o.User == "" {
				o.User = currentUser()
			}
			o.Host, _ = os.Hostname()
			// `review --out DIR accept ID`: the folder (or journal) given
			// before the decision is the one meant, unless the decision
			// gives its own.
			p, err := placeOf(c, o.Out, o.Journal)
			if err != nil {
				return err
			}
			o.Out, o.Journal = p.Out, p.Journal
			return runDecide(c.Context, o, c.App.Writer)
		},
	}
}

// runDecide records the decisions and prints one line per document
// decided; refusals make one usage error naming each. Interrupted, it
// prints the decisions recorded before and returns the interruption.
func runDecide(ctx context.Context, o review.DecideOptions, stdout io.Writer) error {
	res, err := review.Decide(ctx, o)
	var se *page.SettingError
	if errors.As(err, &se) {
		return usageErrf("see refbatch review retry --help", "review retry: %s %v: want %s", settingFlag(se.Setting), se.Value, se.Want)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	var refused []string
	for _, r := range res {
		var nr *journal.NotInReviewError
		var nj *journal.NotRejectedError
		var nu *journal.NotUndoableError
		switch {
		case errors.As(r.Err, &nr):
			refused = append(refused, nr.Error())
		case errors.As(r.Err, &nu):
			refused = append(refused, nu.Error())
		case errors.As(r.Err, &nj):
			refused = append(refused, nj.Error())
		case errors.Is(r.Err, journal.ErrDismissed):
			refused = append(refused, fmt.Sprintf("%s is dismissed already", r.SourceID))
		case errors.Is(r.Err, journal.ErrNoDocument) && o.Action == journal.Dismiss:
			refused = append(refused, fmt.Sprintf("%s: no row has this source_id", r.SourceID))
		case errors.Is(r.Err, journal.ErrNoDocument):
			refused = append(refused, fmt.Sprintf("%s: no document has this source_id (a row rejected before OCR has none)", r.SourceID))
		case r.Err != nil:
			return r.Err
		default:
			d := r.Decision
			fmt.Fprintf(stdout, "%s %s: was %s", d.Action, termText(r.SourceID), strings.TrimSpace(string(d.FromState)+" "+string(d.FromReason)))
			switch d.Action {
			case journal.Accept:
				fmt.Fprint(stdout, ", now done")
			case journal.Reject:
				fmt.Fprint(stdout, ", now rejected")
			case journal.Dismiss:
				fmt.Fprint(stdout, ", acknowledged: it stays rejected and no longer needs a person")
			case journal.Retry:
				fmt.Fprintf(stdout, ", queued: the next run reads it again under %s", d.Settings)
			case journal.Undo:
				fmt.Fprint(stdout, ", in review again (an export made before holds it as it was)")
			}
			fmt.Fprintln(stdout)
		}
	}
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		return usageErr(strings.Join(refused, "\nrefbatch: error: "), "refbatch review lists the documents in review")
	}
	return nil
}

// currentUser names who runs refbatch: $USER, else the account's name.
func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}
