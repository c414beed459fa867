package admit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/report/outcome"
)

// Defaults of a Pool.
const (
	// DefaultInspectMemory is the resident memory an admission child may
	// use for one file. pdfcpu holds the whole object graph: a 60 MB scan
	// of 200 image pages needs about 140 MB, a file of 100,000 small
	// objects (7 MB) about 330 MB, while a scanned referral has a few
	// dozen objects.
	DefaultInspectMemory = 384 << 20
	// DefaultInspectTimeout is the CPU time the checks may take for a file
	// of a few KB; a larger file gets DefaultInspectTimeoutPerMiB more per
	// MiB. pdfcpu reads a 60 MB scan in 0.1 s and 100,000 objects in 2 s.
	// It is CPU time, not wall time, so that a loaded machine, which
	// starves the child, cannot make a sound file miss it.
	DefaultInspectTimeout       = 5 * time.Second
	DefaultInspectTimeoutPerMiB = time.Second
	// maxInspectReply caps a child's answer: a verdict and a DPI per page.
	maxInspectReply = 1 << 20
)

// PoolConfig says how a Pool starts its children.
type PoolConfig struct {
	// Path and Args re-execute the binary in its admission mode, which
	// calls ServeMain.
	Path string
	Args []string
	Env  []string
	// Memory is the resident memory a child may use while it inspects one
	// file; 0 means DefaultInspectMemory.
	Memory int64
	// Timeout and TimeoutPerMiB set a file's deadline: Timeout plus
	// TimeoutPerMiB for each MiB of the file. 0 means the defaults.
	Timeout, TimeoutPerMiB time.Duration
	// Children is how many files may be inspected at once, each in a
	// child of its own; 0 means 1.
	Children int
}

// Pool inspects PDF bytes in supervised child processes, one file per
// child at a time. Children are started when needed and kept for the next
// file; a child that failed is replaced. It is safe for concurrent use.
type Pool struct {
	cfg   PoolConfig
	slots chan struct{} // one per child that may run

	mu     sync.Mutex
	idle   []*child.Process
	closed bool
	// started counts the children started (a test checks the pool
	// never starts more than it may run at once).
	started int
}

// NewPool returns a pool that starts its children with cfg.
func NewPool(cfg PoolConfig) *Pool {
	if cfg.Memory <= 0 {
		cfg.Memory = DefaultInspectMemory
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultInspectTimeout
	}
	if cfg.TimeoutPerMiB <= 0 {
		cfg.TimeoutPerMiB = DefaultInspectTimeoutPerMiB
	}
	if cfg.Children <= 0 {
		cfg.Children = 1
	}
	return &Pool{cfg: cfg, slots: make(chan struct{}, cfg.Children)}
}

// budget is the CPU time the pool lets a child spend on a file of size
// bytes.
func (p *Pool) budget(size int64) time.Duration {
	return p.cfg.Timeout + time.Duration(float64(p.cfg.TimeoutPerMiB)*float64(size)/(1<<20))
}

// Inspect runs checks 5 to 9 on data in a child. A child that overruns
// its CPU budget, or runs out of memory, rejects the file at once as
// unparseable_pdf: the same bytes would do the same again. A child that
// crashes, or overruns the wall-clock backstop while starved of CPU, is
// replaced and the file tried once more; a second death rejects it too.
func (p *Pool) Inspect(ctx context.Context, data []byte, lim Limits) ([]int, error) {
	budget := p.budget(int64(len(data)))
	var first *child.Death
	for try := 1; ; try++ {
		rep, err := p.inspectOnce(ctx, budget, data, lim)
		var d *child.Death
		switch {
		case err == nil && rep.Reason != "":
			return nil, &Rejection{Reason: rep.Reason, Detail: rep.Detail}
		case err == nil:
			return rep.PageDPI, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case !errors.As(err, &d):
			return nil, err
		case try == 1 && !d.CPU && d.Cause != child.CauseOOM:
			first = d
			continue
		}
		return nil, unparseable(first, d, budget)
	}
}

// unparseable is the rejection of a file whose inspection killed a child
// (first is nil) or two.
func unparseable(first, second *child.Death, budget time.Duration) *Rejection {
	what := func(d *child.Death) string {
		switch {
		case d.CPU:
			return fmt.Sprintf("used more than %v of CPU time", budget.Round(time.Millisecond))
		case d.Cause == child.CauseTimeout:
			return "did not finish in time"
		}
		switch d.Cause {
		case child.CauseOOM:
			return "ran out of memory"
		case child.CauseProtocol:
			return "broke the protocol"
		}
		if d.Signal != "" {
			return "crashed (" + d.Signal + ")"
		}
		return "crashed"
	}
	switch {
	case first == nil:
		return reject(outcome.UnparseablePDF, "the PDF checks %s", what(second))
	case first.Cause == second.Cause && first.CPU == second.CPU:
		return reject(outcome.UnparseablePDF, "the PDF checks %s twice", what(second))
	}
	return reject(outcome.UnparseablePDF, "the PDF checks %s, then %s", what(first), what(second))
}

// inspectOnce sends data to an idle child (starting one if none is idle)
// and puts the child back if it survived.
func (p *Pool) inspectOnce(ctx context.Context, budget time.Duration, data []byte, lim Limits) (inspectReply, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return inspectReply{}, ctx.Err()
	}
	defer func() { <-p.slots }()
	c, err := p.take(ctx)
	if err != nil {
		return inspectReply{}, err
	}
	var rep inspectReply
	err = c.CallCPU(ctx, child.WallFactor*budget, budget, inspectRequest{Data: data, Limits: lim, Memory: p.cfg.Memory}, &rep)
	p.give(c)
	return rep, err
}

func (p *Pool) take(ctx context.Context) (*child.Process, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("admission pool is closed")
	}
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if c.Alive() {
			p.mu.Unlock()
			return c, nil
		}
		c.Close()
	}
	p.started++
	p.mu.Unlock()
	c, err := child.Start(ctx, child.Config{Path: p.cfg.Path, Args: p.cfg.Args, Env: p.cfg.Env, MaxReply: maxInspectReply},
		inspectSetup{AddressSpace: child.AddressSpace, MaxStack: child.MaxStack}, &inspectHello{})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("starting an admission child: %w", err)
	}
	return c, nil
}

func (p *Pool) give(c *child.Process) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !c.Alive() {
		c.Close()
		return
	}
	p.idle = append(p.idle, c)
}

// Close ends the idle children; a child in use ends when its call returns.
func (p *Pool) Close() error {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
	return nil
}

// The messages between a Pool and its children.

type inspectSetup struct {
	AddressSpace int64
	MaxStack     int
}

type inspectHello struct{ Pid int }

type inspectRequest struct {
	Data   []byte
	Limits Limits
	Memory int64 // resident cap while this file is inspected
}

type inspectReply struct {
	PageDPI []int
	Reason  outcome.Reason // a Rejection's, "" when admitted
	Detail  string
}

// ServeMain is the admission child's entry point, called by the binary's
// hidden admission command. It returns the process exit code: 0 when the
// parent closed the request pipe, 1 on a failure, 2 when the command was
// run by hand.
func ServeMain() int {
	err := child.ServeMain(serveSetup, serveInspect)
	switch {
	case errors.Is(err, child.ErrNotChild):
		fmt.Fprintln(os.Stderr, "refbatch admission:", err)
		return 2
	case err != nil:
		fmt.Fprintf(os.Stderr, "refbatch admission: %v\n", err)
		return 1
	}
	return 0
}

// residentCap is the cap WatchRSS enforces, set per request.
var residentCap struct {
	sync.Mutex
	n int64
}

func serveSetup(s inspectSetup) (inspectHello, error) {
	if s.AddressSpace > 0 {
		if err := child.LimitAddressSpace(s.AddressSpace); err != nil {
			return inspectHello{}, err
		}
	}
	if s.MaxStack > 0 {
		child.LimitStack(s.MaxStack)
	}
	child.WatchRSS(10*time.Millisecond, func() int64 {
		residentCap.Lock()
		defer residentCap.Unlock()
		return residentCap.n
	})
	return inspectHello{Pid: os.Getpid()}, nil
}

func serveInspect(req inspectRequest) inspectReply {
	residentCap.Lock()
	residentCap.n = req.Memory
	residentCap.Unlock()
	// The runtime collects and returns memory harder as the heap nears
	// this, so that garbage does not count against the cap.
	debug.SetMemoryLimit(req.Memory / 4 * 3)
	dpis, err := inspect(req.Data, req.Limits)
	// The next file starts from a small heap, so that its cap measures
	// what it needs, not what this one left behind.
	if child.ResidentBytes() > 64<<20 {
		debug.FreeOSMemory()
	}
	var r *Rejection
	switch {
	case errors.As(err, &r):
		return inspectReply{Reason: r.Reason, Detail: r.Detail}
	case err != nil:
		return inspectReply{Reason: outcome.MalformedPDF, Detail: "inspection failed"}
	}
	return inspectReply{PageDPI: dpis}
}
