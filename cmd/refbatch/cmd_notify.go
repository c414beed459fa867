package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/notify"
	"github.com/refbatch/refbatch/batch/standing"
)

// notifyEnv names the variable that gives webhook URLs when no --notify
// flag does.
const notifyEnv = "REFBATCH_NOTIFY"

// notifyOptions are the notification flags of run and notify.
type notifyOptions struct {
	secretFile string
	command    string
	timeout    time.Duration
	wait       time.Duration
}

// notifyFlags are run's and notify's flags for the targets, bound to o
// (the URLs are read from the context: see targets).
func notifyFlags(o *notifyOptions) []cli.Flag {
	return []cli.Flag{
		envNoted{&cli.StringSliceFlag{Name: "notify",
			Usage: "POST the batch's events (JSON, signed with HMAC-SHA256) to this address (repeatable); without it, the addresses in " + notifyEnv + " (space- or comma-separated) `URL`"}, notifyEnv},
		&cli.StringFlag{Name: "notify-secret-file", Usage: "file holding the shared secret that signs the events; required with --notify `FILE`", Destination: &o.secretFile},
		&cli.StringFlag{Name: "notify-cmd", Usage: "run this shell command for each event, with the event's JSON on its standard input `CMD`", Destination: &o.command},
		&cli.DurationFlag{Name: "notify-timeout", Usage: "time one delivery attempt may take", Value: batch.DefaultNotifyTimeout, Destination: &o.timeout},
		&cli.DurationFlag{Name: "notify-wait", Usage: "how long to wait for the events to be delivered at the end; the rest wait in the journal for the next run or refbatch notify", Value: batch.DefaultNotifyWait, Destination: &o.wait},
	}
}

// stallAfterFlag is run's and status's --stall-after.
func stallAfterFlag(dest *time.Duration) cli.Flag {
	return &cli.DurationFlag{Name: "stall-after", Usage: "a batch with rows not final that records no progress for this long is stalled", Value: standing.DefaultStallAfter, Destination: dest}
}

// targets reads the flags of c into the batch's notify options: the
// webhooks (from --notify, else notifyEnv), signed with the secret of
// --notify-secret-file, and the --notify-cmd command.
func (o notifyOptions) targets(c *cli.Context) (batch.NotifyOptions, error) {
	n := batch.NotifyOptions{Timeout: o.timeout, Wait: o.wait}
	urls := c.StringSlice("notify")
	if env := os.Getenv(notifyEnv); len(urls) == 0 && env != "" {
		urls = strings.FieldsFunc(env, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
	}
	var secret []byte
	if o.secretFile != "" {
		b, err := os.ReadFile(o.secretFile)
		if err != nil {
			return n, usageErrf("the file holds the shared secret, as the receiver has it", "reading --notify-secret-file: %w", err)
		}
		if secret = []byte(strings.TrimSpace(string(b))); len(secret) == 0 {
			return n, usageErr("--notify-secret-file "+o.secretFile+" is empty", "write the shared secret into it, for example: head -c 32 /dev/urandom | base64 > FILE")
		}
	}
	if len(urls) > 0 && secret == nil {
		return n, usageErr("--notify needs --notify-secret-file", "give the file that holds the secret the receiver checks the signature with")
	}
	for _, u := range urls {
		w, err := notify.NewWebhook(u, secret)
		if err != nil {
			return n, usageErrf("give an http:// or https:// URL", "--notify: %w", err)
		}
		n.Targets = append(n.Targets, w)
	}
	if o.command != "" {
		n.Targets = append(n.Targets, &notify.Command{Line: o.command, Secret: secret})
	}
	return n, nil
}

func notifyCommand() *cli.Command {
	var o notifyOptions
	var out, journalURL, logLevel string
	return &cli.Command{
		Name:  "notify",
		Usage: "deliver the batch's events that its receivers have not received yet",
		Description: `Delivers the events in the journal's outbox (batch_finished,
batch_interrupted, rows_need_person, batch_stalled) that a target has not
received yet, as run does while it works: to each --notify URL (signed), or
to --notify-cmd. A run killed before it delivered leaves its events there;
this command, or the next run, delivers them, with the same event IDs. It
retries a failing target with backoff for at most --notify-wait.

Environment: ` + notifyEnv + `, under --notify.

Exit status: 0 every event delivered to every target; 2 usage error (no
output folder, no target, no secret for a URL); 3 some events are not
delivered yet, or it was interrupted (Ctrl-C ends its wait at once): run
it again later.`,
		Flags: append([]cli.Flag{
			outFlag(&out, "the output folder"),
			journalFlag(&journalURL),
			&cli.StringFlag{Name: "log-level", Usage: "debug, info, warn or error `LEVEL`", Value: "info", Destination: &logLevel},
		}, notifyFlags(&o)...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("notify takes no arguments", "refbatch notify [--out DIR] --notify URL --notify-secret-file FILE")
			}
			p, err := placeOf(c, out, journalURL)
			if err != nil {
				return err
			}
			if err := refuseZero(c); err != nil {
				return err
			}
			n, err := o.targets(c)
			if err != nil {
				return err
			}
			if len(n.Targets) == 0 {
				return usageErr("no target to deliver to", "pass --notify URL (with --notify-secret-file) or --notify-cmd CMD, or set "+notifyEnv)
			}
			level := slog.LevelInfo
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usageErr(fmt.Sprintf("bad --log-level %q", logLevel), "use debug, info, warn or error")
			}
			log := slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level}))
			return runNotify(c.Context, p, n, log, c.App.Writer)
		},
	}
}

func runNotify(ctx context.Context, p layout.Place, n batch.NotifyOptions, log *slog.Logger, stdout io.Writer) error {
	pending, err := batch.Flush(ctx, p, n, log)
	if err != nil {
		return err
	}
	if pending > 0 {
		return &exitError{code: exitIncomplete, msg: fmt.Sprintf("%d event%s not delivered yet", pending, plural(pending)),
			hint: "run refbatch notify again later, or let the next run deliver them; refbatch status shows the attempts"}
	}
	fmt.Fprintln(stdout, "every event delivered")
	return nil
}
