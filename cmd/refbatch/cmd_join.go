package main

import (
	"context"
	"io"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/layout"
)

// joinOptions are the flags of `refbatch join`.
type joinOptions struct {
	out, journal string
	workers      int
	quiet, json  bool
	logLevel     string
}

func joinCommand() *cli.Command {
	var o joinOptions
	return &cli.Command{
		Name:  "join",
		Usage: "work on a batch another refbatch run started, from this machine",
		Description: `Claims documents of the batch whose journal --journal names (a PostgreSQL
database every machine reaches) and reads them here, beside the run that
started the batch and any other joins, until every document is final. Each
document is done once, by whichever process claims it; a process that dies
lets its leases expire and the others take its documents over.

The batch's settings (page policy, caps, recipients, the source root) are
those its runs recorded; this machine brings its workers only. The sources,
the manifests and the output folder must be on a filesystem this machine
mounts at the paths the run recorded. Once no other process is admitting a
manifest's rows, a join streams the manifest too, so a batch whose run
died is still admitted to its end.

Without --journal, join works on the SQLite journal in --out, beside a run
on this machine.

Exit status: as refbatch run's: 0 every row is done or a duplicate; 1
unexpected failure; 2 usage error, or no batch in that journal; 3
interrupted or incomplete: run join (or the batch's run) again; 4 finished,
but rows are in review or rejected: a person is needed.`,
		Flags: []cli.Flag{
			journalFlag(&o.journal),
			outFlag(&o.out, "the batch's output folder; with --journal, the one the journal recorded"),
			&cli.IntFlag{Name: "workers", Usage: "OCR worker processes on this machine", Value: runtime.NumCPU(), DefaultText: "the number of CPUs", Destination: &o.workers},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar; only warnings in the log", Destination: &o.quiet},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON event per line on stdout, and nothing else there", Destination: &o.json},
			&cli.StringFlag{Name: "log-level", Usage: "debug, info, warn or error `LEVEL`", Value: "info", Destination: &o.logLevel},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("join takes no arguments", "refbatch join --journal postgres://USER@HOST/DB [--workers N]")
			}
			if err := refuseZero(c); err != nil {
				return err
			}
			p, err := placeOf(c, o.out, o.journal)
			if err != nil {
				return err
			}
			return runJoin(c.Context, o, p, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runJoin(ctx context.Context, o joinOptions, p layout.Place, stdout, stderr io.Writer) error {
	out, err := newRunOutput(o.logLevel, o.quiet, o.json, func() int { return -1 }, stdout, stderr)
	if err != nil {
		return err
	}
	jo := batch.JoinOptions{Place: p, Workers: o.workers, Logger: out.log, Progress: out.progress}
	if jo.Worker, jo.Admission, err = children(); err != nil {
		return err
	}
	res, err := batch.Join(ctx, jo)
	out.progress.Close()
	return endRun(ctx, res, err, o.json, stdout, stderr)
}
