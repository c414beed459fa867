package child

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// A Lease is one child of a Pool, kept by one caller for a series of
// calls that must reach the same child because it holds state between
// them: the OCR worker's Tesseract handle, initialised once, and the
// document it has open. A call through a Lease is tried once: whatever
// the caller built up in the child died with it, so the caller decides
// what comes next (the OCR worker's are the journal's attempts). Give it
// back with Release.
//
// A Lease serves one call at a time; Alive and Release are safe to call
// at any time.
type Lease struct {
	p    *Pool
	s    *slot
	proc *Process // the child leased

	mu       sync.Mutex
	released bool
}

// Take leases a free child, starting one if need be, and decodes the
// hello it was started with into hello (a pointer, or nil). It waits for
// a free child, or for ctx. A child that dies as it starts is a *Death
// in the error.
func (p *Pool) Take(ctx context.Context, hello any) (*Lease, error) {
	l, err := p.take(ctx, p.cfg.MaxReply)
	if err != nil {
		return nil, err
	}
	if err := l.proc.hello(hello); err != nil {
		l.proc.Close()
		l.Release()
		return nil, fmt.Errorf("starting %s: %w", p.cfg.Name, err)
	}
	return l, nil
}

// take leases a free slot whose child is ready for replies of reply bytes.
func (p *Pool) take(ctx context.Context, reply int64) (*Lease, error) {
	var s *slot
	select {
	case s = <-p.slots:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := p.ready(ctx, s, reply); err != nil {
		p.release(s)
		return nil, err
	}
	return &Lease{p: p, s: s, proc: s.proc}, nil
}

// Pid is the leased child's process ID.
func (l *Lease) Pid() int { return l.proc.Pid() }

// Alive reports whether the leased child can take calls: false once it
// died or was killed, or the lease was released.
func (l *Lease) Alive() bool {
	l.mu.Lock()
	released := l.released
	l.mu.Unlock()
	return !released && l.proc.Alive()
}

// Call sends req to the leased child and decodes its reply into reply (a
// pointer), within lim. The child's death is a *Failure, after which the
// lease's calls return ErrNotAlive, as they do once it is released; a ctx
// that ends first returns its error, and the child is killed all the same.
func (l *Lease) Call(ctx context.Context, lim Limits, req, reply any) error {
	if !l.Alive() {
		return ErrNotAlive
	}
	d, err := l.call(ctx, lim, req, reply)
	if d != nil {
		return &Failure{Last: d, CPU: lim.CPU}
	}
	return err
}

// call makes one try of a call in the leased child. It returns the
// child's death, if it died, else the call's error.
func (l *Lease) call(ctx context.Context, lim Limits, req, reply any) (*Death, error) {
	err := l.proc.CallCPU(ctx, lim.wall(), lim.CPU, req, reply)
	var d *Death
	if errors.As(err, &d) {
		return d, nil
	}
	return nil, err
}

// Release gives the child back to the pool, which keeps it for the next
// call or lease while it lives. It is safe to call more than once.
func (l *Lease) Release() {
	l.mu.Lock()
	released := l.released
	l.released = true
	l.mu.Unlock()
	if !released {
		l.p.release(l.s)
	}
}
