package ocr

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gen2brain/go-fitz"

	"github.com/refbatch/refbatch/ocr/page"
)

// TestMeasure reproduces the figures behind DefaultMemoryLimit and the
// worker-versus-CLI comparison. It is slow, so it runs only with
// OCR_MEASURE=1:
//
//	OCR_MEASURE=1 go test -run TestMeasure -v ./ocr
func TestMeasure(t *testing.T) {
	if os.Getenv("OCR_MEASURE") == "" {
		t.Skip("set OCR_MEASURE=1 to measure memory and speed")
	}
	ctx := context.Background()
	measure := func(name string, pdf []byte, dpi int) {
		cfg := testConfig(t, 300)
		cfg.MemoryLimit = 0 // measure, do not limit
		cfg.Policy.DPI, cfg.Policy.MinDPI = dpi, 150
		w := startWorker(t, cfg)
		if _, err := w.Open(ctx, pdf); err != nil {
			t.Fatalf("%s: Open: %v", name, err)
		}
		idle := w.Memory()
		page, err := w.Page(ctx, 0, 0, 10*time.Minute)
		if err != nil {
			t.Fatalf("%s: Page: %v", name, err)
		}
		m := w.Memory()
		t.Logf("%s: %d×%d px (%.1f Mpx) at %d dpi, rotation %d, skew %.2f, %d words; render %v, recognise %v; "+
			"VmPeak %d MiB (idle %d MiB), VmHWM %d MiB (idle %d MiB)",
			name, page.Width, page.Height, float64(page.Width*page.Height)/1e6, page.DPI, page.Rotation, page.SkewDegrees, len(page.Words),
			page.RenderTime.Round(time.Millisecond), page.RecogniseTime.Round(time.Millisecond),
			m.VmPeak>>20, idle.VmPeak>>20, m.VmHWM>>20, idle.VmHWM>>20)
	}

	letter := letterPDF(t, 300)
	measure("letter 300 dpi", letter, 300)
	// The same text page drawn at 700 dpi: 5950×7700, 45.8 Mpx of text.
	measure("letter 700 dpi", letterPDF(t, 700), 700)
	// A text page at the cap: 7070×7070 px at 300 dpi.
	square := textPage(t, bodyLines(t, 120), 23.56, 23.56, 300)
	measure("square 50 Mpx", imagePDF(t, square, 300), 300)
	// The same, upside down and skewed by 3 degrees, which takes every
	// page step: deskewing enlarges it to 7430×7430 (55 Mpx).
	skewed, err := rotateGray(toGray(square).rotate(180), 3, 255)
	if err != nil {
		t.Fatalf("skewing the square page: %v", err)
	}
	measure("square 50 Mpx, turned and skewed", imagePDF(t, fromGray(skewed), 300), 300)
	if dir := os.Getenv("OCR_CORPUS"); dir != "" {
		pdf, err := os.ReadFile(filepath.Join(dir, "enormous.pdf"))
		if err == nil {
			// Lowered to 235 dpi by the 50 Mpx cap.
			measure("enormous.pdf", pdf, 300)
		}
	}

	// One 300 dpi page through the worker against the tesseract CLI on the
	// same page pre-rendered to gray.
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("no tesseract CLI")
	}
	cfg := testConfig(t, 300)
	w := startWorker(t, cfg)
	if _, err := w.Open(ctx, letter); err != nil {
		t.Fatalf("Open: %v", err)
	}
	doc, err := fitz.NewFromMemory(letter)
	if err != nil {
		t.Fatalf("opening letter page: %v", err)
	}
	img, err := doc.ImageDPI(0, 300)
	doc.Close()
	if err != nil {
		t.Fatalf("rendering letter page: %v", err)
	}
	var e engine
	pgmPath := filepath.Join(t.TempDir(), "page.pgm")
	e.gray.fromRGBA(img)
	if err := os.WriteFile(pgmPath, e.gray.pgm(), 0o600); err != nil {
		t.Fatalf("writing page: %v", err)
	}
	const runs = 3
	var best, bestCLI time.Duration
	var words int
	for range runs {
		start := time.Now()
		page, err := w.Page(ctx, 0, 0, 5*time.Minute)
		if err != nil {
			t.Fatalf("Page: %v", err)
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
		words = len(page.Words)

		cmd := exec.Command("tesseract", pgmPath, "stdout", "--dpi", "300", "--psm", "3", "-l", "eng", "tsv")
		cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
		start = time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tesseract CLI: %v: %s", err, out)
		}
		if d := time.Since(start); bestCLI == 0 || d < bestCLI {
			bestCLI = d
		}
	}
	t.Logf("letter 300 dpi, best of %d: worker Page %v (render+gray+recognise, %d words), "+
		"tesseract CLI tsv on the pre-rendered gray page %v: CLI/worker = %.2f",
		runs, best.Round(time.Millisecond), words, bestCLI.Round(time.Millisecond), float64(bestCLI)/float64(best))
}

// bodyLines returns n lines of referral-like prose.
func bodyLines(t testing.TB, n int) []string {
	t.Helper()
	body := []string{
		"Participant ID: P-123456   Referral date: 2024-03-14",
		"Thank you for seeing this patient, who has had a persistent cough",
		"for the past three months despite two courses of antibiotics.",
		"There is no history of smoking and no known occupational exposure.",
		"A chest radiograph taken last month showed no focal consolidation.",
	}
	lines := make([]string, n)
	for i := range lines {
		lines[i] = body[i%len(body)]
	}
	return lines
}

// TestMeasureSteps reads pages of the real corpus at 300 dpi with the page
// steps (inversion, deskew, orientation, text layers) on and off, in this
// process, and logs what each page gives: words, credible words (confidence
// 60 or more, two or more letters or digits), mean confidence and time. It
// is slow, so it runs only with OCR_MEASURE=1; run it under
// OMP_THREAD_LIMIT=1 as a worker child would:
//
//	OCR_MEASURE=1 OMP_THREAD_LIMIT=1 go test -run TestMeasureSteps -v ./ocr
//
// OCR_MEASURE_FILES=a.pdf,b.pdf chooses the files. Most of the corpus's
// scans are one brochure page (the LinnSequencer) turned, skewed, inverted
// or encoded differently; their CER is measured against linn.pdf's upright
// reading with the steps off, a reference that is itself a reading, not
// ground truth.
func TestMeasureSteps(t *testing.T) {
	if os.Getenv("OCR_MEASURE") == "" {
		t.Skip("set OCR_MEASURE=1 to measure the page steps")
	}
	dir := corpusDir(t)
	files := []string{"cardinal.pdf", "skew.pdf", "rotated_skew.pdf", "jbig2_baddevicen.pdf", "ccitt.pdf",
		"linn.pdf", "epson.pdf", "graph_ocred.pdf", "multipage.pdf", "c02-22.pdf", "vector.pdf", "lichtenstein.pdf"}
	if f := os.Getenv("OCR_MEASURE_FILES"); f != "" {
		files = strings.Split(f, ",")
	}
	// The engine runs its native code on this thread, so the thread's CPU
	// time is the page's, whatever else the machine is doing.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	on := inProcessEngine(t, childConfig{Policy: page.Policy{DPI: 300, MinDPI: 150}})
	off := inProcessEngine(t, childConfig{Policy: page.Policy{DPI: 300, MinDPI: 150, ForceOCR: true, NoOrientation: true, NoDeskew: true}})
	off.noInvert = true
	var reference string
	if pdf, err := os.ReadFile(filepath.Join(dir, "linn.pdf")); err == nil {
		if resp := off.open(pdf); resp.Cause == "" {
			reference = off.page(0, 0).Result.Text
		}
	}
	for _, name := range files {
		pdf, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("reading %s: %v", name, err)
		}
		for _, e := range []*engine{off, on} {
			if resp := e.open(pdf); resp.Cause != "" {
				t.Fatalf("opening %s: %s", name, resp.Err)
			}
		}
		for i := range on.doc.NumPage() {
			for _, run := range []struct {
				label string
				e     *engine
			}{{"off", off}, {"on", on}} {
				cpu := threadCPU(t)
				resp := run.e.page(i, 0)
				cpu = threadCPU(t) - cpu
				if resp.Cause != "" {
					t.Fatalf("%s page %d: %s", name, i+1, resp.Err)
				}
				p := resp.Result
				words, credible, mean := pageStats(p)
				rate := "   -  "
				if reference != "" && (strings.Contains(p.Text, "LinnSequencer") || name == "cardinal.pdf") {
					rate = fmt.Sprintf("%5.1f%%", 100*cer(reference, p.Text))
				}
				t.Logf("%-22s p%d %-3s words %4d credible %4d mean %5.1f CER %s cpu %5dms (wall: render %5dms read %5dms)  "+
					"rot %3d skew %6.2f inv %-5v src %-5s %q",
					name, i+1, run.label, words, credible, mean, rate, cpu.Milliseconds(),
					p.RenderTime.Milliseconds(), p.RecogniseTime.Milliseconds(),
					p.Rotation, p.SkewDegrees, p.Inverted, p.TextSource, firstWords(p.Text, 6))
			}
		}
	}
}

// inProcessEngine is the child's engine, run in the test's own process.
func inProcessEngine(t testing.TB, cfg childConfig) *engine {
	t.Helper()
	flt, err := parseFaults("")
	if err != nil {
		t.Fatalf("parsing faults: %v", err)
	}
	e, err := newEngine(cfg, flt)
	if err != nil {
		t.Fatalf("starting engine: %v", err)
	}
	t.Cleanup(e.close)
	return e
}

// pageStats counts a page's words as the batch's validation does.
func pageStats(p PageResult) (words, credible int, mean float64) {
	r := recognition{words: p.Words}
	return len(p.Words), r.credible(), p.MeanConf
}

// firstWords returns the first n words of s, to see at a glance whether a
// page read the right way up.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// cer is the character error rate of got against ref: their edit
// distance over ref's length, with runs of whitespace taken as one space.
func cer(ref, got string) float64 {
	a := []rune(strings.Join(strings.Fields(ref), " "))
	b := []rune(strings.Join(strings.Fields(got), " "))
	if len(a) == 0 {
		return 0
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(b)]) / float64(len(a))
}

// TestMeasureSkew turns linn.pdf's page, rendered at 300 dpi, by small
// angles and reads it with deskew on and off, giving the CER against the
// upright page's reading: the figures behind minDeskewDegrees. It runs only
// with OCR_MEASURE=1:
//
//	OCR_MEASURE=1 OMP_THREAD_LIMIT=1 go test -run TestMeasureSkew -v ./ocr
func TestMeasureSkew(t *testing.T) {
	if os.Getenv("OCR_MEASURE") == "" {
		t.Skip("set OCR_MEASURE=1 to measure deskewing")
	}
	pdf, err := os.ReadFile(filepath.Join(corpusDir(t), "linn.pdf"))
	if err != nil {
		t.Fatalf("reading linn.pdf: %v", err)
	}
	on := inProcessEngine(t, childConfig{Policy: page.Policy{DPI: 300, MinDPI: 150, NoOrientation: true}})
	off := inProcessEngine(t, childConfig{Policy: page.Policy{DPI: 300, MinDPI: 150, NoOrientation: true, NoDeskew: true}})
	doc, err := fitz.NewFromMemory(pdf)
	if err != nil {
		t.Fatalf("opening linn.pdf: %v", err)
	}
	img, err := doc.ImageDPI(0, 300)
	doc.Close()
	if err != nil {
		t.Fatalf("rendering linn.pdf: %v", err)
	}
	var upright grayImage
	upright.fromRGBA(img)
	if resp := off.open(imagePDF(t, fromGray(&upright), 300)); resp.Cause != "" {
		t.Fatalf("opening the upright page: %s", resp.Err)
	}
	reference := off.page(0, 0).Result.Text
	for _, deg := range []float64{0.5, 1, 1.5, 2, 3, 5, 8, 12, 15} {
		turned, err := rotateGray(&upright, deg, 255)
		if err != nil {
			t.Fatalf("turning by %v: %v", deg, err)
		}
		page := imagePDF(t, fromGray(turned), 300)
		for _, run := range []struct {
			label string
			e     *engine
		}{{"off", off}, {"on", on}} {
			if resp := run.e.open(page); resp.Cause != "" {
				t.Fatalf("opening: %s", resp.Err)
			}
			resp := run.e.page(0, 0)
			if resp.Cause != "" {
				t.Fatalf("reading: %s", resp.Err)
			}
			p := resp.Result
			words, credible, mean := pageStats(p)
			t.Logf("turned %4.1f° deskew %-3s: skew %6.2f, CER %5.2f%%, words %d, credible %d, mean %.1f, read %dms",
				deg, run.label, p.SkewDegrees, 100*cer(reference, p.Text), words, credible, mean, p.RecogniseTime.Milliseconds())
		}
	}
}

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU(t *testing.T) time.Duration {
	t.Helper()
	const rusageThread = 1 // RUSAGE_THREAD, Linux only
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		t.Fatalf("reading thread CPU time: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
