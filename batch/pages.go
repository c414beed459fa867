package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/page"
)

// The engines work on pages, not documents: a document's pages are handed
// to whichever engine is free, so one long document is spread over every
// worker instead of keeping one busy while the others idle. An engine keeps
// to the document it has open while that one has pages left (opening a
// document costs sending its bytes to the child), and otherwise takes the
// open document with the most pages left.

// docWork is one document's pages on offer to the engines.
type docWork struct {
	ctx   context.Context // the document's context: its lease and timeouts
	id    int64
	data  []byte
	pages int
	// policy is the page policy the document is read under: the run's, or
	// the one a retry decision set for it.
	policy page.Policy
	// pageDPI is the resolution admission gave each page. The engine
	// renders a page at it rather than size the page again: MuPDF's bound
	// of a page is in whole points, admission's box exact, and a page
	// admission fitted to the pixel cap must not fail in the engine.
	pageDPI []int

	// budget is the engines' time the document may take (0: no limit),
	// used the time they took so far, counted as each page or open ends.
	// With a budget the page count gives (perPage above 0) the document
	// earns it as its pages begin: a page begun may take what the budget
	// less perPage for each page not yet begun leaves, so a file of slow
	// pages is stopped after a few of them, not after its whole budget.
	budget  time.Duration
	perPage time.Duration
	used    atomic.Int64
	begun   atomic.Int64

	next    int  // next page to hand out; guarded by pageQueue.mu
	failed  bool // a page failed: hand out no more; guarded by pageQueue.mu
	results chan pageResult
}

// dpi is the resolution page i renders at: admission's, or 0 (the engine
// sizes the page) should admission's count of pages not be this one's.
func (d *docWork) dpi(i int) int {
	if len(d.pageDPI) != d.pages {
		return 0
	}
	return d.pageDPI[i]
}

// pageTimeout is the deadline of the next page of d: the page timeout,
// or what is left of the document's budget when that is less (then short
// is true). over is true when nothing is left.
func (d *docWork) pageTimeout(page time.Duration) (timeout time.Duration, short, over bool) {
	if d.budget <= 0 {
		return page, false, false
	}
	earned := d.budget
	if d.perPage > 0 {
		earned -= time.Duration(int64(d.pages)-d.begun.Add(1)) * d.perPage
	}
	left := earned - time.Duration(d.used.Load())
	switch {
	case left <= 0:
		return 0, true, true
	case left < page:
		return left, true, false
	}
	return page, false, false
}

// overBudget is the error of a document whose engines' time is spent.
func (d *docWork) overBudget() error {
	if d.perPage > 0 && d.begun.Load() < int64(d.pages) {
		return fmt.Errorf("%w: the engines spent %v on its first %d of %d pages, more than their share of its budget of %v",
			errDocTimeout, time.Duration(d.used.Load()).Round(time.Millisecond), d.begun.Load(), d.pages, d.budget)
	}
	return fmt.Errorf("%w: the engines spent its budget of %v", errDocTimeout, d.budget)
}

type pageResult struct {
	index    int
	page     ocr.PageResult
	versions ocr.Versions
	err      error
}

// pageQueue is the set of documents with pages to hand out.
type pageQueue struct {
	mu      sync.Mutex
	docs    []*docWork
	changed chan struct{} // closed and replaced on every change
	closed  bool
}

func newPageQueue() *pageQueue { return &pageQueue{changed: make(chan struct{})} }

func (q *pageQueue) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// add offers a document's pages.
func (q *pageQueue) add(d *docWork) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.docs = append(q.docs, d)
	q.notify()
}

// remove withdraws a document: pages not yet handed out are dropped.
func (q *pageQueue) remove(d *docWork) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, x := range q.docs {
		if x == d {
			q.docs = append(q.docs[:i], q.docs[i+1:]...)
			break
		}
	}
}

// fail stops handing out a document's pages after one of them failed: the
// document's attempt is over, and more work on it would be wasted (or, for
// a fault that kills engines, repeated).
func (q *pageQueue) fail(d *docWork) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d.failed = true
}

// close ends the queue: take returns false once it is empty.
func (q *pageQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.notify()
}

// take hands out the next page, preferring the document the engine has
// open. It blocks until a page is available, the queue is closed, or ctx
// ends.
func (q *pageQueue) take(ctx context.Context, current *docWork) (*docWork, int, bool) {
	for {
		q.mu.Lock()
		var best *docWork
		for _, d := range q.docs {
			if d.next >= d.pages || d.failed || d.ctx.Err() != nil {
				continue
			}
			if d == current {
				best = d
				break
			}
			if best == nil || d.pages-d.next > best.pages-best.next {
				best = d
			}
		}
		if best != nil {
			i := best.next
			best.next++
			q.mu.Unlock()
			return best, i, true
		}
		if q.closed {
			q.mu.Unlock()
			return nil, 0, false
		}
		wait := q.changed
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, 0, false
		case <-wait:
		}
	}
}

// engineLoop owns one engine for its life, replacing it when it dies, and
// recognises pages from the queue until it closes.
func (r *runner) engineLoop(ctx context.Context) {
	var eng engine
	var engPolicy page.Policy // the policy eng was started under
	var open *docWork         // the document the engine has open
	defer func() {
		if eng != nil {
			eng.Close()
		}
	}()
	for {
		d, i, ok := r.pages.take(ctx, open)
		if !ok {
			return
		}
		// A worker child renders under one policy: a document read under
		// another (a retry decision's) gets an engine of its own.
		if eng != nil && (!eng.Alive() || engPolicy != d.policy) {
			eng.Close()
			eng, open = nil, nil
		}
		if eng == nil {
			var err error
			if eng, err = r.engines(ctx, d.policy); err != nil {
				eng = nil
				if d.policy != r.o.Policy {
					// The policy is one document's: it fails that
					// document's attempt, not the run.
					err = &ocr.EngineError{Cause: ocr.CauseTransient, Page: -1, Err: fmt.Errorf("starting an OCR engine under the document's retry policy: %w", err)}
				} else if ctx.Err() == nil {
					r.setFatal(fmt.Errorf("starting an OCR engine: %w", err))
				}
				r.pages.fail(d)
				d.results <- pageResult{index: i, err: err}
				continue
			}
			engPolicy = d.policy
			r.versions.note(eng.Versions())
		}
		res := pageResult{index: i, versions: eng.Versions()}
		start := time.Now()
		if open != d {
			open = nil
			n, err := eng.Open(d.ctx, d.data)
			switch {
			case err != nil:
				res.err = err
			case n != d.pages:
				res.err = &ocr.EngineError{Cause: ocr.CauseOpen, Page: -1,
					Err: fmt.Errorf("MuPDF counts %d pages, admission counted %d", n, d.pages)}
			default:
				open = d
			}
		}
		if res.err == nil {
			res.page, res.err = r.readPage(eng, d, i, start)
		}
		storeMax(&r.peakWorkerRSS, eng.Memory().VmHWM)
		if res.err != nil {
			r.pages.fail(d)
		}
		// results holds every page of the document: never blocks.
		d.results <- res
	}
}

// readPage has eng read page i of d, which it has open, within the page
// timeout and what is left of d's budget; start is when the engine began
// on the page (its open included), counted in the budget.
func (r *runner) readPage(eng engine, d *docWork, i int, start time.Time) (ocr.PageResult, error) {
	defer func() { d.used.Add(int64(time.Since(start))) }()
	timeout, short, over := d.pageTimeout(r.o.PageTimeout)
	if over {
		return ocr.PageResult{}, d.overBudget()
	}
	res, err := eng.Page(d.ctx, i, d.dpi(i), timeout)
	var ee *ocr.EngineError
	if short && errors.As(err, &ee) && ee.Cause == ocr.CauseTimeout {
		// The deadline the page missed was the document's.
		return res, d.overBudget()
	}
	return res, err
}
