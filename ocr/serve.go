package ocr

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gen2brain/go-fitz"
	"github.com/otiai10/gosseract/v2"

	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/page"
)

// ServeMain is the worker child's entry point, called by the binary's
// hidden worker command: it keeps every cgo call on one thread, then
// serves the parent over fds 3 and 4 ([child.ServeMain], which turns off
// core dumps: a core file would hold page images). The configuration
// applies the memory limit before Tesseract is initialised. It returns
// the process exit code: 0 when the parent closed the request pipe, 1 on a
// failure, 2 when the pipes are missing (the command was run by hand).
func ServeMain() int {
	// Keep every cgo call on the main thread: MuPDF and Tesseract then
	// run on the process stack, and glibc does not open a malloc arena
	// for each thread the Go scheduler happens to use.
	runtime.LockOSThread()
	var eng *engine
	defer func() {
		if eng != nil {
			eng.close()
		}
	}()
	err := child.ServeMain(func(cfg childConfig) (hello, error) {
		var err error
		eng, err = setup(cfg)
		if err != nil {
			return hello{}, err
		}
		return hello{Versions: eng.versions}, nil
	}, func(req request) response { return eng.serve(req) })
	return child.ExitCode("refbatch worker", err)
}

// setup applies the configuration's memory limit to the calling process
// (RLIMIT_AS, when the limit is above 0) and initialises the engine, with
// the faults FaultsEnv injects.
func setup(cfg childConfig) (*engine, error) {
	if cfg.MemoryLimit > 0 {
		if err := child.LimitAddressSpace(cfg.MemoryLimit); err != nil {
			return nil, err
		}
	}
	flt, err := parseFaults(os.Getenv(FaultsEnv))
	if err != nil {
		return nil, err
	}
	return newEngine(cfg, flt)
}

// serve answers one request.
func (e *engine) serve(req request) response {
	var resp response
	switch req.Op {
	case opOpen:
		resp = e.open(req.PDF)
	case opPage:
		resp = e.page(req.Index, req.DPI)
	default:
		resp = response{Cause: CauseRender, Err: fmt.Sprintf("unknown request %d", req.Op)}
	}
	resp.Memory = readMemoryUsage()
	if e.faults.hugeReply(e.docKey) && req.Op == opPage {
		resp.Result.Text = strings.Repeat("x", maxReply)
	}
	return resp
}

// engine is the child's state: one Tesseract client for the child's life,
// at most one open document, and a page buffer reused across pages.
type engine struct {
	cfg      childConfig
	faults   *faults
	tess     *gosseract.Client
	osd      *osd // nil when orientation detection is off
	versions Versions
	// noInvert keeps white-on-black pages as they are; only the
	// measurements set it, to compare with the engine before the page
	// steps.
	noInvert bool

	doc    *fitz.Document
	docKey string // what the faults know doc by; "" without faults

	gray    grayImage    // the last page rendered, its buffer reused
	hue     huePlane     // its coloured ink (see huePlane), its buffer reused
	pixmaps pixmapMemory // the pixmap pages are drawn in, reused
	inks    inkBuffers   // the coverage step's buffers, reused page after page
	// passes counts the Tesseract recognition passes the engine ran, for
	// the measurements (TestMeasureEvalCPU).
	passes int
}

func newEngine(cfg childConfig, flt *faults) (*engine, error) {
	cfg.Policy = cfg.Policy.WithDefaults()
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	tess := gosseract.NewClient()
	if err := tess.SetLanguage(strings.Split(cfg.Lang, "+")...); err != nil {
		tess.Close()
		return nil, fmt.Errorf("setting Tesseract language %q: %w", cfg.Lang, err)
	}
	// Page segmentation: one column of text of varying sizes (PSM 4).
	// Referral pages are a letterhead, labelled fields, paragraphs and
	// small tables; automatic layout (PSM 3) splits the tables into
	// columns read one after another, and a single uniform block (PSM 6,
	// what the API falls back to) merges the letterhead and speckle into
	// the lines. On the evaluation corpus: PSM 6 5.7% CER, PSM 3 3.8%,
	// PSM 4 3.6% (2.4% with despeckling). It is set as a variable because
	// gosseract applies variables after initialising Tesseract, which
	// resets a mode set before it (SetPageSegMode).
	if err := tess.SetVariable("tessedit_pageseg_mode", strconv.Itoa(int(gosseract.PSM_SINGLE_COLUMN))); err != nil {
		tess.Close()
		return nil, fmt.Errorf("setting Tesseract page segmentation: %w", err)
	}
	// Tesseract's warnings would only push death evidence out of the
	// parent's stderr buffer.
	_ = tess.DisableOutput()

	e := &engine{cfg: cfg, faults: flt, tess: tess}
	if !cfg.NoOrientation {
		// Initialised with the engine rather than on the first page that
		// needs it, so a missing osd model fails the start, not a page.
		o, err := newOSD()
		if err != nil {
			tess.Close()
			return nil, err
		}
		e.osd = o
	}
	// gosseract initialises Tesseract lazily on the first recognition, so
	// recognise a blank image now: the hello then means "ready", and a
	// missing language fails the start, not the first document.
	if err := tess.SetImageFromBytes(blankPGM); err != nil {
		e.close()
		return nil, fmt.Errorf("initialising Tesseract: %w", err)
	}
	if _, err := tess.GetBoundingBoxesVerbose(); err != nil {
		e.close()
		return nil, fmt.Errorf("initialising Tesseract: %w", err)
	}
	e.versions = Versions{
		Tesseract: gosseract.Version(),
		// go-fitz exports the version of the MuPDF it bundles (its headers'
		// FZ_VERSION) as FzVersion.
		MuPDF:     fitz.FzVersion,
		Leptonica: leptonicaVersion(),
	}
	return e, nil
}

// forget makes Tesseract drop the last page's images and results, which
// it otherwise keeps until the next recognition: through the next page's
// render, when memory peaks, and through idle time. gosseract exposes no
// Clear, so recognise a tiny blank image instead; it costs about a
// millisecond.
func (e *engine) forget() {
	if err := e.tess.SetImageFromBytes(blankPGM); err == nil {
		_, _ = e.tess.GetBoundingBoxesVerbose()
	}
}

func (e *engine) close() {
	e.closeDoc()
	e.tess.Close()
	e.osd.close()
	e.pixmaps.free()
}

func (e *engine) closeDoc() {
	if e.doc != nil {
		e.doc.Close()
		e.doc = nil
	}
	e.docKey = ""
}

// storeLimit caps MuPDF's resource store per document: enough for the
// fonts and images one page uses, not a whole document's.
const storeLimit = 32 << 20

func (e *engine) open(pdf []byte) response {
	e.closeDoc()
	key := e.faults.key(pdf)
	if e.faults.openFails(key) {
		return response{Cause: CauseTransient, Err: "injected transient failure"}
	}
	// MuPDF caches decoded images in its store (go-fitz's default cap is
	// 256 MiB). Each page is rendered once, so the cache only grows a long
	// document's memory: a 150-page scan took a worker past 500 MiB.
	fitz.MaxStore = storeLimit
	doc, err := fitz.NewFromMemory(pdf)
	if err != nil {
		if doc != nil {
			// go-fitz returns its half-built document alongside the
			// error; closing it frees the MuPDF context.
			doc.Close()
		}
		return response{Cause: CauseOpen, Err: fmt.Sprintf("opening document: %v", err)}
	}
	n := doc.NumPage()
	if n <= 0 {
		doc.Close()
		return response{Cause: CauseOpen, Err: "opening document: no pages"}
	}
	e.doc, e.docKey = doc, key
	return response{Pages: n}
}

func (e *engine) page(index, dpi int) response {
	fail := func(c Cause, format string, args ...any) response {
		return response{Cause: c, Err: fmt.Sprintf(format, args...)}
	}
	if e.doc == nil {
		return fail(CauseRender, "no document open")
	}
	e.faults.beforePage(e.docKey)
	if index < 0 || index >= e.doc.NumPage() {
		return fail(CauseRender, "page %d out of range", index)
	}

	start := time.Now()
	bound, err := e.doc.Bound(index)
	if err != nil {
		return fail(CauseRender, "reading page size: %v", err)
	}
	p := e.cfg.Policy
	switch {
	case dpi == 0:
		// Bound truncates the page box to whole points; one more point on
		// each side keeps the rendered image, which MuPDF rounds outwards,
		// under the cap.
		var ok bool
		dpi, ok = p.FitDPI(float64(bound.Dx()+1), float64(bound.Dy()+1))
		if !ok {
			return fail(CauseTooLarge, "page is %d×%d pt: over %d pixels even at %d dpi",
				bound.Dx(), bound.Dy(), p.MaxPagePixels, p.MinDPI)
		}
	case dpi < p.MinDPI || dpi > p.DPI:
		return fail(CauseRender, "asked for %d dpi, outside the policy's %d to %d", dpi, p.MinDPI, p.DPI)
	case page.Pixels(float64(bound.Dx()), float64(bound.Dy()), dpi) > float64(p.MaxPagePixels):
		// The resolution came from admission, which sized the page from
		// its exact box; MuPDF's bound, truncated, is no larger than that.
		// Over the cap even so, MuPDF's page is not the page admission
		// measured, and rendering it could take any amount of memory.
		return fail(CauseTooLarge, "page is %d×%d pt: over %d pixels at %d dpi",
			bound.Dx(), bound.Dy(), p.MaxPagePixels, dpi)
	}
	res, cause, err := e.cascade(index, dpi, start)
	if err != nil {
		return fail(cause, "%v", err)
	}
	return response{Result: res}
}

// readAt renders page index at dpi and reads it; layer is the page's text
// layer, nil when there is none or it is not to be used. start is when
// the page's work began: RenderTime counts from it.
func (e *engine) readAt(index, dpi int, layer *textLayer, start time.Time) (PageResult, Cause, error) {
	e.hue.step = inkStep(dpi)
	hist, err := renderGray(e.doc, index, dpi, &e.gray, &e.hue, &e.pixmaps)
	if err != nil {
		return PageResult{}, CauseRender, fmt.Errorf("rendering at %d dpi: %w", dpi, err)
	}
	width, height := e.gray.w, e.gray.h
	res := PageResult{Index: index, DPI: dpi, Width: width, Height: height, TextSource: TextFromOCR,
		RenderTime: time.Since(start)}
	if width == 0 || height == 0 {
		return res, "", nil
	}

	start = time.Now()
	err = e.read(&res, hist, layer)
	e.forget()
	if err != nil {
		return res, CauseRender, err
	}
	res.RecogniseTime = time.Since(start)
	return res, "", nil
}

// blankPGM is a 32×32 white page.
var blankPGM = append([]byte("P5\n32 32\n255\n"), bytes.Repeat([]byte{0xff}, 32*32)...)

// readMemoryUsage reads the process's high-water marks from
// /proc/self/status; fields it cannot read stay 0.
func readMemoryUsage() MemoryUsage {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return MemoryUsage{}
	}
	var m MemoryUsage
	for line := range bytes.Lines(data) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "VmPeak":
			dst = &m.VmPeak
		case "VmHWM":
			dst = &m.VmHWM
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(value)), "kB")), 10, 64)
		if err == nil {
			*dst = kb << 10
		}
	}
	return m
}
