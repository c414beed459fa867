package ocr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/page"
)

// maxReply caps a worker's answer. A page's words and text are a few
// hundred KB even for a dense 50 Mpx page; anything near the cap is a
// child that is no longer answering in good faith, and the parent refuses
// it before decoding a byte.
const maxReply = 32 << 20

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
	// Command re-executes the binary in worker mode, for example
	// os.Executable() and []string{"worker"}. Its Env is appended to the
	// inherited environment after OMP_THREAD_LIMIT=1 and
	// MALLOC_ARENA_MAX=1, so it can override them.
	child.Command
	// Policy is how the child renders and recognises pages; its zero
	// fields are the defaults (page.Policy.WithDefaults).
	Policy page.Policy
	// MemoryLimit is the child's address-space limit (RLIMIT_AS) in bytes,
	// applied before Tesseract is initialised; 0 means none. See
	// DefaultMemoryLimit.
	MemoryLimit int64
	// StartTimeout bounds StartWorker; 0 means 30 s.
	StartTimeout time.Duration
	// OpenTimeout bounds Open; 0 means only the context does. An Open that
	// overruns it fails with CauseTimeout.
	OpenTimeout time.Duration
}

// Worker is the parent's handle on one worker child: a child.Pool of one,
// whose child it leases for its life, since the child keeps state between
// calls (Tesseract, initialised once, and the open document). The pool
// starts, supervises and describes the child; a call is never tried
// again in another child, because a page that kills the child is the
// journal's to retry, as an attempt at its document. A Worker serves one
// request at a time and is not safe for concurrent use, except for Alive,
// Versions, Memory and Close.
type Worker struct {
	children *child.Pool
	proc     *child.Lease // the pool's one child, leased for the worker's life
	versions Versions
	// openTimeout is the one setting the parent enforces itself; the rest
	// of WorkerConfig lives in the child.
	openTimeout time.Duration

	mu     sync.Mutex
	memory MemoryUsage
}

// StartWorker starts a worker child, sends it cfg and waits for its hello,
// which says Tesseract is initialised. A child that dies or does not answer
// within cfg.StartTimeout is killed and reported as an *EngineError.
func StartWorker(ctx context.Context, cfg WorkerConfig) (*Worker, error) {
	if cfg.Path == "" {
		return nil, errors.New("starting OCR worker: no executable path")
	}
	cfg.Policy = cfg.Policy.WithDefaults()
	if err := cfg.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("starting OCR worker: %w", err)
	}
	cmd := cfg.Command
	cmd.Env = append(append([]string(nil), childEnv...), cfg.Env...)
	children := child.NewPool(child.PoolConfig{
		Command:      cmd,
		Name:         "OCR worker",
		Setup:        childConfig{Policy: cfg.Policy, MemoryLimit: cfg.MemoryLimit},
		MaxReply:     maxReply,
		StartTimeout: cfg.StartTimeout,
	})
	var h hello
	lease, err := children.Take(ctx, &h)
	if err != nil {
		children.Close()
		var d *child.Death
		if errors.As(err, &d) || ctx.Err() != nil {
			return nil, fmt.Errorf("starting OCR worker: %w", engineError(err, -1))
		}
		return nil, err // the pool's, which names the OCR worker
	}
	return &Worker{children: children, proc: lease, versions: h.Versions, openTimeout: cfg.OpenTimeout}, nil
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
func (w *Worker) Alive() bool { return w.proc.Alive() }

// Open sends the document's bytes to the child, which opens them with
// MuPDF, and returns the page count. A document that cannot be opened,
// needs a password or has no pages fails with CauseOpen.
func (w *Worker) Open(ctx context.Context, pdf []byte) (pages int, err error) {
	resp, err := w.call(ctx, request{Op: opOpen, PDF: pdf}, w.openTimeout, -1)
	if err != nil {
		return 0, err
	}
	return resp.Pages, nil
}

// Page renders and recognises page index (from 0) of the open document at
// dpi, the resolution admission gave the page (page.Policy.FitDPI on the
// page's exact size); with dpi 0 the child fits the page to the policy
// from MuPDF's bound of the page, which is truncated to whole points.
// A dpi outside the policy's range fails with CauseRender; a page larger
// than the pixel cap at dpi fails with CauseTooLarge.
//
// If the child does not answer within timeout (0: no limit) it is killed
// and Page returns an *EngineError with CauseTimeout. If ctx ends first the
// child is killed too, and the error wraps ctx.Err(): the page was not at
// fault.
func (w *Worker) Page(ctx context.Context, index, dpi int, timeout time.Duration) (PageResult, error) {
	resp, err := w.call(ctx, request{Op: opPage, Index: index, DPI: dpi}, timeout, index)
	if err != nil {
		return PageResult{}, err
	}
	return resp.Result, nil
}

// Close asks the child to exit by closing its request pipe, kills it after
// a short grace and reaps it. It is safe to call more than once and after
// the child died.
func (w *Worker) Close() error {
	w.proc.Release()
	return w.children.Close()
}

// call sends req and returns the child's answer, turning a failure the
// child reported, or its death, into an *EngineError.
func (w *Worker) call(ctx context.Context, req request, timeout time.Duration, page int) (response, error) {
	if !w.Alive() {
		return response{}, ErrNotAlive
	}
	var resp response
	if err := w.proc.Call(ctx, child.Limits{Wall: timeout}, req, &resp); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			if page >= 0 {
				return response{}, fmt.Errorf("ocr page %d: %w", page, err)
			}
			return response{}, fmt.Errorf("ocr: %w", err)
		}
		return response{}, engineError(err, page)
	}
	w.mu.Lock()
	w.memory = resp.Memory
	w.mu.Unlock()
	if resp.Cause != "" {
		return response{}, &EngineError{Cause: resp.Cause, Page: page, Err: errors.New(resp.Err)}
	}
	return resp, nil
}

// engineError turns a child's death (a *child.Failure's, or one at its
// start) into an *EngineError; other errors pass through.
func engineError(err error, page int) error {
	var d *child.Death
	if !errors.As(err, &d) {
		return err
	}
	cause := CauseCrash
	switch d.Cause {
	case child.CauseOOM:
		cause = CauseOOM
	case child.CauseTimeout:
		cause = CauseTimeout
	}
	return &EngineError{Cause: cause, Page: page, Err: d}
}
