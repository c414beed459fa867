package ocr

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/page"
)

// TestCoverageSplit reads every page of $OCR_COVERAGE_SPLIT/docs in
// process on one thread with two engines, one with the coverage step and
// one without, taking turns page by page, and logs each page's thread
// CPU for both, the coverage engine's extra Tesseract passes and what
// ran them. Run with -cpuprofile: the samples carry the label cov=on or
// cov=off, so that
//
//	go tool pprof -tagfocus=cov=on -proto prof > on.pb.gz (and off)
//	go tool pprof -top -diff_base off.pb.gz on.pb.gz
//
// gives the step's cost by function.
//
//	OMP_THREAD_LIMIT=1 OCR_COVERAGE_SPLIT=/work/bench-corpus go test -run TestCoverageSplit -v -cpuprofile cov.prof ./ocr
func TestCoverageSplit(t *testing.T) {
	pdfs := corpusPDFs(t, "OCR_COVERAGE_SPLIT")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var engines [2]*engine
	for i := range engines {
		engines[i] = inProcessEngine(t, childConfig{Policy: page.Policy{DPI: 300, NoCoverage: i == 1}.WithDefaults()})
	}
	labels := [2]string{"on", "off"}
	var cpu [2]time.Duration
	pages, extraPasses, rec, reread, hand := 0, 0, 0, 0, 0
	for _, name := range pdfs {
		pdf, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range engines {
			if resp := e.open(pdf); resp.Cause != "" {
				t.Fatalf("%s: %s", name, resp.Err)
			}
		}
		for p := range engines[0].doc.NumPage() {
			var pc [2]time.Duration
			var passes [2]int
			var res [2]response
			for k := range 2 {
				i := (pages + k) % 2
				e := engines[i]
				before, n := threadCPU(t), e.passes
				pprof.Do(context.Background(), pprof.Labels("cov", labels[i]), func(context.Context) {
					res[i] = e.page(p, 0)
				})
				pc[i] = threadCPU(t) - before
				passes[i] = e.passes - n
				cpu[i] += pc[i]
			}
			r := res[0].Result
			recovered := r.Recovery != nil
			if recovered {
				rec++
			}
			reread += r.ColumnsReread
			if len(r.HandwritingRegions) > 0 {
				hand++
			}
			extraPasses += passes[0] - passes[1]
			t.Logf("%s p%d on %4dms off %4dms (%+5dms) passes %d/%d unc1 %.3f rec %v cols %d reread %d hand %d",
				filepath.Base(name), p+1, pc[0].Milliseconds(), pc[1].Milliseconds(), (pc[0] - pc[1]).Milliseconds(),
				passes[0], passes[1], r.UncoveredFirst, recovered, r.Columns, r.ColumnsReread, len(r.HandwritingRegions))
			pages++
		}
	}
	t.Logf("%d pages: CPU %.1f s with coverage, %.1f s without: %+.2f%%; %d extra passes; recovery on %d pages, columns re-read %d, handwriting on %d",
		pages, cpu[0].Seconds(), cpu[1].Seconds(), 100*(cpu[0].Seconds()/cpu[1].Seconds()-1), extraPasses, rec, reread, hand)
}

// TestCoverageWorkers measures what the coverage step (coverage, columns,
// recovery, handwriting) costs in CPU: every page of the PDFs under
// $OCR_COVERAGE_WORKERS/docs is read by two workers, one with the step
// and one without (--no-coverage), taking turns page by page so that the
// machine's load falls on both alike. Each page's cost is the worker's
// user and system time across the call (/proc/PID/stat), engines
// included, kept apart with its minor page faults, since the step's cost
// was once mostly the kernel's. It is slow, so it runs only when the
// variable names a corpus (refcorpus --dpi-set 300, as make bench's);
// OCR_COVERAGE_DOCS=N reads the first N documents only.
//
//	OCR_COVERAGE_WORKERS=/work/bench-corpus go test -run TestCoverageWorkers -v ./ocr
func TestCoverageWorkers(t *testing.T) {
	pdfs := corpusPDFs(t, "OCR_COVERAGE_WORKERS")
	if s := os.Getenv("OCR_COVERAGE_DOCS"); s != "" {
		n, _ := strconv.Atoi(s)
		pdfs = pdfs[:min(n, len(pdfs))]
	}
	var workers [2]*Worker
	for i := range workers {
		cfg := testConfig(t, 300, "OMP_THREAD_LIMIT=1")
		cfg.Policy = page.Policy{DPI: 300, NoCoverage: i == 1}.WithDefaults()
		workers[i] = startWorker(t, cfg)
	}
	ctx := context.Background()
	var sum [2][3]int
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
				i := (pages + k) % 2
				before := procStat(t, workers[i])
				if _, err := workers[i].Page(ctx, p, 0, 10*time.Minute); err != nil {
					t.Fatalf("%s page %d: %v", name, p, err)
				}
				after := procStat(t, workers[i])
				for j := range 3 {
					sum[i][j] += after[j] - before[j]
				}
			}
			pages++
		}
	}
	for i, l := range []string{"with", "without"} {
		t.Logf("%s coverage: user %.2f s sys %.2f s minflt %d, %s", l, float64(sum[i][0])/100, float64(sum[i][1])/100, sum[i][2], peakRSS(t, workers[i]))
	}
	t.Logf("%d pages: user+sys %+.2f%%, user %+.2f%%, sys %+.2f%%", pages,
		100*(float64(sum[0][0]+sum[0][1])/float64(sum[1][0]+sum[1][1])-1),
		100*(float64(sum[0][0])/float64(sum[1][0])-1), 100*(float64(sum[0][1])/float64(sum[1][1])-1))
}

// procStat is w's child's user and system time so far, in ticks, and its
// minor page faults.
func procStat(t *testing.T, w *Worker) [3]int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(w.proc.Pid()) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	minflt, _ := strconv.Atoi(f[7])
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return [3]int{ut, st, minflt}
}

// BenchmarkInkLook measures the coverage step's look at a page of print
// at 300 dpi with the engine's buffers reused, as a worker makes it for
// each page.
func BenchmarkInkLook(b *testing.B) {
	const dpi = 300
	img, _ := printPage(b, dpi)
	var buf inkBuffers
	for b.Loop() {
		lookAtInk(img, dpi, &buf)
	}
}

// peakRSS is w's child's VmHWM line.
func peakRSS(t *testing.T, w *Worker) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(w.proc.Pid()) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

// corpusPDFs is the PDFs under $env/docs, a refcorpus folder; the test
// is skipped when env is unset.
func corpusPDFs(t *testing.T, env string) []string {
	t.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		t.Skip("set " + env + " to a refcorpus folder")
	}
	pdfs, err := filepath.Glob(filepath.Join(dir, "docs", "*.pdf"))
	if err != nil || len(pdfs) == 0 {
		t.Fatalf("no PDFs under %s/docs (%v)", dir, err)
	}
	return pdfs
}
