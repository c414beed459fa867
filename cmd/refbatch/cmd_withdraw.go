package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/review"
)

// withdrawCommand is `review withdraw`: take back a transcription a
// person made at the desk.
func withdrawCommand() *cli.Command {
	o := review.WithdrawOptions{}
	var identity string
	return &cli.Command{
		Name:      "withdraw",
		Usage:     "withdraw a transcription made at the desk: its text leaves the document's exports, and stays in custody",
		ArgsUsage: "SOURCE_ID N",
		Description: `Withdraws the N-th transcription of the document (counted from 1, oldest
first, among those standing, as refbatch show lists them after the text):
one more artifact version, which names the transcription withdrawn, and
one journal event (transcription_withdrawn), recorded only if the document
is in review. The transcription and its event stay in custody: verify
checks them and counts the withdrawal, review --json and the report show
it; show, the desk and every export (txt, ALTO, PDF) no longer carry its
text. Undo an accept first to withdraw a transcription of a document done.

  refbatch review withdraw --out OUT --note "typed on the wrong page" R-0002 1

` + reviewExit,
		Flags: []cli.Flag{
			outFlag(&o.Out, "the output folder"),
			journalFlag(&o.Journal),
			&cli.StringFlag{Name: "note", Usage: "why, in your words (stored in the clear: no patient data) `TEXT`", Destination: &o.Note},
			&cli.StringFlag{Name: "user", Usage: "who withdraws it `NAME`", DefaultText: "$USER", Destination: &o.User},
			&cli.StringFlag{Name: "identity", Aliases: []string{"i"}, EnvVars: []string{identityEnv},
				Usage: "age identity that decrypts the artifacts (an encrypted batch) `FILE`", Destination: &identity},
		},
		Action: func(c *cli.Context) error {
			n, err := strconv.Atoi(c.Args().Get(1))
			if c.NArg() != 2 || err != nil || n < 1 {
				return usageErr("review withdraw takes a source_id and the transcription's number (from 1)",
					"refbatch review withdraw [--out DIR] [--note TEXT] SOURCE_ID N; refbatch show SOURCE_ID lists the transcriptions")
			}
			if err := refuseZero(c); err != nil {
				return err
			}
			o.SourceID, o.Number = c.Args().First(), n
			if o.User == "" {
				o.User = currentUser()
			}
			o.Host, _ = os.Hostname()
			p, err := placeOf(c, o.Out, o.Journal)
			if err != nil {
				return err
			}
			o.Out, o.Journal = p.Out, p.Journal
			if o.Identities, err = loadIdentities(identity, c.App.ErrWriter); err != nil {
				return err
			}
			w, err := review.WithdrawTranscription(c.Context, o)
			var nr *journal.NotInReviewError
			switch {
			case errors.As(err, &nr):
				return usageErr(nr.Error(), "a transcription is withdrawn while its document is in review: refbatch review undo puts a document accepted or rejected back")
			case errors.Is(err, review.ErrNoTranscription), errors.Is(err, journal.ErrNoDocument):
				return usageErr(err.Error(), "refbatch show SOURCE_ID lists the document's transcriptions")
			case err != nil:
				return err
			}
			fmt.Fprintf(c.App.Writer, "withdraw %s: transcription %d (page %d%s) withdrawn; it stays in custody, in no export\n",
				termText(o.SourceID), n, w.Page+1, map[bool]string{true: ", corrects " + w.Field}[w.Field != ""])
			return nil
		},
	}
}
