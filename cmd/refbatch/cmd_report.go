package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/report"
)

// reportOptions are the flags of `refbatch report`.
type reportOptions struct {
	out      string
	journal  string
	manifest string
	place    layout.Place
}

func reportCommand() *cli.Command {
	var o reportOptions
	return &cli.Command{
		Name:  "report",
		Usage: "regenerate report.json, report.csv and report.html from the journal",
		Description: `Rebuilds the reports of an output folder from its journal alone: after a
run was interrupted or killed, while another process is still running the
batch (the report is then a snapshot, marked running), or to see a finished
batch again. It only reads the journal.

The report covers every manifest the folder took; with one manifest (the
usual case) it is the report ` + "`refbatch run`" + ` wrote. --manifest restricts it to
one. Settings are the latest run's; engine versions the latest recorded.

Exit status: 0 the reports were written (whatever the batch's state; the
summary says it); 1 unexpected failure; 2 usage error (no journal there);
3 interrupted, or the disk is full: the reports are as they were, run it
again.`,
		Flags: []cli.Flag{
			outFlag(&o.out, "the output folder (journal in, reports out)"),
			journalFlag(&o.journal),
			&cli.StringFlag{Name: "manifest", Usage: "report only this manifest's rows `FILE`", Destination: &o.manifest},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("report takes no arguments", "refbatch report [--out DIR] [--manifest FILE]")
			}
			var err error
			if o.place, err = placeOf(c, o.out, o.journal); err != nil {
				return err
			}
			return runReport(c.Context, o, c.App.Writer)
		},
	}
}

func runReport(ctx context.Context, o reportOptions, stdout io.Writer) error {
	manifest := ""
	if o.manifest != "" {
		abs, err := filepath.Abs(o.manifest)
		if err != nil {
			return usageErrf("", "bad --manifest: %w", err)
		}
		manifest = abs
	}
	rep, err := standing.ReportFromJournal(ctx, o.place, manifest, time.Now())
	if err != nil {
		return err
	}
	out := o.place.Out
	if manifest != "" && rep.Summary.Rows == 0 {
		return usageErr(fmt.Sprintf("the journal of %s has no rows of %s", out, manifest), "refbatch status --out DIR lists the manifests it took")
	}
	if err := standing.WriteReport(out, rep); err != nil {
		return err
	}
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	for _, f := range []struct{ label, name string }{{"report:", report.JSONFile}, {"csv:   ", report.CSVFile}, {"html:  ", report.HTMLFile}} {
		fmt.Fprintf(stdout, "%s %s\n", f.label, termText(filepath.Join(out, f.name)))
	}
	return nil
}
