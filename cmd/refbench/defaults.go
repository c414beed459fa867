package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// `refbench defaults` (issue 29): the defaults measured on more than one
// corpus. For each corpus given (the bench corpus refcorpus wrote, the
// evaluation corpus, the real corpus of third-party PDFs, which needs no
// manifest and is skipped when absent) it runs, in one invocation:
// refbatch run with its defaults, the same with --cascade, and the render
// + OCR limit (pdftoppm -gray + tesseract --dpi, one process per core) on
// the pages of the rows the default run read (done or review: a row
// rejected at admission costs no OCR, and is not counted by either). Each
// run's pages per minute are set against the limit's, by CPU (user+sys of
// the process trees spread over the cores, which other load on the
// machine does not change) and by the wall. For corpora with truth, each
// run is scored with refbatch eval --from-out: CER and WER.
//
// The check: on every corpus measured, the default's pages per minute by
// CPU are at least --min-ratio (0.9) of the limit's; refbench defaults
// exits 1 when one is not, 2 on a usage error.

// defaultsCorpus is one corpus the defaults are measured on.
type defaultsCorpus struct {
	Name     string `json:"name"`
	Dir      string `json:"dir"`
	Manifest string `json:"manifest"`
	// Expect and Truth are the corpus's expected outcomes and truth
	// folder, when it has them: the runs are scored.
	Expect string `json:"expect,omitempty"`
	Truth  string `json:"truth,omitempty"`
	// Flags are refbatch run flags every run on the corpus takes.
	Flags []string `json:"flags,omitempty"`
}

// defaultsRun is one refbatch configuration on one corpus.
type defaultsRun struct {
	*runResult
	// VsLimit is CPUPagesPerMinute over the limit's, VsLimitWall
	// PagesPerMinute over the limit pool's own wall figure.
	VsLimit     float64 `json:"vs_limit_cpu"`
	VsLimitWall float64 `json:"vs_limit_wall"`
	MeanCER     float64 `json:"mean_cer,omitempty"`
	MeanWER     float64 `json:"mean_wer,omitempty"`
	ScoreNote   string  `json:"score_note,omitempty"`
}

// defaultsResult is one corpus's figures.
type defaultsResult struct {
	Corpus defaultsCorpus `json:"corpus"`
	// Pages is the pages the default run read (done and review rows),
	// the limit's pages too.
	Pages   int                     `json:"pages"`
	Limit   *limitResult            `json:"limit,omitempty"`
	Runs    map[string]*defaultsRun `json:"runs"`
	Skipped string                  `json:"skipped,omitempty"`
}

type defaultsOptions struct {
	Bench, Eval, Real, Out, Refbatch string
	Cores, DPI, MaxDocs              int
	MinRatio                         float64
	// Variants are more configurations, name=flags, run beside the
	// default and --cascade (e.g. a page setting under study).
	Variants []string
}

func defaultsMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("refbench defaults", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o defaultsOptions
	var variants string
	fs.StringVar(&o.Bench, "bench", "", "the bench corpus (a refcorpus folder with truth)")
	fs.StringVar(&o.Eval, "eval", "testdata/eval", "the evaluation corpus (manifest.csv, expected.csv, truth/)")
	fs.StringVar(&o.Real, "real", "../shared/corpus/real", "folder of real PDFs without a manifest (skipped when absent)")
	fs.StringVar(&o.Out, "out", "bench-out/defaults", "working folder: runs, defaults.json")
	fs.StringVar(&o.Refbatch, "refbatch", "bin/refbatch", "the refbatch binary to measure")
	fs.IntVar(&o.Cores, "cores", runtime.NumCPU(), "refbatch --workers and the limit's pool")
	fs.IntVar(&o.DPI, "dpi", 300, "--dpi of every run and the limit's resolution")
	fs.IntVar(&o.MaxDocs, "max-docs", 0, "measure only each corpus's first N manifest rows (0: all)")
	fs.Float64Var(&o.MinRatio, "min-ratio", 0.9, "the check: the default's pages per minute by CPU at least this share of the limit's")
	fs.StringVar(&variants, "variant", "", "more runs, NAME=FLAGS separated by ';' (e.g. 'low=--dpi 200')")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	for v := range strings.SplitSeq(variants, ";") {
		if v = strings.TrimSpace(v); v != "" {
			if !strings.Contains(v, "=") {
				fmt.Fprintf(stderr, "refbench defaults: error: --variant %q: want NAME=FLAGS\n", v)
				return 2
			}
			o.Variants = append(o.Variants, v)
		}
	}
	ok, err := runDefaults(ctx, o, stdout, stderr)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "refbench defaults: error: %v\n", err)
		return 1
	case !ok:
		fmt.Fprintf(stderr, "refbench defaults: the default reads slower than %.2f of the limit on a corpus\n", o.MinRatio)
		return 1
	}
	return 0
}

func runDefaults(ctx context.Context, o defaultsOptions, stdout, stderr io.Writer) (bool, error) {
	exe, err := filepath.Abs(o.Refbatch)
	if err != nil {
		return false, err
	}
	if o.Out, err = filepath.Abs(o.Out); err != nil {
		return false, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return false, err
	}
	corpora, notes, err := defaultsCorpora(o)
	if err != nil {
		return false, err
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "refbench defaults: %s\n", n)
	}
	b := &bench{o: options{Out: o.Out, Cores: o.Cores, DPI: o.DPI}, log: stderr, exe: exe}
	var results []*defaultsResult
	for _, c := range corpora {
		r, err := b.measureDefaults(ctx, c, o)
		if err != nil {
			return false, fmt.Errorf("%s corpus: %w", c.Name, err)
		}
		results = append(results, r)
		if err := writeJSON(filepath.Join(o.Out, "defaults.json"), map[string]any{
			"machine": machineInfo(), "date": time.Now().UTC().Format(time.RFC3339), "load_avg_end": loadAvg(),
			"dpi": o.DPI, "cores": o.Cores, "min_ratio": o.MinRatio, "notes": notes, "corpora": results,
		}); err != nil {
			return false, err
		}
	}
	return writeDefaultsTable(stdout, results, o.MinRatio), nil
}

// defaultsCorpora lists the corpora given, with their manifests: the
// real corpus's is written, one row per PDF, its participant IDs unchecked.
func defaultsCorpora(o defaultsOptions) ([]defaultsCorpus, []string, error) {
	var out []defaultsCorpus
	var notes []string
	if o.Bench != "" {
		out = append(out, defaultsCorpus{Name: "bench", Dir: o.Bench})
	}
	if o.Eval != "" {
		out = append(out, defaultsCorpus{Name: "eval", Dir: o.Eval, Flags: []string{"--max-bytes", "2000000"}})
	}
	for i := range out {
		c := &out[i]
		c.Manifest = filepath.Join(c.Dir, "manifest.csv")
		if _, err := os.Stat(filepath.Join(c.Dir, "truth")); err == nil {
			c.Expect, c.Truth = filepath.Join(c.Dir, "expected.csv"), filepath.Join(c.Dir, "truth")
		}
	}
	if o.Real != "" {
		pdfs, _ := filepath.Glob(filepath.Join(o.Real, "*.pdf"))
		if len(pdfs) == 0 {
			notes = append(notes, fmt.Sprintf("real corpus %s: absent (no PDF), skipped", o.Real))
		} else {
			dir := filepath.Join(o.Out, "inputs", "real")
			records := [][]string{{"source_id", "participant_id", "referral_date", "consent", "path"}}
			for i, p := range pdfs {
				records = append(records, []string{fmt.Sprintf("REAL-%02d", i+1), fmt.Sprintf("P-%06d", i+1), "2024-01-01", "yes", filepath.Base(p)})
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, nil, err
			}
			m := filepath.Join(dir, "manifest.csv")
			if err := writeCSV(m, records); err != nil {
				return nil, nil, err
			}
			out = append(out, defaultsCorpus{Name: "real", Dir: o.Real, Manifest: m, Flags: []string{"--no-id-check"}})
		}
	}
	for i := range out {
		abs, err := filepath.Abs(out[i].Dir)
		if err != nil {
			return nil, nil, err
		}
		out[i].Dir = abs
		if out[i].Manifest, err = filepath.Abs(out[i].Manifest); err != nil {
			return nil, nil, err
		}
	}
	return out, notes, nil
}

// measureDefaults measures c: the default run first (it says which rows
// are read), then the limit on their pages, --cascade and the variants.
func (b *bench) measureDefaults(ctx context.Context, c defaultsCorpus, o defaultsOptions) (*defaultsResult, error) {
	res := &defaultsResult{Corpus: c, Runs: map[string]*defaultsRun{}}
	if o.MaxDocs > 0 {
		var err error
		if c, err = subsetCorpus(c, o.MaxDocs, filepath.Join(o.Out, "inputs", c.Name)); err != nil {
			return nil, err
		}
		res.Corpus = c
	}
	base := append([]string{"--workers", strconv.Itoa(o.Cores), "--dpi", strconv.Itoa(o.DPI)}, c.Flags...)
	runs := []struct{ name, flags string }{{"default", ""}, {"cascade", "--cascade"}}
	for _, v := range o.Variants {
		name, flags, _ := strings.Cut(v, "=")
		runs = append(runs, struct{ name, flags string }{name, flags})
	}
	for i, r := range runs {
		out := filepath.Join(o.Out, "runs", c.Name+"-"+r.name)
		rr, err := b.refbatchRun(ctx, c.Name+", "+r.name, c.Manifest, c.Dir, out, false, append(slices.Clone(base), strings.Fields(r.flags)...)...)
		if err != nil {
			return nil, err
		}
		run := &defaultsRun{runResult: rr}
		res.Runs[r.name] = run
		if c.Truth != "" {
			run.MeanCER, run.MeanWER, run.ScoreNote = b.score(ctx, c, out)
		}
		if i > 0 {
			continue
		}
		// The limit reads the pages the default run read, at once after it.
		read, pages, err := readRows(c, filepath.Join(out, "report.json"))
		if err != nil {
			return nil, err
		}
		res.Pages = pages
		if _, err := exec.LookPath("pdftoppm"); err != nil {
			return nil, errors.New("pdftoppm is not installed (apt-get install poppler-utils)")
		}
		if res.Limit, err = measureLimit(ctx, read, o.DPI, o.Cores, filepath.Join(o.Out, "limit-tmp")); err != nil {
			return nil, err
		}
		fmt.Fprintf(b.log, "refbench: %s, limit: %d pages, %.1f pages/min by CPU\n", c.Name, res.Limit.Pages, res.Limit.PagesPerMinute)
	}
	for _, r := range res.Runs {
		if l := res.Limit; l != nil && l.PagesPerMinute > 0 && l.WallPagesPerMinute > 0 {
			r.VsLimit = r.CPUPagesPerMinute / l.PagesPerMinute
			r.VsLimitWall = r.PagesPerMinute / l.WallPagesPerMinute
		}
	}
	return res, nil
}

// subsetCorpus writes c's manifest's first n rows (and its expected
// outcomes') into dir.
func subsetCorpus(c defaultsCorpus, n int, dir string) (defaultsCorpus, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return c, err
	}
	for _, f := range []*string{&c.Manifest, &c.Expect} {
		if *f == "" {
			continue
		}
		records, err := readCSVFile(*f)
		if err != nil {
			return c, err
		}
		to := filepath.Join(dir, filepath.Base(*f))
		if err := writeCSV(to, records[:min(len(records), n+1)]); err != nil {
			return c, err
		}
		*f = to
	}
	return c, nil
}

func readCSVFile(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	return r.ReadAll()
}

// readRows returns the rows of c's manifest whose documents the run whose
// report is at path read (done or review, with pages), as a corpus the
// limit measures, and their pages.
func readRows(c defaultsCorpus, path string) (*corpus, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var rep struct {
		Rows []struct {
			Line  int           `json:"manifest_line"`
			State outcome.State `json:"state"`
			Pages int           `json:"pages"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	records, err := readCSVFile(c.Manifest)
	if err != nil {
		return nil, 0, err
	}
	pathCol := -1
	for i, h := range records[0] {
		if strings.EqualFold(strings.TrimPrefix(h, "\ufeff"), "path") {
			pathCol = i
		}
	}
	if pathCol < 0 {
		return nil, 0, fmt.Errorf("%s has no path column", c.Manifest)
	}
	read := &corpus{dir: c.Dir}
	for _, r := range rep.Rows {
		if (r.State != outcome.Done && r.State != outcome.Review) || r.Pages == 0 || r.Line < 2 || r.Line > len(records) {
			continue
		}
		rec := records[r.Line-1]
		read.rows = append(read.rows, corpusRow{record: rec, path: filepath.Join(c.Dir, rec[pathCol]), pages: r.Pages})
		read.pages += r.Pages
	}
	return read, read.pages, nil
}

// score runs refbatch eval --from-out over a finished run's folder and
// returns its mean CER and WER.
func (b *bench) score(ctx context.Context, c defaultsCorpus, out string) (cer, wer float64, note string) {
	cmd := exec.CommandContext(ctx, b.exe, "eval", "--quiet", "--expect", c.Expect, "--truth", c.Truth, "--from-out", out, "--eval-json", filepath.Join(out, "eval.json"))
	msg, _ := cmd.CombinedOutput() // eval exits 1 when a figure misses its threshold: the figures are read all the same
	data, err := os.ReadFile(filepath.Join(out, "eval.json"))
	if err != nil {
		return 0, 0, "not scored: " + lastLine(string(msg))
	}
	var e struct {
		Text *struct {
			MeanCER float64 `json:"mean_cer"`
			MeanWER float64 `json:"mean_wer"`
		} `json:"text"`
	}
	if json.Unmarshal(data, &e) != nil || e.Text == nil {
		return 0, 0, "eval.json has no text figures"
	}
	return e.Text.MeanCER, e.Text.MeanWER, ""
}
