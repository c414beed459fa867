package child

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

// PoolConfig says how a Pool starts its children.
type PoolConfig struct {
	Command
	// Name is what the children are called in errors, for example "an
	// admission child".
	Name string
	// Setup is the value every child is started with (see Start).
	Setup any
	// Children is how many calls may run at once, each in a child of its
	// own; 0 means 1.
	Children int
	// MaxReply is the smallest reply cap a child is started with; a call
	// may ask for more (Limits.Reply). 0 means DefaultMaxReply.
	MaxReply int64
	// StartTimeout bounds a child's start, hello included; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
}

// Limits bound one call of a Pool.
type Limits struct {
	// CPU is the CPU time the call may take (0: no limit); the wall-clock
	// backstop, for a child that waits rather than computes, is
	// WallFactor times it. CPU time, not wall time, so that a loaded
	// machine, which starves the child, cannot make a sound call miss it.
	CPU time.Duration
	// Wall is the call's wall-clock deadline, for a caller whose limit is
	// wall time (the OCR worker's page timeout); 0 means WallFactor times
	// CPU, and no deadline when CPU is 0 too.
	Wall time.Duration
	// Reply is the largest reply the call may need; a child started with
	// a smaller cap is replaced by one with this cap first. A Lease's
	// child keeps the cap it was started with.
	Reply int64
}

// wall is the wall-clock deadline of a call under l.
func (l Limits) wall() time.Duration {
	if l.Wall > 0 {
		return l.Wall
	}
	return WallFactor * l.CPU
}

// Budget is what a parser child may use on one call: Memory bytes of
// resident memory (the child enforces it: BeginCall), and CPU time,
// Timeout plus TimeoutPerMiB for each MiB of the call's input.
type Budget struct {
	Memory                 int64
	Timeout, TimeoutPerMiB time.Duration
}

// Or returns b with its zero (or negative) fields taken from d.
func (b Budget) Or(d Budget) Budget {
	if b.Memory <= 0 {
		b.Memory = d.Memory
	}
	if b.Timeout <= 0 {
		b.Timeout = d.Timeout
	}
	if b.TimeoutPerMiB <= 0 {
		b.TimeoutPerMiB = d.TimeoutPerMiB
	}
	return b
}

// CPU is the CPU time b allows a call on an input of size bytes.
func (b Budget) CPU(size int) time.Duration {
	return b.Timeout + time.Duration(float64(b.TimeoutPerMiB)*float64(size)/(1<<20))
}

// Pool runs calls in supervised children of one command, one call per
// child at a time. Children are started when needed and kept for the
// next call; a child that died is replaced. A call whose child dies is
// tried once more in a new child, unless the child overran its CPU
// budget or its memory, which the same request would do again; a call
// that kills two children, or one that way, fails with a *Failure.
//
// A caller whose calls must reach the same child, because the child
// holds state between them (the OCR worker's open document), leases one
// instead (Take): a call through a Lease is tried once, since that state
// died with the child.
//
// A Pool is safe for concurrent use. Its children must be interchangeable:
// a call, or a lease, may go to any of them.
type Pool struct {
	cfg   PoolConfig
	slots chan *slot // the children free for a call, started or not

	mu      sync.Mutex
	closed  bool
	started int
}

// slot is one place for a child: the child, once started, and the reply
// cap it was started with.
type slot struct {
	proc  *Process
	reply int64
}

// NewPool returns a pool that starts its children as cfg says, when
// first needed. Close it.
func NewPool(cfg PoolConfig) *Pool {
	if cfg.Children <= 0 {
		cfg.Children = 1
	}
	if cfg.MaxReply <= 0 {
		cfg.MaxReply = DefaultMaxReply
	}
	p := &Pool{cfg: cfg, slots: make(chan *slot, cfg.Children)}
	for range cfg.Children {
		p.slots <- &slot{}
	}
	return p
}

// ErrPoolClosed is returned by Call on a closed pool.
var ErrPoolClosed = errors.New("the child pool is closed")

// Call sends req to a free child, starting one if needed, and decodes its
// reply into reply (a pointer). It waits for a free child, or for ctx. A
// child's death is a *Failure (once the call has been tried again when
// it may be); a cancelled ctx returns its error; a child that cannot be
// started returns the error that says why.
func (p *Pool) Call(ctx context.Context, lim Limits, req, reply any) error {
	var first *Death
	for try := 1; ; try++ {
		// A reply half decoded before a child died must not leave
		// fields behind: gob does not send zero values.
		reflect.ValueOf(reply).Elem().SetZero()
		d, err := p.callOnce(ctx, lim, req, reply)
		switch {
		case d == nil:
			return err
		case try == 1 && !d.CPU && d.Cause != CauseOOM:
			first = d
			continue
		}
		return &Failure{First: first, Last: d, CPU: lim.CPU}
	}
}

// callOnce makes one try of a call in a free child. It returns the
// child's death, if it died (at its start included) before ctx ended,
// else the call's error.
func (p *Pool) callOnce(ctx context.Context, lim Limits, req, reply any) (*Death, error) {
	l, err := p.take(ctx, max(lim.Reply, p.cfg.MaxReply))
	var d *Death
	if err == nil {
		defer l.Release()
		d, err = l.call(ctx, lim, req, reply)
	} else {
		errors.As(err, &d) // a child that died as it started
	}
	switch {
	case d == nil && err == nil:
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return d, err
}

// ready makes sure s holds a live child that takes replies of reply bytes,
// replacing the one there if need be.
func (p *Pool) ready(ctx context.Context, s *slot, reply int64) error {
	if s.proc != nil && (!s.proc.Alive() || s.reply < reply) {
		s.proc.Close()
		s.proc = nil
	}
	if s.proc != nil {
		return nil
	}
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.started++
	}
	p.mu.Unlock()
	if closed {
		return ErrPoolClosed
	}
	cfg := Config{Command: p.cfg.Command, StartTimeout: p.cfg.StartTimeout, MaxReply: reply}
	proc, err := Start(ctx, cfg, p.cfg.Setup, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("starting %s: %w", p.cfg.Name, err)
	}
	s.proc, s.reply = proc, reply
	return nil
}

// release gives s back to the pool, ending its child if the pool was
// closed meanwhile.
func (p *Pool) release(s *slot) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed && s.proc != nil {
		s.proc.Close()
		s.proc = nil
	}
	p.slots <- s
}

// Started is how many children the pool has started.
func (p *Pool) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// Close ends the idle children; a child in use ends when its call
// returns. Calls after Close fail with ErrPoolClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	var idle []*slot
take:
	for {
		select {
		case s := <-p.slots:
			idle = append(idle, s)
		default:
			break take
		}
	}
	var wg sync.WaitGroup
	for _, s := range idle {
		if s.proc != nil {
			wg.Go(func() { s.proc.Close() })
		}
	}
	wg.Wait()
	for _, s := range idle {
		s.proc = nil
		p.slots <- s
	}
	return nil
}

// Failure is a call that cost a child, or two, after which the pool gave
// up on it.
type Failure struct {
	First *Death // the death before Last, when the call was tried twice
	Last  *Death
	CPU   time.Duration // the call's CPU budget
}

func (f *Failure) Error() string { return f.Describe("the child") }

// Unwrap returns the last death, whose Cause a caller may map onto its
// own words (the OCR worker's reason codes).
func (f *Failure) Unwrap() error { return f.Last }

// Describe says how the children died, in refbatch's words (never the
// child's stderr), after who: for example "the PDF child crashed
// (SIGSEGV) twice", or "... did not finish in time, then ran out of
// memory".
func (f *Failure) Describe(who string) string {
	switch {
	case f.First == nil:
		return who + " " + f.what(f.Last)
	case f.First.Cause == f.Last.Cause && f.First.CPU == f.Last.CPU && f.First.Signal == f.Last.Signal:
		return who + " " + f.what(f.Last) + " twice"
	}
	return who + " " + f.what(f.First) + ", then " + f.what(f.Last)
}

// what says how one child died.
func (f *Failure) what(d *Death) string {
	switch {
	case d.CPU:
		return fmt.Sprintf("used more than %v of CPU time", f.CPU.Round(time.Millisecond))
	case d.Cause == CauseTimeout:
		return "did not finish in time"
	case d.Cause == CauseOOM:
		return "ran out of memory"
	case d.Cause == CauseProtocol:
		return "broke the protocol"
	case d.Signal != "":
		return "crashed (" + d.Signal + ")"
	}
	return "crashed"
}
