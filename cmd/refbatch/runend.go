package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is what a run says at its end: its summary and exit, the rows
// that still need a person, the rows found at other lines, and what it
// validated again.

// needPersonLine says how many rows still need a person, by state and
// reason: "3 rows need a person: 1 in review id_not_found, 2 rejected
// malformed_pdf".
func needPersonLine(s report.Summary) string {
	rows := fmt.Sprintf("%d rows need", s.NeedPerson)
	if s.NeedPerson == 1 {
		rows = "1 row needs"
	}
	var kinds []string
	for _, st := range []outcome.State{outcome.Review, outcome.Rejected} {
		for _, r := range outcome.Reasons() {
			if n := s.NeedPersonReasons[r]; n > 0 && r.State() == st {
				where := string(outcome.Rejected)
				if st == outcome.Review {
					where = "in review"
				}
				kinds = append(kinds, fmt.Sprintf("%d %s %s", n, where, r))
			}
		}
	}
	return rows + " a person: " + strings.Join(kinds, ", ")
}

// writeRevalidated says what the run validated again from artifacts, and
// what it could not for want of an identity.
func writeRevalidated(rv batch.Revalidated, asJSON bool, stdout, stderr io.Writer) {
	if rv.Documents > 0 && !asJSON {
		fmt.Fprintf(stdout, "validated again: %d document%s in review, under the changed validation settings, with no OCR; %d moved\n",
			rv.Documents, plural(rv.Documents), rv.Moved)
	}
	if rv.Amended > 0 && !asJSON {
		fmt.Fprintf(stdout, "amended: %d row%s whose participant_id or referral_date was corrected, validated again from the artifacts, with no OCR\n",
			rv.Amended, plural(rv.Amended))
	}
	if rv.NeedIdentity > 0 {
		fmt.Fprintf(stderr, "refbatch: %d document%s in review %s validated under other settings, and the artifacts are encrypted: run again with --identity FILE (or REFBATCH_IDENTITY) to validate them again\n",
			rv.NeedIdentity, plural(rv.NeedIdentity), map[bool]string{true: "was", false: "were"}[rv.NeedIdentity == 1])
	}
}

// writeRebound says which rows the run found at other lines than the
// journal had them, and which it withdrew or restored.
func writeRebound(b journal.Rebinding, asJSON bool, stdout io.Writer) {
	if asJSON || !b.Changed() {
		return
	}
	var parts []string
	if n := len(b.Moved); n > 0 {
		parts = append(parts, fmt.Sprintf("%d row%s moved to another line, kept as %s", n, plural(n), map[bool]string{true: "it was", false: "they were"}[n == 1]))
	}
	if n := len(b.Withdrawn); n > 0 {
		parts = append(parts, fmt.Sprintf("%d withdrawn (%s), no longer in the manifest: kept, in no count", n, sourceIDs(b.Withdrawn)))
	}
	if n := len(b.Restored); n > 0 {
		parts = append(parts, fmt.Sprintf("%d back in the manifest (%s), restored as %s", n, sourceIDs(b.Restored), map[bool]string{true: "it was", false: "they were"}[n == 1]))
	}
	fmt.Fprintf(stdout, "rows found by source_id: %s\n", strings.Join(parts, "; "))
}

// sourceIDs names the first few rows of ms, and how many more.
func sourceIDs(ms []journal.LineMove) string {
	const shown = 5
	var ids []string
	for i, m := range ms {
		if i == shown {
			ids = append(ids, fmt.Sprintf("and %d more", len(ms)-shown))
			break
		}
		ids = append(ids, termText(m.SourceID))
	}
	return strings.Join(ids, ", ")
}

// endRun turns what a run (or a join) returned into the command's output
// and exit: the summary, or with asJSON its event, on stdout, and the line
// that says a person is needed on stderr.
func endRun(ctx context.Context, res *batch.Result, err error, asJSON bool, stdout, stderr io.Writer) error {
	err = runExit(ctx, res, err)
	if res == nil {
		return err
	}
	code := exitCode(err, io.Discard)
	paths := reportPaths{JSON: filepath.Join(res.Out, "report.json"), CSV: filepath.Join(res.Out, "report.csv"), HTML: filepath.Join(res.Out, "report.html")}
	if asJSON {
		writeSummaryEvent(stdout, res.Report.Summary, code, paths)
	} else {
		res.Report.WriteText(stdout)
		fmt.Fprintf(stdout, "report: %s\n", paths.JSON)
		fmt.Fprintf(stdout, "html:   %s\n", paths.HTML)
	}
	writeRebound(res.Rebound, asJSON, stdout)
	writeRevalidated(res.Revalidated, asJSON, stdout, stderr)
	if code == exitNeedsPerson {
		// Even with --quiet: a person is needed, and cron mails stderr.
		fmt.Fprintf(stderr, "refbatch: %s: see %s%s\n", needPersonLine(res.Report.Summary), paths.HTML, deskHint(res.Report.Summary, res.Out))
	}
	return err
}

// runExit turns what Run returned into run's exit: nil when no row needs a
// person, exitNeedsPerson when the batch finished with rows still open
// (in review, or rejected and neither needing no action nor dismissed:
// report.Row.Open), exitIncomplete when it stopped before the end.
func runExit(ctx context.Context, res *batch.Result, err error) error {
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, layout.ErrIncomplete) {
			return &exitError{code: exitIncomplete, msg: "interrupted; finished work is kept in the journal",
				hint: "run the same command again to resume", err: err}
		}
		return err
	}
	if res == nil {
		return nil
	}
	if !res.Complete {
		return &exitError{code: exitIncomplete, msg: "some documents are not finished",
			hint: "run the same command again to resume"}
	}
	if res.Report.Summary.NeedPerson > 0 {
		return &exitError{code: exitNeedsPerson} // runRun prints the line
	}
	return nil
}

// deskHint points to the review desk when documents wait in review:
// there they are decided with the page in front of the person.
func deskHint(s report.Summary, out string) string {
	for r, n := range s.NeedPersonReasons {
		if n > 0 && r.State() == outcome.Review {
			return ", or decide them at the desk: refbatch desk --out " + termText(out)
		}
	}
	return ""
}
