package report

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// WriteText writes the short summary printed at the end of a run: the
// batch's status (complete, running or incomplete), rows per state with the reasons behind each state, pages
// and throughput, wall and CPU time, and the SLO share when an SLO was set;
// then each reason's explanation (Explain), the one report.html gives.
// Plain text, no colour, the same bytes for the same Report.
//
//	batch        complete
//	rows         8
//	  done       2
//	  review     2   attempts_exhausted 1, low_confidence 1
//	  rejected   3   not_pdf 2, missing_field 1
//	  duplicate  1
//	blank rows   2   skipped: every column empty
//	pages        10  6.7 pages/min
//	time         1m30s wall, 2m51s cpu
//	retries      1
//	within slo   50.0%  done within 10m0s, of 4 documents done or due
//	batch root 3f0c…(64 hex digits) after 57 events
//
//	attempts_exhausted  The engine failed on every attempt (...)
//	...
//	missing_field       a required column is empty. Fill in the empty column (...)
//
// Reasons are listed most frequent first. Unfinished states (such as queued
// in an interrupted run) follow the final ones. The blank rows line shows
// only when the manifest had some. In a run's summary (ThisRun set), the
// time line says the run's time first: "20s wall, 41s cpu this run;
// 1m30s wall, 2m51s cpu in all".
func (r *Report) WriteText(w io.Writer) error {
	n := r.normalized()
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "batch\t%s\n", n.Status())
	fmt.Fprintf(tw, "rows\t%d\n", n.Summary.Rows)
	var tally reasonTally
	if err := n.eachRow(func(row Row) error { tally.add(row); return nil }); err != nil {
		return err
	}
	byState := tally.byState()
	var reasons []outcome.Reason
	for _, st := range orderedStates(n.Summary.States) {
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", st, n.Summary.States[st], formatReasons(byState[st]))
		for _, rc := range byState[st] {
			if rc.Dismissed < rc.N { // a person acknowledged the others: no advice
				reasons = append(reasons, rc.Reason)
			}
		}
	}
	if n.Summary.Withdrawn > 0 {
		fmt.Fprintf(tw, "withdrawn\t%d\tno longer in the manifest: kept as they were, in no other count\n", n.Summary.Withdrawn)
	}
	if n.Summary.BlankRows > 0 {
		fmt.Fprintf(tw, "blank rows\t%d\tskipped: every column empty\n", n.Summary.BlankRows)
	}
	fmt.Fprintf(tw, "pages\t%d\t%.1f pages/min\n", n.Summary.Pages, n.Summary.PagesPerMinute)
	if t := n.ThisRun; t != nil {
		fmt.Fprintf(tw, "time\t%s wall, %s cpu this run; %s wall, %s cpu in all\n", formatSeconds(t.WallSeconds), formatSeconds(t.CPUSeconds),
			formatSeconds(n.Run.WallSeconds), formatSeconds(n.Run.CPUSeconds))
	} else {
		fmt.Fprintf(tw, "time\t%s wall, %s cpu\n", formatSeconds(n.Run.WallSeconds), formatSeconds(n.Run.CPUSeconds))
	}
	fmt.Fprintf(tw, "retries\t%d\n", n.Summary.Retries)
	switch {
	case n.Summary.SLOSeconds > 0 && n.Summary.SLOMeasured == 0:
		fmt.Fprintf(tw, "within slo\tn/a\tno document done, nor admitted more than %s ago\n", formatSeconds(n.Summary.SLOSeconds))
	case n.Summary.SLOSeconds > 0:
		fmt.Fprintf(tw, "within slo\t%.1f%%\tdone within %s, of %d documents done or due\n",
			100*n.Summary.WithinSLO, formatSeconds(n.Summary.SLOSeconds), n.Summary.SLOMeasured)
	}
	tw.Flush() // cannot fail on a bytes.Buffer
	if n.Custody != nil {
		// Its own line, so that 64 digits do not widen the table.
		events := "events"
		if n.Custody.Events == 1 {
			events = "event"
		}
		fmt.Fprintf(&buf, "batch root %s after %d %s\n", n.Custody.Root, n.Custody.Events, events)
	}
	// The explanations have a table of their own: their first column would
	// widen the one above.
	tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	for i, reason := range reasons {
		if i == 0 {
			fmt.Fprintln(tw)
		}
		if why := explain(reason, n.Summary.ConfidenceBands.Low); why != "" {
			fmt.Fprintf(tw, "%s\t%s\n", reason, why)
		}
	}
	tw.Flush()
	// An empty last column leaves padding behind; trim it so the output has
	// no trailing spaces.
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	if _, err := io.WriteString(w, strings.Join(lines, "\n")); err != nil {
		return fmt.Errorf("writing summary: %w", err)
	}
	return nil
}

// reasonCount is one reason and how many rows gave it, Dismissed of them
// acknowledged by a person (refbatch review dismiss).
type reasonCount struct {
	Reason    outcome.Reason
	N         int
	Dismissed int
}

// reasonTally counts the rows' reasons per state, one row at a time, and
// apart the rejected rows a person dismissed.
type reasonTally struct {
	n         map[outcome.State]map[outcome.Reason]int
	dismissed map[outcome.Reason]int
}

func (t *reasonTally) add(r Row) {
	if r.Reason == "" || r.Withdrawn {
		return
	}
	if t.n == nil {
		t.n, t.dismissed = map[outcome.State]map[outcome.Reason]int{}, map[outcome.Reason]int{}
	}
	if t.n[r.State] == nil {
		t.n[r.State] = map[outcome.Reason]int{}
	}
	t.n[r.State][r.Reason]++
	if r.State == outcome.Rejected && r.Decision != nil && r.Decision.Action == dismissAction {
		t.dismissed[r.Reason]++
	}
}

// dismissAction is the action of a decision that dismissed a rejected row.
const dismissAction = "dismiss"

// byState lists each state's reasons, most frequent first, ties by name.
func (t reasonTally) byState() map[outcome.State][]reasonCount {
	out := make(map[outcome.State][]reasonCount, len(t.n))
	for st, m := range t.n {
		var list []reasonCount
		for reason, n := range m {
			rc := reasonCount{Reason: reason, N: n}
			if st == outcome.Rejected {
				rc.Dismissed = t.dismissed[reason]
			}
			list = append(list, rc)
		}
		sortReasonCounts(list)
		out[st] = list
	}
	return out
}

// sortReasonCounts orders reasons most frequent first, ties by name.
func sortReasonCounts(list []reasonCount) {
	slices.SortFunc(list, func(a, b reasonCount) int {
		return cmp.Or(b.N-a.N, strings.Compare(string(a.Reason), string(b.Reason)))
	})
}

func formatReasons(list []reasonCount) string {
	parts := make([]string, len(list))
	for i, rc := range list {
		parts[i] = fmt.Sprintf("%s %d", rc.Reason, rc.N)
		switch {
		case rc.Dismissed == rc.N:
			parts[i] += " (dismissed)"
		case rc.Dismissed > 0:
			parts[i] += fmt.Sprintf(" (%d dismissed)", rc.Dismissed)
		}
	}
	return strings.Join(parts, ", ")
}

// formatSeconds renders a duration in seconds for people: tenths below a
// minute, whole seconds above, without zero units at the end (24h, not
// 24h0m0s).
func formatSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d >= time.Minute {
		out := d.Round(time.Second).String()
		for _, zero := range []string{"0s", "0m"} {
			if strings.HasSuffix(out, "m"+zero) || strings.HasSuffix(out, "h"+zero) {
				out = strings.TrimSuffix(out, zero)
			}
		}
		return out
	}
	// Duration.String would say 300ms; seconds read better beside minutes.
	return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + "s"
}
