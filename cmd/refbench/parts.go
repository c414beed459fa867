package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// fastPattern finds refbatch run flags that switch orientation or deskew
// off, in the two spellings urfave/cli gives: --no-X, or a boolean --X
// whose default is true.
var (
	fastNoFlag   = regexp.MustCompile(`--(no-[a-z-]*(?:orient|deskew|despeckl|rotat)[a-z-]*)\b`)
	fastBoolFlag = regexp.MustCompile(`--([a-z-]*(?:orient|deskew|despeckl|rotat)[a-z-]*)\b[^\n]*\(default: true\)`)
)

// fastFlags returns the flags that switch the page steps off,
// read from `refbatch run --help`; nil when it offers none.
func fastFlags(help string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range fastNoFlag.FindAllStringSubmatch(help, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, "--"+m[1])
		}
	}
	for _, m := range fastBoolFlag.FindAllStringSubmatch(help, -1) {
		if !seen[m[1]] && !seen["no-"+m[1]] {
			seen[m[1]] = true
			out = append(out, "--"+m[1]+"=false")
		}
	}
	return out
}

func (b *bench) runFast(ctx context.Context) error {
	var flags []string
	if b.o.FastFlags != "" {
		flags = strings.Fields(b.o.FastFlags)
	} else {
		flags = fastFlags(b.help)
	}
	if len(flags) == 0 {
		b.res.Notes = append(b.res.Notes, "refbatch run has no flag to switch orientation or deskew off: that column is skipped")
		fmt.Fprintln(b.log, "refbench: refbatch run has no flag to switch orientation or deskew off; skipped")
		return nil
	}
	args := append([]string{"--workers", strconv.Itoa(b.o.Cores), "--dpi", strconv.Itoa(b.o.DPI)}, flags...)
	r, err := b.refbatchRun(ctx, "fast", filepath.Join(b.c.dir, "manifest.csv"), "", b.runsDir("fast"), false, args...)
	if err != nil {
		return err
	}
	b.res.Fast = r
	b.res.Settings.FastFlags = strings.Join(flags, " ")
	return nil
}

// coverageShare reads the plaintext artifacts in dir and returns the share
// of the engines' time (render and recognise, over every page) the
// coverage step took: its cost, measured inside the run itself, so that
// other load on the machine moves it no more than it moves the run.
func coverageShare(dir string) (float64, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return 0, fmt.Errorf("no plaintext artifacts in %s", dir)
	}
	var coverage, engine float64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		var a struct {
			Pages []struct {
				Render    float64 `json:"render_ns"`
				Recognise float64 `json:"recognise_ns"`
				Coverage  float64 `json:"coverage_ns"`
			} `json:"pages"`
		}
		if err := json.Unmarshal(data, &a); err != nil {
			return 0, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		for _, p := range a.Pages {
			coverage += p.Coverage
			engine += p.Render + p.Recognise
		}
	}
	if engine == 0 {
		return 0, errors.New("no engine time recorded")
	}
	return coverage / engine, nil
}

// runNoCoverage runs the default settings with the coverage step off:
// the default run against it is what coverage costs.
func (b *bench) runNoCoverage(ctx context.Context) error {
	if !strings.Contains(b.help, "--no-coverage") {
		b.res.Notes = append(b.res.Notes, "refbatch run has no --no-coverage flag: that run is skipped")
		return nil
	}
	args := []string{"--workers", strconv.Itoa(b.o.Cores), "--dpi", strconv.Itoa(b.o.DPI), "--no-coverage"}
	r, err := b.refbatchRun(ctx, "no coverage", filepath.Join(b.c.dir, "manifest.csv"), "", b.runsDir("no-coverage"), false, args...)
	if err != nil {
		return err
	}
	b.res.NoCoverage = r
	return nil
}

func (b *bench) runLimit(ctx context.Context) error {
	for _, tool := range []string{"pdftoppm", "tesseract"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.res.Notes = append(b.res.Notes, tool+" is not installed: the limit is not measured (apt-get install poppler-utils tesseract-ocr)")
			return nil
		}
	}
	r, err := measureLimit(ctx, b.c, b.o.DPI, b.o.Cores, filepath.Join(b.o.Out, "limit-tmp"))
	if err != nil {
		return err
	}
	b.res.Limit = r
	fmt.Fprintf(b.log, "refbench: limit: %d pages, render %.2f + recognise %.2f CPU-s/page: %.1f pages/min (pool wall %.1fs)\n",
		r.Pages, r.RenderCPUPerPage, r.OCRCPUPerPage, r.PagesPerMinute, r.WallS)
	return nil
}

func (b *bench) runOCRmyPDF(ctx context.Context) error {
	if _, err := exec.LookPath("ocrmypdf"); err != nil {
		b.res.Notes = append(b.res.Notes, "ocrmypdf is not installed: not measured")
		fmt.Fprintln(b.log, "refbench: ocrmypdf is not installed; skipped")
		return nil
	}
	r, err := measureOCRmyPDF(ctx, b.c, b.o.Cores, filepath.Join(b.o.Out, "ocrmypdf-tmp"))
	if err != nil {
		return err
	}
	b.res.OCRmyPDF = r
	fmt.Fprintf(b.log, "refbench: OCRmyPDF: %d pages in %.1fs, %.1f pages/min, %d failures\n", r.Pages, r.WallS, r.PagesPerMinute, r.Failures)
	return nil
}

func (b *bench) runSubsets(ctx context.Context) error {
	for _, n := range b.o.Subsets {
		if n >= len(b.c.rows) {
			continue // the default run covers the whole corpus
		}
		dir := filepath.Join(b.o.Out, "inputs", fmt.Sprintf("subset-%d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		manifest := filepath.Join(dir, "manifest.csv")
		if _, err := b.c.writeSubset(manifest, n); err != nil {
			return err
		}
		r, err := b.refbatchRun(ctx, fmt.Sprintf("subset of %d documents", n), manifest, b.c.dir, b.runsDir(fmt.Sprintf("subset-%d", n)), false,
			"--workers", strconv.Itoa(b.o.Cores), "--dpi", strconv.Itoa(b.o.DPI))
		if err != nil {
			return err
		}
		b.res.Subsets = append(b.res.Subsets, r)
	}
	return nil
}

func (b *bench) runLong(ctx context.Context) error {
	dir := filepath.Join(b.o.Out, "inputs", fmt.Sprintf("long-%d", b.o.LongPages))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	doc := filepath.Join(dir, "long.pdf")
	if err := b.c.writeLongDoc(doc, b.o.LongPages); err != nil {
		return err
	}
	manifest := filepath.Join(dir, "manifest.csv")
	if err := writeRepeatManifest(manifest, 1, []string{"long.pdf"}); err != nil {
		return err
	}
	long := &longResult{Pages: b.o.LongPages, DPI: b.o.LongDPI, Workers: b.o.Cores}
	b.res.Long = long
	for _, w := range []int{b.o.Cores, 1} {
		r, err := b.refbatchRun(ctx, fmt.Sprintf("long document, %d workers", w), manifest, "", b.runsDir(fmt.Sprintf("long-w%d", w)), false,
			append([]string{"--workers", strconv.Itoa(w), "--dpi", strconv.Itoa(b.o.LongDPI)}, b.noIDCheck()...)...)
		if err != nil {
			return err
		}
		if w == 1 {
			long.One = r
		} else {
			long.All = r
		}
		if err := b.save(); err != nil {
			return err
		}
	}
	if long.All != nil && long.One != nil && long.One.WallS > 0 {
		long.Ratio = long.All.WallS / long.One.WallS
	}
	return nil
}

func (b *bench) runRows(ctx context.Context) error {
	dir := filepath.Join(b.o.Out, "inputs", "tiny")
	files, err := writeTinyDocs(dir, b.o.TinyFiles, 150)
	if err != nil {
		return err
	}
	rr := &rowsResult{DPI: b.o.TinyDPI, Files: len(files)}
	b.res.Rows = rr
	args := append([]string{"--workers", strconv.Itoa(b.o.Cores), "--dpi", strconv.Itoa(b.o.TinyDPI)}, b.noIDCheck()...)
	for _, n := range []int{b.o.ResumeRows, b.o.BigRows} {
		if n <= 0 {
			continue
		}
		manifest := filepath.Join(dir, fmt.Sprintf("manifest-%d.csv", n))
		if err := writeRepeatManifest(manifest, n, files); err != nil {
			return err
		}
		out := b.runsDir(fmt.Sprintf("rows-%d", n))
		r, err := b.refbatchRun(ctx, fmt.Sprintf("%d tiny documents", n), manifest, "", out, false, args...)
		if err != nil {
			return err
		}
		r.Rows = n
		again, err := b.refbatchRun(ctx, fmt.Sprintf("%d tiny documents, resumed when finished", n), manifest, "", out, true, args...)
		if err != nil {
			return err
		}
		again.Rows = n
		if n == b.o.ResumeRows {
			rr.Small, rr.SmallResume = r, again
			if b.o.Export {
				if b.res.TinyExport, err = b.measureExport(ctx, fmt.Sprintf("%d tiny documents", n), out, r); err != nil {
					return err
				}
			}
		} else {
			rr.Big, rr.BigResume = r, again
		}
		if err := b.save(); err != nil {
			return err
		}
	}
	if rr.Small != nil && rr.Big != nil && rr.Small.PeakParentRSS > 0 {
		rr.ParentRSSRatio = float64(rr.Big.PeakParentRSS) / float64(rr.Small.PeakParentRSS)
	}
	if rr.SmallResume != nil && rr.BigResume != nil && rr.SmallResume.PeakParentRSS > 0 {
		rr.ResumeParentRSSRatio = float64(rr.BigResume.PeakParentRSS) / float64(rr.SmallResume.PeakParentRSS)
	}
	return nil
}
