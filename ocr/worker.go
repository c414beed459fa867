package ocr

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
)

const (
	// defaultStartTimeout bounds the child's start-up: exec plus Tesseract
	// initialisation, a fraction of a second when healthy.
	defaultStartTimeout = 30 * time.Second
	// closeGrace is how long Close waits for the child to exit by itself.
	closeGrace = 2 * time.Second
	// stderrTail is how much of the child's stderr is kept for classifying
	// its death.
	stderrTail = 4 << 10
)

// childEnv is added to every child's environment, before WorkerConfig.Env.
var childEnv = []string{
	// Tesseract's OpenMP threads made a page about 2.5 times slower on
	// this kind of machine; parallelism comes from the pool of children.
	"OMP_THREAD_LIMIT=1",
	// glibc reserves 64 MiB of address space for each thread's malloc
	// arena. RLIMIT_AS counts reservations, and the child's native work
	// runs on one thread, so one arena saves about 250 MiB of the limit.
	"MALLOC_ARENA_MAX=1",
}

// WorkerConfig says how to start a worker child and how it renders pages.
type WorkerConfig struct {
	// Path and Args re-execute the binary in worker mode, for example
	// os.Executable() and []string{"worker"}.
	Path string
	Args []string
	// Env is appended to the inherited environment after
	// OMP_THREAD_LIMIT=1 and MALLOC_ARENA_MAX=1, so it can override them.
	Env []string
	// Lang is Tesseract's language, "eng" when empty; several are joined
	// with "+".
	Lang string
	// MemoryLimit is the child's address-space limit (RLIMIT_AS) in bytes,
	// applied before Tesseract is initialised; 0 means none. See
	// DefaultMemoryLimit.
	MemoryLimit int64
	// DPI is the render resolution. A page over MaxPagePixels is rendered at
	// a lower DPI, down to MinDPI (DPI when 0); still over it, the page
	// fails with CauseTooLarge. MaxPagePixels 0 means no cap.
	DPI, MinDPI   int
	MaxPagePixels int64
	// ForceOCR recognises every page, even one whose own text layer a
	// quick recognition confirms; see the package documentation.
	ForceOCR bool
	// NoOrientation turns off the detection and correction of pages
	// turned by 90, 180 or 270 degrees, and NoDeskew the straightening of
	// slightly skewed ones. Both steps are on by default (the zero value).
	NoOrientation bool
	NoDeskew      bool
	// NoDespeckle keeps the specks (marks a few pixels across) that are
	// otherwise painted over before recognition.
	NoDespeckle bool
	// StartTimeout bounds StartWorker; 0 means 30 s.
	StartTimeout time.Duration
	// OpenTimeout bounds Open; 0 means only the context does. An Open that
	// overruns it fails with CauseTimeout.
	OpenTimeout time.Duration
}

// Worker is the parent's handle on one worker child. It serves one request
// at a time and is not safe for concurrent use, except for Alive, Versions,
// Memory and Close.
type Worker struct {
	cmd      *exec.Cmd
	requests *os.File // parent's end of fd 3
	replies  *os.File // parent's end of fd 4
	enc      *gob.Encoder
	dec      *gob.Decoder
	stderr   *stderrLog
	versions Versions
	// openTimeout is the one setting the parent enforces itself; the rest
	// of WorkerConfig lives in the child.
	openTimeout time.Duration

	exited chan struct{} // closed once the child is reaped

	mu       sync.Mutex
	killedBy string // why the parent killed the child: "timeout", "cancel", "close"; "" if it did not
	memory   MemoryUsage

	closeOnce sync.Once
}

// StartWorker starts a worker child, sends it cfg and waits for its hello,
// which says Tesseract is initialised. A child that dies or does not answer
// within cfg.StartTimeout is killed and reported as an *EngineError.
func StartWorker(ctx context.Context, cfg WorkerConfig) (*Worker, error) {
	if cfg.Path == "" {
		return nil, errors.New("starting OCR worker: no executable path")
	}
	if cfg.DPI <= 0 {
		return nil, fmt.Errorf("starting OCR worker: DPI %d is not positive", cfg.DPI)
	}
	if cfg.MinDPI <= 0 || cfg.MinDPI > cfg.DPI {
		cfg.MinDPI = cfg.DPI
	}
	if cfg.Lang == "" {
		cfg.Lang = "eng"
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = defaultStartTimeout
	}

	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting OCR worker: %w", err)
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, fmt.Errorf("starting OCR worker: %w", err)
	}

	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env = append(append(os.Environ(), childEnv...), cfg.Env...)
	cmd.ExtraFiles = []*os.File{reqR, respW} // fd 3 and fd 4 in the child
	w := &Worker{
		cmd:      cmd,
		requests: reqW,
		replies:  respR,
		enc:      gob.NewEncoder(reqW),
		dec:      gob.NewDecoder(respR),
		stderr:   &stderrLog{max: stderrTail},
		exited:   make(chan struct{}),

		openTimeout: cfg.OpenTimeout,
	}
	cmd.Stderr = w.stderr // stdout stays nil: /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A group of its own, so a kill reaches anything it started.
		Setpgid: true,
		// If the parent dies, so does the child, even mid-page. Linux sends
		// it when the parent thread that started the child exits; the Go
		// runtime ends a thread only when a goroutine exits while locked
		// to it, which the parent does not do.
		Pdeathsig: syscall.SIGKILL,
	}
	// Should anything inherit the child's stderr, do not wait on it forever.
	cmd.WaitDelay = time.Second

	err = cmd.Start()
	// The child holds its own copies now; the parent closing its copies of
	// the child's ends is what turns the child's death into EOF.
	reqR.Close()
	respW.Close()
	if err != nil {
		reqW.Close()
		respR.Close()
		return nil, fmt.Errorf("starting OCR worker: %w", err)
	}
	go func() {
		_ = cmd.Wait()
		close(w.exited)
	}()

	var h hello
	err = w.roundTrip(ctx, cfg.StartTimeout, -1,
		func() error {
			return w.enc.Encode(childConfig{
				Lang: cfg.Lang, MemoryLimit: cfg.MemoryLimit,
				DPI: cfg.DPI, MinDPI: cfg.MinDPI, MaxPagePixels: cfg.MaxPagePixels,
				ForceOCR: cfg.ForceOCR, NoOrientation: cfg.NoOrientation, NoDeskew: cfg.NoDeskew, NoDespeckle: cfg.NoDespeckle,
			})
		},
		func() error { return w.dec.Decode(&h) })
	if err == nil && h.Err != "" {
		err = fmt.Errorf("worker failed to start: %s", h.Err)
	}
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("starting OCR worker: %w", err)
	}
	w.versions = h.Versions
	return w, nil
}

// Versions returns the engine versions the child reported at start.
func (w *Worker) Versions() Versions { return w.versions }

// Memory returns the child's memory high-water marks as of its last answer.
func (w *Worker) Memory() MemoryUsage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.memory
}

// Alive reports whether the child can take requests. It is false once the
// child died or was killed; the caller then starts a new Worker.
func (w *Worker) Alive() bool {
	select {
	case <-w.exited:
		return false
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.killedBy == ""
}

// Open sends the document's bytes to the child, which opens them with
// MuPDF, and returns the page count. tag is an opaque label (a source ID)
// used only for fault injection. A document that cannot be opened, needs a
// password or has no pages fails with CauseOpen.
func (w *Worker) Open(ctx context.Context, pdf []byte, tag string) (pages int, err error) {
	resp, err := w.call(ctx, request{Op: opOpen, PDF: pdf, Tag: tag}, w.openTimeout, -1)
	if err != nil {
		return 0, err
	}
	return resp.Pages, nil
}

// Page renders and recognises page index (from 0) of the open document.
// If the child does not answer within timeout (0: no limit) it is killed
// and Page returns an *EngineError with CauseTimeout. If ctx ends first the
// child is killed too, and the error wraps ctx.Err(): the page was not at
// fault.
func (w *Worker) Page(ctx context.Context, index int, timeout time.Duration) (PageResult, error) {
	resp, err := w.call(ctx, request{Op: opPage, Index: index}, timeout, index)
	if err != nil {
		return PageResult{}, err
	}
	return resp.Result, nil
}

// Close asks the child to exit by closing its request pipe, kills it after
// a short grace and reaps it. It is safe to call more than once and after
// the child died.
func (w *Worker) Close() error {
	w.closeOnce.Do(func() {
		w.requests.Close()
		select {
		case <-w.exited:
		case <-time.After(closeGrace):
			w.kill("close")
			<-w.exited
		}
		w.replies.Close()
	})
	return nil
}

// call sends req and returns the child's answer, turning a failure the
// child reported into an *EngineError.
func (w *Worker) call(ctx context.Context, req request, timeout time.Duration, page int) (response, error) {
	if !w.Alive() {
		return response{}, ErrNotAlive
	}
	if err := ctx.Err(); err != nil {
		// Not sent, so there is nothing to kill the child for.
		return response{}, fmt.Errorf("ocr: %w", err)
	}
	var resp response
	err := w.roundTrip(ctx, timeout, page,
		func() error { return w.enc.Encode(req) },
		func() error { return w.dec.Decode(&resp) })
	if err != nil {
		return response{}, err
	}
	w.mu.Lock()
	w.memory = resp.Memory
	w.mu.Unlock()
	if resp.Cause != "" {
		return response{}, &EngineError{Cause: resp.Cause, Page: page, Err: errors.New(resp.Err)}
	}
	return resp, nil
}

// roundTrip runs send then receive against the child while watching the
// deadline, ctx and the child's death. The pipes block, so the exchange runs
// in a goroutine that killing the child always ends.
func (w *Worker) roundTrip(ctx context.Context, timeout time.Duration, page int, send, receive func() error) error {
	done := make(chan error, 1)
	go func() {
		if err := send(); err != nil {
			done <- err
			return
		}
		done <- receive()
	}()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		// A broken pipe or EOF means the child is gone or going. Anything
		// else is a broken protocol: end the child all the same.
		select {
		case <-w.exited:
		case <-time.After(closeGrace):
			w.kill("protocol")
			<-w.exited
		}
		return w.deathError(page)
	case <-deadline:
		w.kill("timeout")
		<-w.exited
		<-done
		return &EngineError{Cause: CauseTimeout, Page: page, Err: fmt.Errorf("no answer within %v; worker killed", timeout)}
	case <-ctx.Done():
		w.kill("cancel")
		<-w.exited
		<-done
		if page >= 0 {
			return fmt.Errorf("ocr page %d: %w", page, ctx.Err())
		}
		return fmt.Errorf("ocr: %w", ctx.Err())
	}
}

// kill ends the child's process group with SIGKILL and records why, so the
// death is not mistaken for the kernel's OOM killer.
func (w *Worker) kill(why string) {
	w.mu.Lock()
	if w.killedBy == "" {
		w.killedBy = why
	}
	w.mu.Unlock()
	select {
	case <-w.exited:
		// Reaped: the group ID may already belong to someone else.
		return
	default:
	}
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
}

// deathError classifies the reaped child's death. Call it only after
// w.exited is closed.
func (w *Worker) deathError(page int) error {
	w.mu.Lock()
	killedBy := w.killedBy
	w.mu.Unlock()
	state := w.cmd.ProcessState
	oom, sig := w.stderr.evidence()
	status, _ := state.Sys().(syscall.WaitStatus)
	cause := classifyDeath(status, killedBy, oom)
	msg := "worker died: " + state.String()
	if sig != "" {
		msg += " (" + sig + ")"
	}
	if killedBy != "" && killedBy != "timeout" {
		msg += " after the parent killed it (" + killedBy + ")"
	}
	return &EngineError{Cause: cause, Page: page, Err: errors.New(msg)}
}

// oomEvidence matches what the child's libraries print when an allocation
// fails: the Go runtime ("fatal error: runtime: out of memory"), glibc's
// strerror (ENOMEM), C++ (std::bad_alloc), MuPDF ("malloc (N bytes)
// failed"), Leptonica ("pix_malloc fail") and the race detector's runtime
// ("failed to allocate ... (errno: 12)").
var oomEvidence = regexp.MustCompile(`out of memory|[Cc]annot allocate memory|bad_alloc|(?:m|c|re)alloc \([^)]*\) failed|malloc fail|failed to allocate`)

// classifyDeath names the cause of a child's death from its wait status,
// why the parent killed it ("" if it did not) and whether its stderr showed
// memory exhaustion. The parent's kill at a deadline is a timeout; then
// any sign of memory exhaustion is oom; a kill by the parent for another
// reason (a broken protocol, Close) is a crash; a SIGKILL the parent did
// not send is the kernel's OOM killer; anything else (a fatal signal, the
// Go runtime's report of one, an unexpected exit) is a crash.
func classifyDeath(status syscall.WaitStatus, killedBy string, oomSeen bool) Cause {
	switch {
	case killedBy == "timeout":
		return CauseTimeout
	case oomSeen:
		return CauseOOM
	case killedBy != "":
		return CauseCrash
	case status.Signaled() && status.Signal() == syscall.SIGKILL:
		return CauseOOM
	}
	return CauseCrash
}

// goSignal finds the signal the Go runtime reports when it dies of one
// ("SIGSEGV: segmentation violation", "[signal SIGSEGV: ...]"); a fatal
// signal inside cgo code ends the process through the runtime, with exit
// status 2, not through the signal.
var goSignal = regexp.MustCompile(`(?m)(?:^|\[signal )(SIG[A-Z]+):`)

// runtimeSignal returns the signal name the Go runtime reported, or "". Only
// the name is taken from stderr, never free text.
func runtimeSignal(stderr []byte) string {
	m := goSignal.FindSubmatch(stderr)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// stderrLog receives the child's stderr. It keeps the last max bytes and
// watches the stream as it passes for evidence of how the child died: the Go
// runtime prints "fatal error: runtime: out of memory" first and then pages
// of goroutine traces, so the evidence is rarely in the tail.
type stderrLog struct {
	mu     sync.Mutex
	max    int
	tail   []byte
	oom    bool   // oomEvidence was seen
	signal string // the first signal the Go runtime reported
}

// scanOverlap is how much of the previous write is scanned again with the
// next, so that evidence split across two writes is still found.
const scanOverlap = 128

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	window := append(l.tail[max(0, len(l.tail)-scanOverlap):len(l.tail):len(l.tail)], p...)
	if oomEvidence.Match(window) {
		l.oom = true
	}
	if l.signal == "" {
		l.signal = runtimeSignal(window)
	}

	n := len(p)
	if len(p) >= l.max {
		l.tail = append(l.tail[:0], p[len(p)-l.max:]...)
		return n, nil
	}
	if over := len(l.tail) + len(p) - l.max; over > 0 {
		l.tail = append(l.tail[:0], l.tail[over:]...)
	}
	l.tail = append(l.tail, p...)
	return n, nil
}

// evidence returns what the stream showed: out-of-memory evidence and the
// signal the Go runtime reported ("" if none).
func (l *stderrLog) evidence() (oom bool, signal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.oom, l.signal
}

// Bytes returns a copy of the kept tail.
func (l *stderrLog) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.tail...)
}
