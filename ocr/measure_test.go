package ocr

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gen2brain/go-fitz"
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
		cfg.DPI, cfg.MinDPI = dpi, 150
		w := startWorker(t, cfg)
		if _, err := w.Open(ctx, pdf, name); err != nil {
			t.Fatalf("%s: Open: %v", name, err)
		}
		idle := w.Memory()
		page, err := w.Page(ctx, 0, 10*time.Minute)
		if err != nil {
			t.Fatalf("%s: Page: %v", name, err)
		}
		m := w.Memory()
		t.Logf("%s: %d×%d px (%.1f Mpx) at %d dpi, %d words; render %v, recognise %v; "+
			"VmPeak %d MiB (idle %d MiB), VmHWM %d MiB (idle %d MiB)",
			name, page.Width, page.Height, float64(page.Width*page.Height)/1e6, page.DPI, len(page.Words),
			page.RenderTime.Round(time.Millisecond), page.RecogniseTime.Round(time.Millisecond),
			m.VmPeak>>20, idle.VmPeak>>20, m.VmHWM>>20, idle.VmHWM>>20)
	}

	letter := letterPDF(t, 300)
	measure("letter 300 dpi", letter, 300)
	// The same text page drawn at 700 dpi: 5950×7700, 45.8 Mpx of text.
	measure("letter 700 dpi", letterPDF(t, 700), 700)
	// A text page at the cap: 7070×7070 px at 300 dpi.
	measure("square 50 Mpx", imagePDF(t, textPage(t, bodyLines(t, 120), 23.56, 23.56, 300), 300), 300)
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
	if _, err := w.Open(ctx, letter, "cmp"); err != nil {
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
	if err := os.WriteFile(pgmPath, e.grayPGM(img), 0o600); err != nil {
		t.Fatalf("writing page: %v", err)
	}
	const runs = 3
	var best, bestCLI time.Duration
	var words int
	for range runs {
		start := time.Now()
		page, err := w.Page(ctx, 0, 5*time.Minute)
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
