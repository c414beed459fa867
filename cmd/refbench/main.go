// Command refbench measures refbatch against the machine's limit and
// against OCRmyPDF, on the same pages, and writes bench.json. `make bench`
// runs it; see refbatch help benchmarks.
//
// Usage:
//
//	refbench --corpus DIR [--out bench-out] [--refbatch bin/refbatch] [flags]
//	refbench export-check --out DIR [--identity FILE] [flags]
//	refbench defaults [--bench DIR] [--eval DIR] [--real DIR] [flags]
//
// DIR is a corpus refcorpus wrote (manifest.csv and docs/). In one run it
// measures, each part behind a flag:
//
//	default    refbatch run --plaintext --quiet into a fresh --out: pages per
//	           minute, wall, CPU (user+sys of the process tree, from wait4),
//	           peak RSS of the parent and of the largest worker (VmHWM polled
//	           every 100 ms; report.json's summary.peak_*_rss_bytes when it
//	           has them), then the same command again over the finished batch
//	           (resume wall)
//	--fast     the same with the page steps (orientation, deskew,
//	           despeckle) off, when
//	           `refbatch run --help` offers flags for that (or --fast-flags)
//	--no-coverage the default run again with --no-coverage: what the
//	           coverage step (measurement, recovery, columns) costs
//	--cascade  the default run again with --cascade: pages read first at a
//	           lower resolution, again at --dpi when that reading asks
//	           (issue 20; off by default since issue 29)
//	--limit    every page rendered gray by `pdftoppm -gray -r DPI` and
//	           recognised by `tesseract page.pgm - --dpi DPI`
//	           (OMP_THREAD_LIMIT=1), one process per core: the CPU time of
//	           both, summed and divided by the cores, is the limit
//	--ocrmypdf `ocrmypdf --jobs CORES --output-type none --sidecar` per
//	           document, one document at a time, when ocrmypdf is installed
//	--subsets  the default run again on the corpus's first N documents, to
//	           show how the cost per page grows with the batch
//	--long-pages  one document of that many corpus pages, run with --workers
//	           CORES and with --workers 1: the ratio of the walls
//	--resume-rows a manifest of that many rows cycling over a few tiny
//	           one-page documents (each row its own source_id, so its own
//	           document) at --tiny-dpi: the run's parent peak RSS, then the
//	           wall of the same command over the finished batch
//	--big-rows the same manifest with that many rows: its parent peak RSS
//	           against the --resume-rows run's
//	--export   refbatch export --bag over the default batch, timed against
//	           its OCR, then again over the finished export; and over the
//	           --resume-rows batch, whose peak RSS is set against the first
//	--hostile  each PDF of a folder as the middle row of a three-row
//	           manifest, under ulimit -v 4 GiB: wall, the peak resident
//	           memory of the whole process tree, every row's outcome
//
// It prints a table with the ratios refbatch/limit and refbatch/OCRmyPDF
// and the acceptance checks, and writes bench.json (machine, date,
// corpus, every figure) after every part, so an interrupted bench keeps
// what it measured. Figures taken while other work loads the machine are
// not comparable: bench.json records the load average before and after.
//
// Exit status: 0 when the bench ran (whatever the figures), 1 if it could
// not, 2 on a usage error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
)

// options are refbench's flags.
type options struct {
	Corpus, Out, JSON, Refbatch string
	Cores, DPI                  int
	Default, Fast, Limit        bool
	NoCoverage, Cascade         bool
	OCRmyPDF                    bool
	FastFlags                   string
	Subsets                     []int
	LongPages, LongDPI          int
	ResumeRows, BigRows         int
	TinyDPI, TinyFiles          int
	Hostile                     string
	Export                      bool
	ExportFormats               string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "defaults" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := defaultsMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == "export-check" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := exportCheckMain(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "refbench: error: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "refbench: error: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("refbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var subsets string
	fs.StringVar(&o.Corpus, "corpus", "", "corpus folder refcorpus wrote (required)")
	fs.StringVar(&o.Out, "out", "bench-out", "working folder: refbatch outputs, generated inputs, bench.json")
	fs.StringVar(&o.JSON, "json", "", "where to write bench.json (default OUT/bench.json)")
	fs.StringVar(&o.Refbatch, "refbatch", "bin/refbatch", "the refbatch binary to measure")
	fs.IntVar(&o.Cores, "cores", runtime.NumCPU(), "cores: refbatch --workers, the limit's pool, OCRmyPDF --jobs")
	fs.IntVar(&o.DPI, "dpi", 300, "render resolution of every measured run")
	fs.BoolVar(&o.Default, "default", true, "measure refbatch run with its default settings, and resuming it")
	fs.BoolVar(&o.Fast, "fast", true, "measure refbatch run with the page steps (orientation, deskew, despeckle) off (skipped when it has no such flags)")
	fs.StringVar(&o.FastFlags, "fast-flags", "", "refbatch run flags that switch the page steps off (default: found in its --help)")
	fs.BoolVar(&o.NoCoverage, "no-coverage", true, "measure refbatch run with --no-coverage too, for what the coverage step costs (skipped when it has no such flag)")
	fs.BoolVar(&o.Cascade, "cascade", true, "measure refbatch run with --cascade too, pages read first at a lower resolution: it against the default is what the cascade saves or costs (skipped when it has no such flag)")
	fs.BoolVar(&o.Limit, "limit", true, "measure the render + recognise limit with pdftoppm and tesseract")
	fs.BoolVar(&o.OCRmyPDF, "ocrmypdf", true, "measure OCRmyPDF (skipped when not installed)")
	fs.StringVar(&subsets, "subsets", "", "comma-separated document counts: also run refbatch on the corpus's first N documents")
	fs.IntVar(&o.LongPages, "long-pages", 150, "pages of the single long document run with all workers and with one (0 skips)")
	fs.IntVar(&o.LongDPI, "long-dpi", 0, "render resolution of the long document runs (default --dpi)")
	fs.IntVar(&o.ResumeRows, "resume-rows", 2400, "rows of the tiny-document batch whose resume is timed (0 skips)")
	fs.IntVar(&o.BigRows, "big-rows", 24000, "rows of the tiny-document batch whose parent RSS is set against --resume-rows' (0 skips)")
	fs.IntVar(&o.TinyDPI, "tiny-dpi", 100, "render resolution of the tiny-document batches")
	fs.IntVar(&o.TinyFiles, "tiny-files", 3, "distinct tiny files the rows of the tiny-document batches cycle over")
	fs.StringVar(&o.Hostile, "hostile", "", "folders of hostile PDFs, separated by commas: run each between two corpus documents under ulimit -v 4 GiB, measuring the whole process tree (\"\" skips)")
	fs.BoolVar(&o.Export, "export", true, "time refbatch export --bag over the default batch (and the --resume-rows batch, for its memory) against their OCR")
	fs.StringVar(&o.ExportFormats, "export-formats", "pdf,alto,txt", "the --format of the export measured")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.Corpus == "" {
		return o, errors.New("--corpus is required")
	}
	if o.JSON == "" {
		o.JSON = filepath.Join(o.Out, "bench.json")
	}
	if o.LongDPI == 0 {
		o.LongDPI = o.DPI
	}
	if o.Cores < 1 || o.DPI < 50 || o.TinyDPI < 50 || o.TinyFiles < 1 {
		return o, errors.New("--cores, --tiny-files must be positive and --dpi, --tiny-dpi at least 50")
	}
	for f := range strings.SplitSeq(subsets, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return o, fmt.Errorf("--subsets: %q is not a document count", f)
		}
		o.Subsets = append(o.Subsets, n)
	}
	return o, nil
}

// bench is one refbench invocation.
type bench struct {
	o      options
	c      *corpus
	res    *results
	stdout io.Writer
	log    io.Writer
	exe    string // absolute path of refbatch
	help   string // refbatch run --help, to find optional flags
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	api.DisableConfigDir() // pdfcpu must not write ~/.config while we count pages
	exe, err := filepath.Abs(o.Refbatch)
	if err != nil {
		return err
	}
	if _, err := os.Stat(exe); err != nil {
		return fmt.Errorf("refbatch binary: %w (build it with make build)", err)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	if o.Out, err = filepath.Abs(o.Out); err != nil {
		return err
	}
	c, err := readCorpus(o.Corpus)
	if err != nil {
		return err
	}
	help, _ := exec.CommandContext(ctx, exe, "run", "--help").CombinedOutput()
	b := &bench{o: o, c: c, stdout: stdout, log: stderr, exe: exe, help: string(help), res: newResults(o, c, exe)}
	fmt.Fprintf(stderr, "refbench: corpus %s: %d documents, %d pages; %d cores, %d DPI\n", c.dir, len(c.rows), c.pages, o.Cores, o.DPI)

	parts := []struct {
		on   bool
		name string
		fn   func(context.Context) error
	}{
		{o.Default, "refbatch, default settings", b.runDefault},
		{o.Fast, "refbatch, page steps off", b.runFast},
		{o.NoCoverage, "refbatch, coverage off", b.runNoCoverage},
		{o.Cascade, "refbatch, --cascade", b.runCascade},
		{o.Limit, "limit: pdftoppm + tesseract", b.runLimit},
		{o.OCRmyPDF, "OCRmyPDF", b.runOCRmyPDF},
		{len(o.Subsets) > 0, "refbatch on corpus subsets", b.runSubsets},
		{o.LongPages > 0, fmt.Sprintf("one %d-page document", o.LongPages), b.runLong},
		{o.ResumeRows > 0 || o.BigRows > 0, "tiny-document batches: resume and memory", b.runRows},
		{o.Hostile != "", "hostile files", b.runHostile},
	}
	for _, p := range parts {
		if !p.on {
			continue
		}
		fmt.Fprintf(stderr, "refbench: %s ...\n", p.name)
		start := time.Now()
		if err := p.fn(ctx); err != nil {
			if ctx.Err() != nil {
				b.finish()
				return fmt.Errorf("interrupted during %s", p.name)
			}
			b.res.Notes = append(b.res.Notes, fmt.Sprintf("%s failed: %v", p.name, err))
			fmt.Fprintf(stderr, "refbench: %s failed: %v\n", p.name, err)
		}
		fmt.Fprintf(stderr, "refbench: %s took %s\n", p.name, time.Since(start).Round(time.Second))
		if err := b.save(); err != nil {
			return err
		}
	}
	return b.finish()
}

// finish completes the results, writes bench.json and prints the table.
func (b *bench) finish() error {
	b.res.Machine.LoadAvgEnd = loadAvg()
	b.res.computeRatios()
	if err := b.save(); err != nil {
		return err
	}
	b.res.writeTable(b.stdout)
	fmt.Fprintf(b.stdout, "bench.json: %s\n", b.o.JSON)
	return nil
}

func (b *bench) save() error {
	data, err := json.MarshalIndent(b.res, "", "  ")
	if err != nil {
		return err
	}
	tmp := b.o.JSON + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing bench.json: %w", err)
	}
	return os.Rename(tmp, b.o.JSON)
}

// refbatchRun runs `refbatch run` into out (removed first unless resume)
// and returns what it cost, with the figures of the report it wrote.
func (b *bench) refbatchRun(ctx context.Context, name, manifest, root, out string, resume bool, extra ...string) (*runResult, error) {
	if !resume {
		if err := os.RemoveAll(out); err != nil {
			return nil, err
		}
	}
	args := []string{"run", "--quiet", "--plaintext", "--out", out}
	if root != "" {
		args = append(args, "--root", root)
	}
	args = append(args, extra...)
	args = append(args, manifest)
	cmd := exec.CommandContext(ctx, b.exe, args...)
	cmd.Stdout = io.Discard
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	u, err := measure(ctx, cmd, true)
	if err != nil {
		return nil, err
	}
	r := newRunResult(name, args, u, b.o.Cores)
	r.Resume = resume
	if err := r.readReport(filepath.Join(out, "report.json")); err != nil {
		r.Note = err.Error()
	}
	if !finished(u.ExitCode) {
		r.Stderr = lastLines(u.Stderr, 5)
		fmt.Fprintf(b.log, "refbench: %s: refbatch exited %d: %s\n", name, u.ExitCode, lastLine(u.Stderr))
	}
	if resume {
		fmt.Fprintf(b.log, "refbench: %s: %.2fs, parent peak RSS %.1f MiB\n", name, r.WallS, float64(r.PeakParentRSS)/mib)
	} else {
		fmt.Fprintf(b.log, "refbench: %s: %d pages in %.1fs, %.1f pages/min, %.2f CPU-s/page\n", name, r.Pages, r.WallS, r.PagesPerMinute, r.CPUPerPage)
	}
	return r, nil
}

func (b *bench) runsDir(name string) string { return filepath.Join(b.o.Out, "runs", name) }

func (b *bench) runDefault(ctx context.Context) error {
	manifest := filepath.Join(b.c.dir, "manifest.csv")
	out := b.runsDir("default")
	args := []string{"--workers", strconv.Itoa(b.o.Cores), "--dpi", strconv.Itoa(b.o.DPI)}
	r, err := b.refbatchRun(ctx, "default", manifest, "", out, false, args...)
	if err != nil {
		return err
	}
	b.res.Default = r
	if share, err := coverageShare(filepath.Join(out, "artifacts")); err == nil {
		b.res.CoverageShare = share
	} else {
		b.res.Notes = append(b.res.Notes, "coverage share: "+err.Error())
	}
	if err := b.save(); err != nil {
		return err
	}
	again, err := b.refbatchRun(ctx, "default, resumed when finished", manifest, "", out, true, args...)
	if err != nil {
		return err
	}
	b.res.DefaultResume = again
	if b.o.Export {
		if b.res.Export, err = b.measureExport(ctx, "default batch", out, r); err != nil {
			return err
		}
	}
	return nil
}

// noIDCheck returns --no-id-check when refbatch run has it: the generated
// inputs carry no participant IDs to find, and a document in review for
// id_not_found would be the same work as one done.
func (b *bench) noIDCheck() []string {
	if strings.Contains(b.help, "--no-id-check") {
		return []string{"--no-id-check"}
	}
	return nil
}

// commandVersion returns the first line a tool prints about its version.
func commandVersion(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	return lastLine(strings.SplitN(string(out), "\n", 2)[0])
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
