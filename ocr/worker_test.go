package ocr

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/page"
)

// TestMain doubles the test binary as the worker child: StartWorker
// re-executes it with OCR_TEST_CHILD=1.
func TestMain(m *testing.M) {
	if os.Getenv("OCR_TEST_CHILD") == "1" {
		os.Exit(ServeMain())
	}
	os.Exit(m.Run())
}

// testConfig is a worker at a test-friendly DPI.
func testConfig(t testing.TB, dpi int, env ...string) WorkerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("finding test binary: %v", err)
	}
	return WorkerConfig{
		Command:     child.Command{Path: exe, Env: append([]string{"OCR_TEST_CHILD=1"}, env...)},
		Policy:      page.Policy{Lang: "eng", DPI: dpi, MinDPI: dpi, MaxPagePixels: 50e6},
		MemoryLimit: DefaultMemoryLimit,
	}
}

func startWorker(t testing.TB, cfg WorkerConfig) *Worker {
	t.Helper()
	w, err := StartWorker(context.Background(), cfg)
	if err != nil {
		t.Fatalf("StartWorker: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func wantCause(t *testing.T, err error, want Cause) *EngineError {
	t.Helper()
	var ee *EngineError
	if !errors.As(err, &ee) {
		t.Fatalf("error %v (%T), want an *EngineError with cause %q", err, err, want)
	}
	if ee.Cause != want {
		t.Fatalf("cause %q (%v), want %q", ee.Cause, ee, want)
	}
	return ee
}

func TestWorkerRecognisesText(t *testing.T) {
	w := startWorker(t, testConfig(t, 150))
	v := w.Versions()
	if v.Tesseract == "" || v.MuPDF == "" || v.Leptonica == "" {
		t.Errorf("versions incomplete: %+v", v)
	}

	ctx := context.Background()
	n, err := w.Open(ctx, participantPDF(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if n != 1 {
		t.Fatalf("Open = %d pages, want 1", n)
	}
	page, err := w.Page(ctx, 0, 0, time.Minute)
	if err != nil {
		t.Fatalf("Page: %v", err)
	}
	if !strings.Contains(page.Text, "Participant ID: P-123456") {
		// The text is synthetic, not medical data: show it.
		t.Errorf("text %q does not contain the participant line", page.Text)
	}
	if page.MeanConf <= 50 {
		t.Errorf("mean confidence %.1f, want > 50", page.MeanConf)
	}
	if page.DPI != 150 || page.Width != 600 || page.Height != 225 {
		t.Errorf("rendered %d×%d at %d dpi, want 600×225 at 150", page.Width, page.Height, page.DPI)
	}
	for _, word := range page.Words {
		b := word.Box
		if b[0] < 0 || b[1] < 0 || b[2] > page.Width || b[3] > page.Height || b[0] >= b[2] || b[1] >= b[3] {
			t.Errorf("word box %v outside the %d×%d page", b, page.Width, page.Height)
		}
	}
	if page.RenderTime <= 0 || page.RecogniseTime <= 0 {
		t.Errorf("times not recorded: render %v, recognise %v", page.RenderTime, page.RecogniseTime)
	}
	if m := w.Memory(); m.VmPeak == 0 || m.VmHWM == 0 {
		t.Errorf("memory usage not reported: %+v", m)
	}

	// The same worker serves a second document, and a page out of range
	// fails that page only.
	if _, err := w.Open(ctx, participantPDF(t)); err != nil {
		t.Fatalf("second Open: %v", err)
	}
	_, err = w.Page(ctx, 1, 0, time.Minute)
	wantCause(t, err, CauseRender)
	if !w.Alive() {
		t.Fatalf("worker died on a page out of range")
	}
	if _, err := w.Page(ctx, 0, 0, time.Minute); err != nil {
		t.Fatalf("Page after an error: %v", err)
	}
}

func TestWorkerLowersDPIToFitTheCap(t *testing.T) {
	cfg := testConfig(t, 150)
	cfg.Policy.MinDPI, cfg.Policy.MaxPagePixels = 72, 100_000 // the 4×1.5 in page is 135,000 px at 150 dpi
	w := startWorker(t, cfg)
	ctx := context.Background()
	if _, err := w.Open(ctx, participantPDF(t)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	page, err := w.Page(ctx, 0, 0, time.Minute)
	if err != nil {
		t.Fatalf("Page: %v", err)
	}
	if page.DPI >= 150 || page.DPI < 72 {
		t.Errorf("rendered at %d dpi, want lowered from 150 but not under 72", page.DPI)
	}
	if px := int64(page.Width) * int64(page.Height); px > cfg.Policy.MaxPagePixels {
		t.Errorf("rendered %d×%d = %d pixels, over the cap %d", page.Width, page.Height, px, cfg.Policy.MaxPagePixels)
	}

	cfg.Policy.MinDPI, cfg.Policy.MaxPagePixels = 120, 10_000
	w = startWorker(t, cfg)
	if _, err := w.Open(ctx, participantPDF(t)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	_, err = w.Page(ctx, 0, 0, time.Minute)
	wantCause(t, err, CauseTooLarge)
}

// TestWorkerRendersAtAdmissionsDPI: a page whose box is not whole points.
// Admission sizes it from its exact box and fits it at the minimum DPI,
// under a cap set to exactly that; the worker's own estimate from MuPDF's
// bound (truncated to whole points, plus one) puts it over the cap even at
// the minimum. Given admission's DPI, the worker renders the page at it,
// within the cap, so a page admission passed cannot fail in the worker.
func TestWorkerRendersAtAdmissionsDPI(t *testing.T) {
	// 601×226 px at 150 dpi: a page of 288.48×108.48 pt.
	img := textPage(t, []string{"Participant ID: P-123456"}, 601.5/150, 226.5/150, 150)
	pdf := imagePDF(t, img, 150)
	wPt, hPt := 601*72/150.0, 226*72/150.0
	cfg := testConfig(t, 300)
	cfg.Policy.MinDPI = 150
	cfg.Policy.MaxPagePixels = int64(page.Pixels(wPt, hPt, 150))
	dpi, ok := cfg.Policy.FitDPI(wPt, hPt)
	if !ok || dpi != 150 {
		t.Fatalf("admission's rule fits the page at %d, %t; want 150", dpi, ok)
	}
	w := startWorker(t, cfg)
	ctx := context.Background()
	if _, err := w.Open(ctx, pdf); err != nil {
		t.Fatalf("Open: %v", err)
	}

	_, err := w.Page(ctx, 0, 0, time.Minute)
	wantCause(t, err, CauseTooLarge)

	res, err := w.Page(ctx, 0, dpi, time.Minute)
	if err != nil {
		t.Fatalf("Page at admission's %d dpi: %v", dpi, err)
	}
	if res.DPI != dpi || res.Width != 601 || res.Height != 226 {
		t.Errorf("rendered %d×%d at %d dpi, want 601×226 at %d", res.Width, res.Height, res.DPI, dpi)
	}
	if !strings.Contains(res.Text, "P-123456") {
		t.Errorf("text %q does not hold the participant ID", res.Text)
	}

	// A resolution outside the policy is refused; one inside it that puts
	// MuPDF's page over the cap too, before anything is rendered.
	_, err = w.Page(ctx, 0, 301, time.Minute)
	wantCause(t, err, CauseRender)
	_, err = w.Page(ctx, 0, 300, time.Minute)
	wantCause(t, err, CauseTooLarge)
	if !w.Alive() {
		t.Errorf("worker died")
	}
}

func TestWorkerOpenRejects(t *testing.T) {
	w := startWorker(t, testConfig(t, 100))
	tests := []struct {
		name string
		pdf  []byte
	}{
		{name: "not a pdf", pdf: []byte("hello, world")},
		{name: "empty", pdf: nil},
		{name: "pdf header only", pdf: []byte("%PDF-1.4\n%%EOF\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.Open(context.Background(), tt.pdf)
			ee := wantCause(t, err, CauseOpen)
			if ee.Transient() {
				t.Errorf("an unopenable document is not worth a retry")
			}
			if !w.Alive() {
				t.Fatalf("worker died")
			}
		})
	}
	// A failed Open leaves no document behind.
	_, err := w.Page(context.Background(), 0, 0, time.Minute)
	wantCause(t, err, CauseRender)
}

// faultVictim returns the participant PDF made distinct by a trailing
// comment, which readers ignore, and the prefix of its SHA-256 that names
// it in FaultsEnv.
func faultVictim(t *testing.T, name string) (pdf []byte, key string) {
	pdf = append(participantPDF(t), "%"+name+"\n"...)
	sum := sha256.Sum256(pdf)
	return pdf, hex.EncodeToString(sum[:])[:12]
}

func TestWorkerFaults(t *testing.T) {
	crash, crashKey := faultVictim(t, "crash")
	hangs, hangKey := faultVictim(t, "hang")
	alloc, allocKey := faultVictim(t, "alloc")
	flaky, flakyKey := faultVictim(t, "flaky")
	huge, hugeKey := faultVictim(t, "huge")
	env := FaultsEnv + "=crash=" + crashKey + ";hang=" + hangKey + ";alloc=" + allocKey +
		";transient1=" + flakyKey + ";hugereply=" + hugeKey

	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		w := startWorker(t, testConfig(t, 100, env))
		if _, err := w.Open(context.Background(), crash); err != nil {
			t.Fatalf("Open: %v", err)
		}
		_, err := w.Page(context.Background(), 0, 0, time.Minute)
		ee := wantCause(t, err, CauseCrash)
		t.Logf("crash: %v", err)
		if !ee.Transient() || ee.Page != 0 {
			t.Errorf("crash error %+v: want transient, page 0", ee)
		}
		if w.Alive() {
			t.Errorf("Alive() after a crash")
		}
		if _, err := w.Page(context.Background(), 0, 0, time.Minute); !errors.Is(err, ErrNotAlive) {
			t.Errorf("Page on a dead worker: %v, want ErrNotAlive", err)
		}
	})

	t.Run("reply over the cap", func(t *testing.T) {
		t.Parallel()
		w := startWorker(t, testConfig(t, 100, env))
		if _, err := w.Open(context.Background(), huge); err != nil {
			t.Fatalf("Open: %v", err)
		}
		// The parent refuses the answer by its length, before decoding
		// it, and ends the child: a compromised engine cannot make the
		// parent allocate what it likes.
		_, err := w.Page(context.Background(), 0, 0, time.Minute)
		t.Logf("huge reply: %v", err)
		if ee := wantCause(t, err, CauseCrash); !strings.Contains(ee.Error(), "over the") {
			t.Errorf("error does not name the cap: %v", ee)
		}
		if w.Alive() {
			t.Errorf("Alive() after a reply over the cap")
		}
	})

	t.Run("hang", func(t *testing.T) {
		t.Parallel()
		w := startWorker(t, testConfig(t, 100, env))
		if _, err := w.Open(context.Background(), hangs); err != nil {
			t.Fatalf("Open: %v", err)
		}
		_, err := w.Page(context.Background(), 0, 0, 2*time.Second)
		if ee := wantCause(t, err, CauseTimeout); ee.Transient() {
			t.Errorf("a timeout is not retried")
		}
		if w.Alive() {
			t.Errorf("Alive() after the child was killed")
		}
	})

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		w := startWorker(t, testConfig(t, 100, env))
		if _, err := w.Open(context.Background(), hangs); err != nil {
			t.Fatalf("Open: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := w.Page(ctx, 0, 0, time.Minute)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Page after cancel: %v, want context.Canceled", err)
		}
		var ee *EngineError
		if errors.As(err, &ee) {
			t.Errorf("a cancelled page is not an engine failure: %v", ee)
		}
		if w.Alive() {
			t.Errorf("Alive() after cancel")
		}
	})

	t.Run("alloc", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig(t, 100, env)
		// An idle child already has about 1.3 GiB of address space, most
		// of it the Go runtime's reservations (see DefaultMemoryLimit), so
		// 2 GiB leaves the runaway allocation room to start.
		cfg.MemoryLimit = 2 << 30
		w := startWorker(t, cfg)
		if _, err := w.Open(context.Background(), alloc); err != nil {
			t.Fatalf("Open: %v", err)
		}
		_, err := w.Page(context.Background(), 0, 0, time.Minute)
		// The Go runtime's mmap fails under RLIMIT_AS and it dies with
		// "fatal error: runtime: out of memory".
		t.Logf("alloc: %v", err)
		if ee := wantCause(t, err, CauseOOM); !ee.Transient() {
			t.Errorf("oom is retried in a fresh worker")
		}
		if w.Alive() {
			t.Errorf("Alive() after running out of memory")
		}
	})

	t.Run("limit below the runtime's reservations", func(t *testing.T) {
		t.Parallel()
		cfg := testConfig(t, 100, env)
		cfg.MemoryLimit = 1 << 30
		w, err := StartWorker(context.Background(), cfg)
		if err != nil {
			// Tesseract's initialisation throws std::bad_alloc.
			t.Logf("start under 1 GiB: %v", err)
			wantCause(t, err, CauseOOM)
			return
		}
		// A runtime that reserves less would get this far.
		defer w.Close()
		if _, err := w.Open(context.Background(), alloc); err != nil {
			t.Fatalf("Open: %v", err)
		}
		_, err = w.Page(context.Background(), 0, 0, time.Minute)
		wantCause(t, err, CauseOOM)
	})

	t.Run("transient", func(t *testing.T) {
		t.Parallel()
		w := startWorker(t, testConfig(t, 100, env))
		_, err := w.Open(context.Background(), flaky)
		if ee := wantCause(t, err, CauseTransient); !ee.Transient() {
			t.Errorf("Transient() = false")
		}
		if n, err := w.Open(context.Background(), flaky); err != nil || n != 1 {
			t.Fatalf("second Open = %d, %v; want 1 page", n, err)
		}
		if _, err := w.Page(context.Background(), 0, 0, time.Minute); err != nil {
			t.Fatalf("Page: %v", err)
		}
	})
}

func TestWorkerCloseIsIdempotent(t *testing.T) {
	w, err := StartWorker(context.Background(), testConfig(t, 100))
	if err != nil {
		t.Fatalf("StartWorker: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if w.Alive() {
		t.Errorf("Alive() after Close")
	}
}

func TestStartWorkerFailures(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*WorkerConfig)
	}{
		{name: "missing language", mutate: func(c *WorkerConfig) { c.Policy.Lang = "xxx" }},
		{name: "invalid policy", mutate: func(c *WorkerConfig) { c.Policy.MinDPI = c.Policy.DPI + 1 }},
		{name: "bad fault spec", mutate: func(c *WorkerConfig) { c.Env = append(c.Env, FaultsEnv+"=explode=0123abcd") }},
		{name: "fault keyed by a name", mutate: func(c *WorkerConfig) { c.Env = append(c.Env, FaultsEnv+"=crash=R-1") }},
		{name: "fault key too short", mutate: func(c *WorkerConfig) { c.Env = append(c.Env, FaultsEnv+"=crash=0123abc") }},
		{name: "not a worker", mutate: func(c *WorkerConfig) { c.Path = "/bin/true" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, 100)
			tt.mutate(&cfg)
			w, err := StartWorker(context.Background(), cfg)
			if err == nil {
				_ = w.Close()
				t.Fatalf("StartWorker succeeded")
			}
		})
	}
}

// TestCorpusRejects opens the real corpus's files a worker must refuse.
// The files a worker must read are read, every page once at 300 DPI, by
// cmd/refbatch's TestEvalRealCorpus, which fails on a child that died
// (attempts_exhausted) or hung (timeout) on one of them.
func TestCorpusRejects(t *testing.T) {
	dir := corpusDir(t)
	w := startWorker(t, testConfig(t, 100))
	ctx := context.Background()

	for _, name := range []string{"libreoffice-writer-password.pdf", "invalid.pdf", "skew-encrypted.pdf", "unreadablemetadata.pdf"} {
		t.Run(name, func(t *testing.T) {
			pdf, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("reading %s: %v", name, err)
			}
			_, err = w.Open(ctx, pdf)
			wantCause(t, err, CauseOpen)
		})
	}

	t.Run("hugemono.pdf", func(t *testing.T) {
		pdf, err := os.ReadFile(filepath.Join(dir, "hugemono.pdf"))
		if err != nil {
			t.Fatalf("reading hugemono.pdf: %v", err)
		}
		cfg := testConfig(t, 300)
		cfg.Policy.MinDPI, cfg.Policy.MaxPagePixels = 150, 50e6
		// Rendering 1.2 Gpx would need several GiB: under the default
		// memory limit the child would die instead of answering, so a
		// page_too_large answer shows the page was refused unrendered.
		cfg.MemoryLimit = DefaultMemoryLimit
		w := startWorker(t, cfg)
		if _, err := w.Open(ctx, pdf); err != nil {
			t.Fatalf("Open: %v", err)
		}
		_, err = w.Page(ctx, 0, 0, time.Minute)
		if ee := wantCause(t, err, CauseTooLarge); ee.Transient() {
			t.Errorf("page_too_large is not retried")
		}
		if !w.Alive() {
			t.Errorf("worker died")
		}
		if m := w.Memory(); m.VmHWM > 512<<20 {
			t.Errorf("child resident peak %d MiB: the page was rendered", m.VmHWM>>20)
		}
	})
}

// BenchmarkPage renders and recognises a generated 300 dpi US Letter page of
// text through a worker.
func BenchmarkPage(b *testing.B) {
	cfg := testConfig(b, 300)
	w := startWorker(b, cfg)
	ctx := context.Background()
	if _, err := w.Open(ctx, letterPDF(b, 300)); err != nil {
		b.Fatalf("Open: %v", err)
	}
	var render, recognise time.Duration
	for b.Loop() {
		page, err := w.Page(ctx, 0, 0, 5*time.Minute)
		if err != nil {
			b.Fatalf("Page: %v", err)
		}
		render += page.RenderTime
		recognise += page.RecogniseTime
	}
	b.ReportMetric(float64(render.Milliseconds())/float64(b.N), "render-ms/op")
	b.ReportMetric(float64(recognise.Milliseconds())/float64(b.N), "recognise-ms/op")
	m := w.Memory()
	b.ReportMetric(float64(m.VmPeak>>20), "VmPeak-MiB")
	b.ReportMetric(float64(m.VmHWM>>20), "VmHWM-MiB")
}
