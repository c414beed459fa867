package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// runOptions are what `refbatch run` is given: its flags, bound by
// runFlags, and the recipients its environment names. eval fills the same
// value through the same flags.
type runOptions struct {
	batch          batch.Options
	quiet          bool
	json           bool
	recipients     []string
	recipientsFile string
	// addRecipients are --add-recipient's keys: they extend the batch's
	// recorded recipients deliberately.
	addRecipients []string
	// envRecipients is REFBATCH_RECIPIENTS, read by run's action: keys
	// used when no recipient flag is given.
	envRecipients string
	logLevel      string
	// notify and stallAfter are run's own notification flags (eval
	// sends none).
	notify     notifyOptions
	stallAfter time.Duration
	// identity is --identity (or REFBATCH_IDENTITY): it decrypts the
	// artifacts of the documents a rerun validates again.
	identity string
	// fromBatch are the flags a rerun took from the batch's record
	// (remember), for its summary.
	fromBatch []string
}

// identityEnv names the variable that gives the identity file when no
// --identity does, for every command that reads artifacts.
const identityEnv = "REFBATCH_IDENTITY"

// identityRunFlag is run's --identity.
func identityRunFlag(dest *string) cli.Flag {
	return &cli.StringFlag{Name: "identity", Aliases: []string{"i"}, EnvVars: []string{identityEnv},
		Usage:       "age identity file to read the artifacts of documents in review that a change of validation settings (--no-id-check, the bands, --coverage-threshold) or a corrected participant_id or referral_date validates again, with no OCR; a plaintext batch needs none `FILE`",
		Destination: dest}
}

// recipientsEnv names the variable that gives recipients when no flag does.
const recipientsEnv = "REFBATCH_RECIPIENTS"

func runCommand() *cli.Command {
	var o runOptions
	return &cli.Command{
		Name:      "run",
		Usage:     "import the referrals listed in a manifest",
		ArgsUsage: "MANIFEST.csv",
		Description: `Parses the manifest, admits every row (path, size, hash, PDF checks),
OCRs the admitted documents in isolated worker processes, validates the text,
writes one artifact per document and a report. Rerunning the same command
resumes: finished rows are never redone.

MANIFEST.csv may be -, the standard input, read once into memory: the
journal records "-" and its SHA-256, not its text; pipe the same manifest
to run - again to resume (refbatch join cannot read it).

Without --out, the batch goes into refbatch-out in the current folder, where
status, verify, show, report, review and export look for it too.

--journal URL keeps the batch's journal in a PostgreSQL database instead of
journal.db in --out, so that refbatch join on other machines can work on it
too; the first run records --out there, and later commands find it from the
URL alone.

The first run records its recipients (or --plaintext) and every run its
settings in the journal; a later run into the same --out takes them for
every flag it is not given (refbatch run --out OUT MANIFEST.csv is the
whole rerun), must give the same recipients if it gives any, and may
extend them deliberately with --add-recipient. --root-log FILE appends the run's final
batch root to FILE, kept outside --out, for refbatch verify --root-log.

` + sizeHelp + `

--notify URL (signed with --notify-secret-file's secret) and --notify-cmd
CMD receive the batch's events: batch_finished, batch_interrupted,
rows_need_person, and batch_stalled when the batch records no progress for
--stall-after. They are written to the journal first and delivered at
least once, beside the work; a receiver that fails never fails the run,
and what it missed is delivered by the next run or refbatch notify.

Environment: TESSDATA_PREFIX, the folder of Tesseract's language data (read
by Tesseract); ` + recipientsEnv + `, under --recipient; ` + notifyEnv + `, under --notify.

Exit status: 0 every row is done or a duplicate; 1 unexpected failure; 2
usage or manifest error, recipients other than the batch's, or a root log
inside --out; 3 interrupted or incomplete: run the same command again to
resume; 4 finished, but rows are in review or rejected: a person is needed.`,
		Flags: append(append(runFlags(&o), journalFlag(&o.batch.Journal), identityRunFlag(&o.identity)),
			append(notifyFlags(&o.notify), stallAfterFlag(&o.stallAfter))...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("run takes exactly one argument, the manifest", "refbatch run [flags] MANIFEST.csv (flags go before the manifest)")
			}
			if err := refuseZero(c); err != nil {
				return err
			}
			o.batch.Manifest = c.Args().First()
			if o.batch.Journal != "" {
				if !journal.IsURL(o.batch.Journal) {
					return journalNotURL(o.batch.Journal)
				}
				if !c.IsSet("out") {
					o.batch.Out = "" // the one the journal recorded
				}
			} else if err := refuseOldDefault(c, o.batch.Manifest); err != nil {
				return err
			}
			o.recipients = c.StringSlice("recipient")
			o.addRecipients = c.StringSlice("add-recipient")
			o.envRecipients = os.Getenv(recipientsEnv)
			n, err := o.notify.targets(c)
			if err != nil {
				return err
			}
			o.batch.Notify = n
			o.batch.Notify.StallAfter = o.stallAfter
			if o.fromBatch, err = remember(&o, c.IsSet); err != nil {
				return err
			}
			return runRun(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// runFlags are run's flags, bound to o: the page policy's, the run's
// settings and run's own. eval offers them too.
func runFlags(o *runOptions) []cli.Flag {
	flags := []cli.Flag{
		outFlag(&o.batch.Out, "output folder (journal, artifacts, reports)"),
		&cli.StringFlag{Name: "root", Usage: "folder the manifest's paths are relative to `DIR`", DefaultText: "the manifest's folder", Destination: &o.batch.Root},
		&cli.IntFlag{Name: "workers", Usage: "OCR worker processes", Value: runtime.NumCPU(), DefaultText: "the number of CPUs", Destination: &o.batch.Workers},
	}
	flags = append(flags, pageFlags(&o.batch.Policy)...)
	return append(flags, []cli.Flag{
		bytesFlag("max-bytes", "largest PDF admitted", admit.DefaultMaxBytes, &o.batch.MaxBytes),
		&cli.IntFlag{Name: "max-pages", Usage: "most pages admitted in one PDF", Value: admit.DefaultMaxPages, Destination: &o.batch.MaxPages},
		&cli.DurationFlag{Name: "page-timeout", Usage: "a page taking longer is a hang: review timeout", Value: layout.DefaultPageTimeout, Destination: &o.batch.PageTimeout},
		&cli.DurationFlag{Name: "doc-timeout", Usage: "the engines' time a whole document may take, else review timeout (0: none)", DefaultText: "--page-timeout plus a twentieth of it per page",
			Destination: &o.batch.DocTimeout, Action: func(_ *cli.Context, d time.Duration) error {
				o.batch.NoDocTimeout = d == 0
				return nil
			}},
		&cli.IntFlag{Name: "attempts", Usage: "attempts per document before review attempts_exhausted", Value: layout.DefaultAttempts, Destination: &o.batch.Attempts},
		&cli.DurationFlag{Name: "slo", Usage: "target from admission to searchable text, for the report", Value: layout.DefaultSLO, Destination: &o.batch.SLO},
		bytesFlag("max-inflight-bytes", "source bytes the workers may hold at once; more waits", layout.DefaultMaxInflight, &o.batch.MaxInflightBytes),
		bytesFlag("worker-memory", "address-space limit of each worker process (0: none)", ocr.DefaultMemoryLimit, &o.batch.WorkerMemory),
		bytesFlag("admit-memory", "resident memory the PDF checks may use for one file; more is unparseable_pdf", admit.DefaultInspectMemory, &o.batch.AdmitMemory),
		&cli.DurationFlag{Name: "admit-timeout", Usage: "time the PDF checks may take for a small file (plus 1s per MiB; retried once at 4 times that), else unparseable_pdf", Value: admit.DefaultInspectTimeout, Destination: &o.batch.AdmitTimeout},
		&cli.Float64Flag{Name: "coverage-threshold", Usage: "unread share of a page's print (after reading it again) from which a document goes to review incomplete_text (calibrated on testdata/eval; recalibrate with refbatch eval)", Value: layout.DefaultCoverageThreshold, Destination: &o.batch.CoverageThreshold},
		&cli.Float64Flag{Name: "high-confidence", Usage: "document confidence (per character) from which a document is in the high band", Value: layout.DefaultHighConfidence, Destination: &o.batch.HighConfidence},
		&cli.Float64Flag{Name: "low-confidence", Usage: "document confidence under which a document goes to review low_confidence (the bands are calibrated on testdata/eval; recalibrate with refbatch eval)", Value: layout.DefaultLowConfidence, Destination: &o.batch.LowConfidence},
		&cli.BoolFlag{Name: "no-id-check", Usage: "skip the participant ID and referral date checks (for corpora without participant IDs); recorded in the report's settings", Destination: &o.batch.NoIDCheck},
		envNoted{&cli.StringSliceFlag{Name: "recipient", Aliases: []string{"r"},
			Usage: "age public key to encrypt artifacts to (repeatable); without -r or -R, " + recipientsEnv + "'s keys (space- or comma-separated) `KEY`"}, recipientsEnv},
		&cli.StringFlag{Name: "recipients-file", Aliases: []string{"R"}, Usage: "file of age public keys, one per line `FILE`", Destination: &o.recipientsFile},
		&cli.StringSliceFlag{Name: "add-recipient", Usage: "age public key to add to the batch's recorded recipients, deliberately (repeatable); new artifacts are encrypted to all of them `KEY`"},
		&cli.StringFlag{Name: "root-log", Usage: "append the run's final batch root, with the time and counts, to this file kept outside --out (refbatch verify --root-log checks it) `FILE`", Destination: &o.batch.RootLog},
		&cli.BoolFlag{Name: "plaintext", Usage: "write artifacts unencrypted (explicit choice; recorded in the journal and report)", Destination: &o.batch.Plaintext},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar; only warnings in the log", Destination: &o.quiet},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON event per line on stdout, and nothing else there", Destination: &o.json},
		&cli.StringFlag{Name: "log-level", Usage: "debug, info, warn or error `LEVEL`", Value: "info", Destination: &o.logLevel},
	}...)
}

// runRun runs the batch o describes: results (the summary, or with --json
// the events) go to stdout, the log and the progress bar to stderr.
func runRun(ctx context.Context, o runOptions, stdout, stderr io.Writer) error {
	recipients, err := loadRecipients(o.recipients, o.envRecipients, o.recipientsFile)
	if err != nil {
		return err
	}
	if len(recipients) > 0 { // else the batch's, when remember found them
		o.batch.Recipients = recipients
	}
	if o.batch.AddRecipients, err = parseRecipients(o.addRecipients); err != nil {
		return err
	}
	if len(recipients)+len(o.batch.AddRecipients) > 0 && o.batch.Plaintext {
		return usageErr("--plaintext and recipients both given", "choose one: encrypt to the recipients, or --plaintext")
	}
	o.batch.User = currentUser()
	if o.batch.Identities, err = loadIdentities(o.identity, stderr); err != nil {
		return err
	}
	if o.batch.Manifest == manifest.Stdin {
		if o.batch.StdinSHA256, err = manifest.ReadStdin(os.Stdin); err != nil {
			if errors.Is(err, manifest.ErrStdinTooLarge) {
				return usageErrf("write the manifest to a file and pass its path: refbatch run [flags] manifest.csv", "%w", err)
			}
			return usageErrf("pipe the manifest CSV to the standard input: refbatch run [flags] - < manifest.csv", "%w", err)
		}
		o.batch.StdinRows = countRows(manifest.Stdin)
	} else if _, err := os.Stat(o.batch.Manifest); err != nil {
		return usageErrf("pass the path of the manifest CSV, or - to read it from the standard input", "cannot read manifest: %w", err)
	}
	out, err := newRunOutput(o.logLevel, o.quiet, o.json, func() int { return countRows(o.batch.Manifest) }, stdout, stderr)
	if err != nil {
		return err
	}
	o.batch.Logger, o.batch.Progress = out.log, out.progress
	if o.batch.Worker, o.batch.Admission, err = children(); err != nil {
		return err
	}
	if len(o.fromBatch) > 0 {
		out.log.Info("settings from the batch's record: " + strings.Join(o.fromBatch, ", "))
	}
	res, err := batch.Run(ctx, o.batch)
	out.progress.Close()
	err = endRun(ctx, res, err, o.json, stdout, stderr)
	if res != nil && len(o.fromBatch) > 0 && !o.json {
		fmt.Fprintf(stdout, "from the batch: %s (as its last run of this manifest recorded them; give a flag to change one)\n", strings.Join(o.fromBatch, ", "))
	}
	return err
}

// runOutput is where a run (or a join) says what it does: the log, and
// the progress bar or the JSON events.
type runOutput struct {
	log      *slog.Logger
	progress progressSink
}

// newRunOutput makes a run's log at logLevel on stderr (warnings only
// under quiet or beside the bar) and its progress: JSON events on stdout
// with asJSON, else a bar over rows() rows when stderr is a terminal.
func newRunOutput(logLevel string, quiet, asJSON bool, rows func() int, stdout, stderr io.Writer) (runOutput, error) {
	level := slog.LevelInfo
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return runOutput{}, usageErr(fmt.Sprintf("bad --log-level %q", logLevel), "use debug, info, warn or error")
	}
	bar := !quiet && !asJSON && isTerminal(stderr)
	if quiet || bar {
		level = max(level, slog.LevelWarn)
	}
	out := runOutput{log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})), progress: nopSink{}}
	switch {
	case asJSON:
		out.progress = newJSONProgress(stdout)
	case bar:
		out.progress = newBarProgress(stderr, rows())
	}
	return out, nil
}

// children are how a run starts its child processes: the OCR engines and
// admission's PDF checks, this binary re-executed in its hidden modes.
func children() (worker, admission layout.Process, err error) {
	exe, err := os.Executable()
	if err != nil {
		return worker, admission, err
	}
	return layout.Process{Path: exe, Args: []string{workerCommand}}, layout.Process{Path: exe, Args: []string{admitCommand}}, nil
}

// reportPaths are where a run wrote its reports.
type reportPaths struct {
	JSON string `json:"json"`
	CSV  string `json:"csv"`
	HTML string `json:"html"`
}

// summaryEvent is the last line `run --json` prints: the batch's counts,
// the exit code the command ends with and where the reports are.
type summaryEvent struct {
	Kind      string                 `json:"event"`
	Time      time.Time              `json:"time"`
	Rows      int                    `json:"rows"`
	BlankRows int                    `json:"blank_rows"`
	States    map[outcome.State]int  `json:"states"`
	Reasons   map[outcome.Reason]int `json:"reasons"`
	Pages     int                    `json:"pages"`
	// NeedPerson counts the rows that still need a person, by reason in
	// NeedPersonReasons (report.Row.Open).
	NeedPerson        int                    `json:"need_person"`
	NeedPersonReasons map[outcome.Reason]int `json:"need_person_reasons"`
	Exit              int                    `json:"exit"`
	Reports           reportPaths            `json:"reports"`
}

func writeSummaryEvent(w io.Writer, s report.Summary, code int, paths reportPaths) {
	json.NewEncoder(w).Encode(summaryEvent{Kind: "summary", Time: time.Now().UTC(), Rows: s.Rows, BlankRows: s.BlankRows,
		States: s.States, Reasons: s.Reasons, Pages: s.Pages, NeedPerson: s.NeedPerson, NeedPersonReasons: s.NeedPersonReasons,
		Exit: code, Reports: paths})
}

// zeroIsAValue lists the run flags for which 0 is a value of its own (no
// document timeout, no memory limit); for every other number the options
// would read 0 as the default.
var zeroIsAValue = map[string]bool{"doc-timeout": true, "worker-memory": true}

// refuseZero refuses a number flag given as 0 when 0 is not one of its
// values: the options read 0 as "the default", and a user who typed 0
// meant something else.
func refuseZero(c *cli.Context) error {
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if zeroIsAValue[name] || !c.IsSet(name) {
			continue
		}
		var zero bool
		switch f := f.(type) {
		case *cli.IntFlag:
			zero = c.Int(name) == 0
		case *cli.Int64Flag:
			zero = c.Int64(name) == 0
		case *cli.Float64Flag:
			zero = c.Float64(name) == 0
		case *cli.DurationFlag:
			zero = c.Duration(name) == 0
		case *cli.GenericFlag:
			b, ok := f.Value.(byteSize)
			zero = ok && *b.n == 0
		}
		if zero {
			df, _ := f.(cli.DocGenerationFlag)
			return usageErr(fmt.Sprintf("--%s 0 is not a value it takes", name),
				fmt.Sprintf("leave --%s out for its default (%s), or give a value above 0", name, df.GetDefaultText()))
		}
	}
	return nil
}

// settingFlag names the flag that sets a recorded setting: the setting's
// name with dashes, but for the one whose flag says more (max_inflight)
// and the one no flag sets (min_dpi, which follows --dpi).
func settingFlag(setting string) string {
	switch setting {
	case "max_inflight":
		return "--max-inflight-bytes"
	case "min_dpi":
		return setting
	}
	return "--" + strings.ReplaceAll(setting, "_", "-")
}
