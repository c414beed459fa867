package ocr

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/page"
)

// TestCoverageCost measures what the coverage step (coverage, columns,
// recovery, handwriting) costs in CPU: every page of the PDFs under
// $OCR_COVERAGE_COST/docs is read by two workers, one with the step and
// one without (--no-coverage), taking turns page by page so that the
// machine's load falls on both alike, and each page's CPU is the
// worker's user+system time across the call (/proc/PID/stat), engines
// included. It is slow, so it runs only when the variable names a
// corpus (refcorpus --dpi-set 300, as make bench's):
//
//	OCR_COVERAGE_COST=bench-out/corpus-s1-d105-300dpi go test -run TestCoverageCost -v ./ocr
func TestCoverageCost(t *testing.T) {
	dir := os.Getenv("OCR_COVERAGE_COST")
	if dir == "" {
		t.Skip("set OCR_COVERAGE_COST to a refcorpus folder to measure the coverage step's CPU")
	}
	pdfs, err := filepath.Glob(filepath.Join(dir, "docs", "*.pdf"))
	if err != nil || len(pdfs) == 0 {
		t.Fatalf("no PDFs under %s/docs (%v)", dir, err)
	}
	var workers [2]*Worker
	for i := range workers {
		cfg := testConfig(t, 300, "OMP_THREAD_LIMIT=1")
		cfg.Policy = page.Policy{DPI: 300, NoCoverage: i == 1}.WithDefaults()
		workers[i] = startWorker(t, cfg)
	}
	ctx := context.Background()
	var cpu [2]time.Duration
	pages := 0
	for _, name := range pdfs {
		pdf, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, w := range workers {
			if n, err = w.Open(ctx, pdf); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		for p := range n {
			for k := range 2 {
				i := (pages + k) % 2 // who goes first alternates
				before := workerCPU(t, workers[i])
				if _, err := workers[i].Page(ctx, p, 0, 10*time.Minute); err != nil {
					t.Fatalf("%s page %d: %v", name, p, err)
				}
				cpu[i] += workerCPU(t, workers[i]) - before
			}
			pages++
		}
	}
	t.Logf("%d pages at 300 dpi: CPU %.1f s with the coverage step, %.1f s without (--no-coverage): %.2f%% more",
		pages, cpu[0].Seconds(), cpu[1].Seconds(), 100*(cpu[0].Seconds()/cpu[1].Seconds()-1))
}

// workerCPU is w's child's user+system time so far.
func workerCPU(t *testing.T, w *Worker) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(w.proc.Pid()) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command's closing parenthesis: utime and
	// stime are the 12th and 13th, in clock ticks (100 a second).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond
}
