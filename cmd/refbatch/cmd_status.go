package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/report/outcome"
)

// statusOptions are the flags of `refbatch status`.
type statusOptions struct {
	out        string
	journal    string
	place      layout.Place
	json       bool
	check      bool
	stallAfter time.Duration
}

func statusCommand() *cli.Command {
	var o statusOptions
	return &cli.Command{
		Name:  "status",
		Usage: "show how a batch stands: rows per state, queue, leases, throughput, ETA",
		Description: `Reads the journal of an output folder, also while another process runs the
batch, and prints rows per state, how many documents are running and
waiting and how long the oldest has waited, which processes hold leases,
pages per minute over the last five minutes and an estimate of the time
left. It only reads.

With --check, for cron and monitors, it prints one line instead: whether
the batch is complete, running (a live process works on it), waiting, or
stalled (rows not final, no live process, no progress for --stall-after),
and what to do.

Exit status: 0 the status was read (whatever the batch's state), or with
--check the batch is complete, running or waiting; 1 unexpected failure; 2
usage error (no journal there); 3 interrupted; 5 with --check, the batch
is stalled: run the same refbatch run command again to resume.`,
		Flags: []cli.Flag{
			outFlag(&o.out, "the output folder"),
			journalFlag(&o.journal),
			&cli.BoolFlag{Name: "json", Usage: "print the status (with --check, the health) as one JSON object on stdout", Destination: &o.json},
			&cli.BoolFlag{Name: "check", Usage: "print one line on the batch's health; exit 5 when it is stalled", Destination: &o.check},
			stallAfterFlag(&o.stallAfter),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("status takes no arguments", "refbatch status [--out DIR] [--json]")
			}
			var err error
			if o.place, err = placeOf(c, o.out, o.journal); err != nil {
				return err
			}
			return runStatus(o, c.App.Writer)
		},
	}
}

func runStatus(o statusOptions, stdout io.Writer) error {
	st, err := standing.ReadStatus(o.place, time.Now())
	if err != nil {
		return err
	}
	if o.check {
		return runCheck(st, o, stdout)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	return writeStatus(stdout, st)
}

// runCheck prints the batch's health in one line (or one JSON object) and
// exits exitStalled when it is stalled.
func runCheck(st *standing.Status, o statusOptions, stdout io.Writer) error {
	h := st.Health(o.stallAfter)
	if o.json {
		if err := json.NewEncoder(stdout).Encode(h); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, healthLine(st, h))
	}
	if h.Stalled {
		return &exitError{code: exitStalled}
	}
	return nil
}

// healthLine is status --check's line: the state, why, and what to do.
func healthLine(st *standing.Status, h standing.Health) string {
	idle := humanSeconds(h.IdleSeconds)
	rows := fmt.Sprintf("%d row%s not final", h.NotFinal, plural(h.NotFinal))
	switch h.State {
	case standing.HealthComplete:
		if h.NeedPerson > 0 {
			return fmt.Sprintf("ok: complete, every row is final; %d row%s need%s a person (refbatch review)", h.NeedPerson, plural(h.NeedPerson), map[bool]string{true: "s"}[h.NeedPerson == 1])
		}
		return "ok: complete, every row is final"
	case standing.HealthRunning:
		return fmt.Sprintf("ok: running, %s, last progress %s ago", rows, idle)
	case standing.HealthWaiting:
		return fmt.Sprintf("ok: waiting, %s and no process working on it, last progress %s ago (stalled after %s): run the same refbatch run command again to resume",
			rows, idle, humanSeconds(h.StallAfterSeconds))
	}
	return fmt.Sprintf("stalled: %s, no process working on it, no progress for %s: run the same refbatch run command again to resume", rows, idle)
}

// writeStatus prints a Status for people, one aspect per line.
func writeStatus(w io.Writer, st *standing.Status) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	batchLine := st.State
	if st.LiveRuns > 0 {
		batchLine += fmt.Sprintf(" (%d run%s going)", st.LiveRuns, plural(st.LiveRuns))
	}
	fmt.Fprintf(tw, "batch\t%s\n", batchLine)
	fmt.Fprintf(tw, "out\t%s\n", termText(st.Out))
	if st.Journal != "" {
		fmt.Fprintf(tw, "journal\t%s\n", termText(st.Journal))
	}
	for _, m := range st.Manifests {
		rows := "unreadable now"
		if m.Rows >= 0 {
			rows = fmt.Sprintf("%d rows", m.Rows)
		}
		fmt.Fprintf(tw, "manifest\t%s\t%s, %d recorded\n", termText(m.Path), rows, m.Recorded)
	}
	var parts []string
	for _, s := range outcome.States() {
		parts = append(parts, fmt.Sprintf("%d %s", st.Rows[s], s))
	}
	switch {
	case st.NotRecorded > 0:
		parts = append(parts, fmt.Sprintf("%d not recorded yet", st.NotRecorded))
	case st.NotRecorded < 0:
		parts = append(parts, "rows not recorded unknown")
	}
	fmt.Fprintf(tw, "rows\t%s\n", strings.Join(parts, ", "))
	for i, w := range st.Withdrawn {
		if i == withdrawnShown {
			fmt.Fprintf(tw, "withdrawn\tand %d more\t(status --json lists them all, the report too)\n", len(st.Withdrawn)-withdrawnShown)
			break
		}
		state := string(w.State)
		if w.Reason != "" {
			state += " " + string(w.Reason)
		}
		fmt.Fprintf(tw, "withdrawn\t%s\tline %d of %s until deleted; kept %s, in no count\n", termText(w.SourceID), w.Line,
			termText(filepath.Base(w.Manifest)), state)
	}
	if st.Readmitted > 0 || st.Reread > 0 {
		fmt.Fprintf(tw, "reruns\t%d rows admitted again once fixed, %d read again once edited (see the report's history)\n", st.Readmitted, st.Reread)
	}
	queue := fmt.Sprintf("%d running, %d waiting", st.Running, st.Waiting)
	if st.Waiting > 0 {
		queue += ", oldest waiting " + humanSeconds(st.OldestWaitingSeconds)
	}
	fmt.Fprintf(tw, "queue\t%s\n", queue)
	if len(st.Leases) == 0 {
		fmt.Fprintf(tw, "leases\tnone\n")
	}
	for _, l := range st.Leases {
		state := "live, expires in " + humanSeconds(l.ExpiresInSeconds)
		if !l.Live {
			state = "stale (expired or process gone): claimable again"
		}
		fmt.Fprintf(tw, "lease\t%s\t%d document%s, %s\n", termText(l.Owner), l.Documents, plural(l.Documents), state)
	}
	rate := fmt.Sprintf("%.1f pages/min over the last %s", st.PagesPerMinute, humanSeconds(st.WindowSeconds))
	if !st.LastPage.IsZero() {
		rate += fmt.Sprintf(" (last page %s ago)", humanSeconds(st.Now.Sub(st.LastPage).Seconds()))
	}
	fmt.Fprintf(tw, "throughput\t%s\n", rate)
	writeNotifications(tw, st.Notifications)
	about := ""
	if st.Estimated {
		about = "about "
	}
	switch {
	case st.State == "complete":
		fmt.Fprintf(tw, "eta\tnone: every row is final\n")
	case st.ETASeconds >= 0:
		fmt.Fprintf(tw, "eta\t%s for %s%d pages\n", humanSeconds(st.ETASeconds), about, st.RemainingPages)
	default:
		fmt.Fprintf(tw, "eta\tunknown: no page recognised in the last %s (%s%d pages left)\n", humanSeconds(st.WindowSeconds), about, st.RemainingPages)
	}
	return tw.Flush()
}

// humanSeconds rounds a duration for a person reading a status line.
func humanSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + "s"
	case d < time.Hour:
		d = d.Round(time.Second)
	default:
		d = d.Round(time.Minute)
	}
	// Duration.String says 8m0s and 2h0m0s; people say 8m and 2h.
	out := d.String()
	for _, zero := range []string{"0s", "0m"} {
		if strings.HasSuffix(out, "m"+zero) || strings.HasSuffix(out, "h"+zero) {
			out = strings.TrimSuffix(out, zero)
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeNotifications prints the outbox's events and, per target tried,
// what reached it; nothing when no target was ever tried: a batch run
// without notifications still keeps its events (for refbatch notify),
// which are no news to its operator.
func writeNotifications(w io.Writer, n standing.NotifyStatus) {
	if n.Events == 0 || len(n.Targets) == 0 {
		return
	}
	fmt.Fprintf(w, "notify\t%d event%s in the outbox\n", n.Events, plural(n.Events))
	for _, t := range n.Targets {
		line := fmt.Sprintf("%d delivered, %d pending, %d attempt%s", t.Delivered, t.Pending, t.Attempts, plural(t.Attempts))
		if t.LastError != "" {
			line += ", last error: " + termText(t.LastError)
		}
		fmt.Fprintf(w, "target\t%s\t%s\n", termText(t.Target), line)
	}
}

// withdrawnShown is how many withdrawn rows status prints before it
// counts the rest: a manifest cut in half would fill the screen.
const withdrawnShown = 10
