package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// limitResult is the machine's limit for render + recognise: every page
// rendered gray by pdftoppm and recognised by the tesseract CLI, one
// single-threaded process per core.
type limitResult struct {
	Pages     int     `json:"pages"`
	Cores     int     `json:"cores"`
	DPI       int     `json:"dpi"`
	WallS     float64 `json:"wall_seconds"`
	RenderCPU float64 `json:"render_cpu_seconds"`
	OCRCPU    float64 `json:"recognise_cpu_seconds"`
	// RenderCPUPerPage and OCRCPUPerPage are the two costs per page.
	RenderCPUPerPage float64 `json:"render_cpu_seconds_per_page"`
	OCRCPUPerPage    float64 `json:"recognise_cpu_seconds_per_page"`
	// PagesPerMinute is the limit: pages over (render + recognise CPU /
	// cores). WallPagesPerMinute is what the pool itself managed.
	PagesPerMinute     float64 `json:"pages_per_minute"`
	WallPagesPerMinute float64 `json:"wall_pages_per_minute"`
	Failures           int     `json:"failures"`
	FirstFailure       string  `json:"first_failure,omitempty"`
	// OtherCPUShare is the share of the machine's CPU other processes
	// took while the pool ran.
	OtherCPUShare float64 `json:"other_cpu_share"`
	// StartCPU is what starting pdftoppm and tesseract costs per page
	// whatever the page (loading the language data, mostly): the median
	// of a few runs on a trivial input. NetPagesPerMinute is the limit
	// without it, the engines' own limit.
	StartCPU          float64 `json:"start_cpu_seconds_per_page"`
	NetPagesPerMinute float64 `json:"net_pages_per_minute"`
}

// startCPU measures what one pdftoppm and one tesseract process cost on a
// trivial input: the median of three runs each.
func startCPU(ctx context.Context, pdf, tmp string) (float64, error) {
	blank := filepath.Join(tmp, "blank.pgm")
	pgm := append([]byte("P5\n8 8\n255\n"), bytes.Repeat([]byte{255}, 64)...)
	if err := os.WriteFile(blank, pgm, 0o644); err != nil {
		return 0, err
	}
	median := func(mk func() *exec.Cmd) (float64, error) {
		var s []float64
		for range 3 {
			u, err := measure(ctx, mk(), false)
			if err != nil {
				return 0, err
			}
			s = append(s, u.CPU().Seconds())
		}
		slices.Sort(s)
		return s[1], nil
	}
	render, err := median(func() *exec.Cmd {
		return exec.CommandContext(ctx, "pdftoppm", "-gray", "-r", "10", "-f", "1", "-l", "1", "-singlefile", pdf, filepath.Join(tmp, "start"))
	})
	if err != nil {
		return 0, err
	}
	ocr, err := median(func() *exec.Cmd {
		c := exec.CommandContext(ctx, "tesseract", blank, "-", "--dpi", "300")
		c.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
		c.Stdout = io.Discard
		return c
	})
	return render + ocr, err
}

type pageTask struct {
	pdf  string
	page int // 1-based
}

// measureLimit renders and recognises every page of c with a pool of cores
// workers, each running pdftoppm then tesseract on one page at a time.
// Each page is rendered by its own pdftoppm call, which re-reads the PDF:
// for image-only scans that costs a few milliseconds.
func measureLimit(ctx context.Context, c *corpus, dpi, cores int, tmp string) (*limitResult, error) {
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	tasks := make(chan pageTask)
	go func() {
		defer close(tasks)
		for _, r := range c.rows {
			for p := 1; p <= r.pages; p++ {
				select {
				case tasks <- pageTask{r.path, p}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	res := &limitResult{Cores: cores, DPI: dpi}
	var mu sync.Mutex
	var wg sync.WaitGroup
	busy0, _ := machineBusy()
	start := time.Now()
	d := strconv.Itoa(dpi)
	for w := range cores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prefix := filepath.Join(tmp, "w"+strconv.Itoa(w))
			for t := range tasks {
				p := strconv.Itoa(t.page)
				render := exec.CommandContext(ctx, "pdftoppm", "-gray", "-r", d, "-f", p, "-l", p, "-singlefile", t.pdf, prefix)
				ru, err := measure(ctx, render, false)
				var ou usage
				if err == nil && ru.ExitCode == 0 {
					ocr := exec.CommandContext(ctx, "tesseract", prefix+".pgm", "-", "--dpi", d)
					ocr.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
					ocr.Stdout = io.Discard
					ou, err = measure(ctx, ocr, false)
				}
				mu.Lock()
				res.Pages++
				res.RenderCPU += ru.CPU().Seconds()
				res.OCRCPU += ou.CPU().Seconds()
				failure := ""
				switch {
				case err != nil:
					failure = err.Error()
				case ru.ExitCode != 0:
					failure = fmt.Sprintf("pdftoppm exit %d: %s", ru.ExitCode, lastLine(ru.Stderr))
				case ou.ExitCode != 0:
					failure = fmt.Sprintf("tesseract exit %d: %s", ou.ExitCode, lastLine(ou.Stderr))
				}
				if failure != "" {
					res.Failures++
					if res.FirstFailure == "" {
						res.FirstFailure = failure
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wall := time.Since(start)
	res.WallS = wall.Seconds()
	if busy1, ok := machineBusy(); ok {
		res.OtherCPUShare = otherShare(wall, busy1-busy0, time.Duration((res.RenderCPU+res.OCRCPU)*float64(time.Second)))
	}
	if res.Pages > 0 {
		res.RenderCPUPerPage = res.RenderCPU / float64(res.Pages)
		res.OCRCPUPerPage = res.OCRCPU / float64(res.Pages)
		if cpu := res.RenderCPU + res.OCRCPU; cpu > 0 {
			res.PagesPerMinute = float64(res.Pages) / (cpu / float64(cores)) * 60
		}
		res.WallPagesPerMinute = float64(res.Pages) / res.WallS * 60
	}
	if len(c.rows) > 0 {
		start, err := startCPU(ctx, c.rows[0].path, tmp)
		if err != nil {
			return nil, err
		}
		res.StartCPU = start
		if net := res.RenderCPU + res.OCRCPU - start*float64(res.Pages); net > 0 {
			res.NetPagesPerMinute = float64(res.Pages) / (net / float64(cores)) * 60
		}
	}
	return res, nil
}

// ocrmypdfResult is OCRmyPDF run over the corpus document by document.
type ocrmypdfResult struct {
	Version    string  `json:"version"`
	Jobs       int     `json:"jobs"`
	Documents  int     `json:"documents"`
	Pages      int     `json:"pages"`
	WallS      float64 `json:"wall_seconds"`
	CPUS       float64 `json:"cpu_seconds"`
	CPUPerPage float64 `json:"cpu_seconds_per_page"`
	// PagesPerMinute is by the wall; CPUPagesPerMinute by the CPU time
	// spread over the cores, as the limit's.
	PagesPerMinute    float64 `json:"pages_per_minute"`
	CPUPagesPerMinute float64 `json:"cpu_pages_per_minute"`
	OtherCPUShare     float64 `json:"other_cpu_share"`
	Failures          int     `json:"failures"`
	FirstFailure      string  `json:"first_failure,omitempty"`
}

// measureOCRmyPDF runs `ocrmypdf --jobs N --output-type none --sidecar`
// on each document, one document at a time.
func measureOCRmyPDF(ctx context.Context, c *corpus, jobs int, tmp string) (*ocrmypdfResult, error) {
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	res := &ocrmypdfResult{Version: commandVersion("ocrmypdf", "--version"), Jobs: jobs}
	sidecar := filepath.Join(tmp, "sidecar.txt")
	var wall, busy, own time.Duration
	// The first run after installing OCRmyPDF compiles its Python modules
	// (tens of seconds): warm up on the first document, untimed.
	if len(c.rows) > 0 {
		warm := exec.CommandContext(ctx, "ocrmypdf", "--jobs", strconv.Itoa(jobs), "--output-type", "none", "--sidecar", sidecar, c.rows[0].path, "-")
		warm.Stdout = io.Discard
		if _, err := measure(ctx, warm, false); err != nil {
			return nil, err
		}
	}
	for _, r := range c.rows {
		cmd := exec.CommandContext(ctx, "ocrmypdf", "--jobs", strconv.Itoa(jobs), "--output-type", "none", "--sidecar", sidecar, r.path, "-")
		cmd.Stdout = io.Discard
		u, err := measure(ctx, cmd, false)
		if err != nil {
			return nil, err
		}
		res.Documents++
		res.Pages += r.pages
		res.WallS += u.Wall.Seconds()
		res.CPUS += u.CPU().Seconds()
		wall, busy, own = wall+u.Wall, busy+u.BusyCPU, own+u.CPU()
		if !finished(u.ExitCode) {
			res.Failures++
			if res.FirstFailure == "" {
				res.FirstFailure = fmt.Sprintf("%s: exit %d: %s", filepath.Base(r.path), u.ExitCode, lastLine(u.Stderr))
			}
		}
	}
	if res.Pages > 0 && res.WallS > 0 {
		res.CPUPerPage = res.CPUS / float64(res.Pages)
		res.PagesPerMinute = float64(res.Pages) / res.WallS * 60
		if res.CPUS > 0 {
			res.CPUPagesPerMinute = float64(res.Pages) / (res.CPUS / float64(jobs)) * 60
		}
	}
	res.OtherCPUShare = otherShare(wall, busy, own)
	return res, nil
}
