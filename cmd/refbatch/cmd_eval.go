package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"
	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/eval"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/report"
)

// evalOptions are eval's own flags, and run's (run), which eval binds
// as run does.
type evalOptions struct {
	expect     string
	truth      string
	thresholds string
	fromOut    string
	identity   string
	evalJSON   string
	probe      string
	run        runOptions
}

// evalFile is what eval writes into the output folder it scored.
const evalFile = "eval.json"

// evalOut is the folder eval runs its batch into without --out: in the
// current folder, as every command's default output folder is.
const evalOut = "eval-out"

// evalMarker marks a folder eval created for its own run, so that eval may
// clear it next time. eval never deletes a folder it did not make.
const evalMarker = ".refbatch-eval"

// noIDCheckFlag names run's flag for corpora without participant IDs:
// eval applies it to the scoring too, so it is allowed with --from-out.
const noIDCheckFlag = "no-id-check"

// evalSkippedRunFlags are run flags eval does not offer: it writes plaintext
// artifacts (it must read them back, and eval corpora are synthetic) and
// prints its own table on stdout.
var evalSkippedRunFlags = map[string]bool{"recipient": true, "recipients-file": true, "add-recipient": true, "json": true}

func evalCommand() *cli.Command {
	var o evalOptions
	// eval runs the batch exactly as `refbatch run` does: run's flags,
	// bound to the same options, given to the same function.
	var fromRun []cli.Flag
	for _, f := range runFlags(&o.run) {
		switch name := f.Names()[0]; {
		case evalSkippedRunFlags[name]:
			continue
		case name == "plaintext":
			f.(*cli.BoolFlag).Hidden = true // eval always sets it
		case name == "out":
			out := f.(*cli.StringFlag)
			out.Value, out.DefaultText = evalOut, evalOut+" in the current folder"
		}
		fromRun = append(fromRun, f)
	}
	flags := []cli.Flag{
		&cli.StringFlag{Name: "expect", Usage: "expected outcomes, source_id,state,reason per manifest row in order `FILE`", Destination: &o.expect},
		&cli.StringFlag{Name: "truth", Usage: "ground truth folder, one <source_id>.json per document; without it only outcomes are scored `DIR`", Destination: &o.truth},
		&cli.StringFlag{Name: "thresholds", Usage: "limits of the figures (thresholds.json); without it only outcomes are gated `FILE`", Destination: &o.thresholds},
		&cli.StringFlag{Name: "from-out", Usage: "score a finished output folder instead of running the batch `DIR`", Destination: &o.fromOut},
		&cli.StringFlag{Name: "identity", Aliases: []string{"i"}, EnvVars: []string{identityEnv}, Usage: "age identity to read an encrypted --from-out folder `FILE`", Destination: &o.identity},
		&cli.StringFlag{Name: "cascade-probe", Usage: "also score this output folder, the same manifest read with --dpi at the first resolution and --no-cascade, against this run (read with --no-cascade), and print the cascade thresholds the pair supports `DIR`", Destination: &o.probe},
		&cli.StringFlag{Name: "eval-json", Usage: "write eval.json here `FILE` (default: into the output folder eval ran; with --from-out, which eval only reads, nowhere)", Destination: &o.evalJSON},
	}
	return &cli.Command{
		Name:      "eval",
		Usage:     "run (or read) a batch over an evaluation corpus and fail if its outcomes or OCR quality regressed",
		ArgsUsage: "MANIFEST.csv",
		Description: `Runs the batch over the manifest with plaintext artifacts into --out (default
eval-out in the current folder; a folder an earlier eval made is cleared first),
or with --from-out DIR and no manifest reads a finished output folder. The
run flags (--dpi, --workers, ...) are those of refbatch run.

Then it scores: every row's state and reason against --expect; with --truth,
the character error rate of every page of the readable documents (expected
done), its mean and p95, the word error rate, the recall of the participant
ID and the referral date, and a calibration table (documents and mean CER
per confidence band, over the readable documents and those expected in
review for their text) with the band thresholds it suggests, and the
coverage figures of the documents whose truth marks faint print or columns
(faint-print word recall, documents done with their faint print unread,
the CER of column pages, false alarms, and the coverage threshold the
artifacts' uncovered shares suggest). It prints a table, writes eval.json
into the output folder it ran (with --from-out it writes nothing there:
--eval-json FILE names where), and checks --thresholds.

` + sizeHelp + `

Environment: TESSDATA_PREFIX, the folder of Tesseract's language data (read
by Tesseract).

Exit status: 0 every outcome as expected and every figure within its
threshold; 1 an outcome differs or a figure crossed its threshold (each is
named), or an unexpected failure; 2 usage error (flags, or an unreadable
expected, truth or thresholds file); 3 the batch was interrupted (as for run).`,
		Flags: append(flags, fromRun...),
		Action: func(c *cli.Context) error {
			return runEval(c, o, fromRun)
		},
	}
}

func runEval(c *cli.Context, o evalOptions, fromRun []cli.Flag) error {
	stdout := c.App.Writer
	if o.expect == "" {
		return usageErr("eval needs --expect FILE", "refbatch eval --expect expected.csv [--truth DIR] [--thresholds FILE] MANIFEST.csv")
	}
	switch {
	case o.fromOut == "" && c.NArg() != 1:
		return usageErr("eval takes the manifest to run, or --from-out DIR", "refbatch eval --expect FILE [--truth DIR] [flags] MANIFEST.csv (flags before the manifest), or refbatch eval --expect FILE --from-out DIR")
	case o.fromOut != "" && c.NArg() != 0:
		return usageErr("--from-out scores a finished folder and takes no manifest", "drop the manifest, or drop --from-out to run it")
	case o.probe != "" && o.truth == "":
		return usageErr("--cascade-probe compares the text of two readings with the truth", "pass --truth DIR too")
	case o.fromOut == "" && o.identity != "":
		return usageErr("--identity reads a --from-out folder", "eval's own runs write plaintext artifacts; drop --identity")
	}
	if o.fromOut != "" {
		for _, f := range fromRun {
			// Flags that only change what is logged are harmless, and
			// --no-id-check applies to the scoring too.
			if name := f.Names()[0]; c.IsSet(name) && name != "quiet" && name != "log-level" && name != noIDCheckFlag {
				return usageErr(fmt.Sprintf("--%s applies only when eval runs the batch", name), "drop it, or pass the manifest instead of --from-out")
			}
		}
	}
	in, thresholds, err := loadEvalInputs(o)
	if err != nil {
		return err
	}

	out := o.fromOut
	if out == "" {
		if err := refuseZero(c); err != nil {
			return err
		}
		if out, err = runEvalBatch(c.Context, o.run, c.Args().First(), c.App.ErrWriter); err != nil {
			return err
		}
	} else if st, err := os.Stat(out); err != nil || !st.IsDir() {
		return usageErr(fmt.Sprintf("%s is not an output folder", out), "pass --from-out DIR, a folder `refbatch run` wrote")
	}

	var ids []age.Identity
	if in.Truth != nil {
		if ids, err = loadIdentities(o.identity, c.App.ErrWriter); err != nil {
			return err
		}
	}
	res, rep, err := scoreFolder(out, in, ids)
	if err != nil {
		return err
	}
	if o.probe != "" {
		first, _, err := scoreFolder(o.probe, in, ids)
		if err != nil {
			return fmt.Errorf("--cascade-probe %s: %w", o.probe, err)
		}
		res.Probe(first)
	}
	er := eval.NewReport(res, thresholds, out, rep.Run.Settings)
	// A folder eval only reads is left as it was.
	path := o.evalJSON
	if path == "" && o.fromOut == "" {
		path = filepath.Join(out, evalFile)
	}
	if path != "" {
		if err := writeEvalJSON(path, er); err != nil {
			return err
		}
	}
	if err := er.WriteText(stdout); err != nil {
		return err
	}
	if path != "" {
		fmt.Fprintf(stdout, "eval: %s\n", path)
	}
	if !er.Passed {
		msgs := make([]string, len(er.Regressions))
		for i, g := range er.Regressions {
			msgs[i] = g.Message
		}
		return &exitError{code: exitFailure, msg: "regressed: " + strings.Join(msgs, "; "),
			hint: "eval.json lists every row, document and page; fix the regression or, if it is an intended change, update expected.csv or thresholds.json"}
	}
	return nil
}

// scoreFolder scores the finished output folder out with in's expected
// outcomes and truth, reading its artifacts with ids.
func scoreFolder(out string, in eval.Input, ids []age.Identity) (*eval.Result, *report.Report, error) {
	rep, err := report.ReadJSON(filepath.Join(out, report.JSONFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, usageErr(fmt.Sprintf("%s has no %s", out, report.JSONFile), "score a folder a finished `refbatch run` wrote (`refbatch report --out DIR` rebuilds its report)")
	}
	if err != nil {
		return nil, nil, err
	}
	in.Rows = rep.Rows
	if in.Truth != nil {
		in.Texts = map[string][]string{}
		in.Coverage = map[string][]eval.PageCoverage{}
		in.Reads = map[string][]eval.PageRead{}
		in.Words = map[string][]eval.PageWords{}
		err = audit.ReadArtifacts(layout.Place{Out: out}, ids, func(path string, a *layout.Artifact) error {
			pages := make([]string, len(a.Pages))
			for i, p := range a.Pages {
				pages[i] = p.Text
			}
			in.Texts[path] = pages
			var err error
			if in.Coverage[path], err = pageFields[eval.PageCoverage](a.Pages); err != nil {
				return err
			}
			if in.Words[path], err = pageFields[eval.PageWords](a.Pages); err != nil {
				return err
			}
			in.Reads[path], err = pageFields[eval.PageRead](a.Pages)
			return err
		})
		if err != nil {
			return nil, nil, fmt.Errorf("reading artifacts: %w", err)
		}
	}
	res, err := eval.Score(in)
	if err != nil {
		return nil, nil, usageErrf("the truth folder must hold every document expected.csv expects to be read", "%w", err)
	}
	return res, rep, nil
}

// pageFields reads what each page says of its coverage (uncovered_share,
// recovered_words), or of how it was read, through the page's JSON, the artifact's own encoding,
// so that eval scores artifacts of builds with and without the coverage
// measurement alike: a page without a field leaves it nil. It is generic
// so that a test can give it pages that have the fields, and so that it
// reads the cascade's fields (eval.PageRead) the same way.
func pageFields[T, P any](pages []P) ([]T, error) {
	out := make([]T, len(pages))
	for i, p := range pages {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encoding page %d: %w", i+1, err)
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			return nil, fmt.Errorf("reading the coverage of page %d: %w", i+1, err)
		}
	}
	return out, nil
}

// loadEvalInputs reads expected.csv, the truth and the thresholds before
// anything runs, so that a typo does not cost a whole batch.
func loadEvalInputs(o evalOptions) (eval.Input, eval.Thresholds, error) {
	in := eval.Input{NoIDCheck: o.run.batch.NoIDCheck}
	var t eval.Thresholds
	var err error
	if in.Expected, err = eval.LoadExpected(o.expect); err != nil {
		return in, t, usageErrf("expected.csv has a header source_id,state,reason and one row per manifest row, in manifest order", "--expect %s: %w", o.expect, err)
	}
	if o.truth != "" {
		if in.Truth, err = eval.LoadTruth(o.truth); err != nil {
			return in, t, usageErrf("pass the truth/ folder the corpus generator wrote", "--truth %s: %w", o.truth, err)
		}
	}
	if o.thresholds != "" {
		if t, err = eval.LoadThresholds(o.thresholds); err != nil {
			return in, t, usageErrf(`keys: outcome_mismatches_max, known_mismatches, mean_cer_max, p95_cer_max, mean_wer_max, id_recall_min, date_recall_min, band_mean_cer_max {"high": ...}, band_documents_min, bands_ordered, faint_unflagged_max, column_page_cer_max, coverage_false_alarms_max`, "--thresholds %s: %w", o.thresholds, err)
		}
	}
	return in, t, nil
}

// runEvalBatch runs the manifest as `refbatch run` would under o, into a
// fresh output folder (o's, or evalOut), with
// plaintext artifacts and no recipients, and returns that folder. Run's
// summary goes to stderr: stdout is eval's table.
func runEvalBatch(ctx context.Context, o runOptions, manifest string, stderr io.Writer) (string, error) {
	manifest, err := filepath.Abs(manifest)
	if err != nil {
		return "", err
	}
	out := o.batch.Out
	if out == "" {
		out = evalOut
	}
	if err := freshEvalOut(out); err != nil {
		return "", err
	}
	o.batch.Manifest, o.batch.Out, o.batch.Plaintext = manifest, out, true
	err = runRun(ctx, o, stderr, stderr)
	if ee := (*exitError)(nil); errors.As(err, &ee) && ee.code == exitNeedsPerson {
		err = nil // a corpus has rows meant for review; the scoring judges them
	}
	return out, err
}

// freshEvalOut makes sure out is empty, clearing it only when an earlier
// eval made it: resuming an old run would score old text under new flags.
func freshEvalOut(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return usageErrf("", "--out %s: %w", out, err)
	case len(entries) == 0:
	default:
		if _, err := os.Stat(filepath.Join(out, evalMarker)); err != nil {
			return usageErr(fmt.Sprintf("%s exists and was not made by refbatch eval", out),
				"eval runs every batch afresh: remove the folder, pass another --out, or score it with --from-out "+out)
		}
		if err := os.RemoveAll(out); err != nil {
			return fmt.Errorf("clearing the previous eval run: %w", err)
		}
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}
	// The marker is made beneath the folder, through no link.
	r, err := store.OpenRoot(out)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := r.OpenFile(evalMarker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// writeEvalJSON writes eval.json atomically, mode 0600 like every file of
// an output folder.
func writeEvalJSON(path string, r *eval.Report) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", evalFile, err)
	}
	return store.WriteFiles(filepath.Dir(path), []string{filepath.Base(path)}, func(ws []io.Writer) error {
		_, err := ws[0].Write(append(data, '\n'))
		return err
	})
}
