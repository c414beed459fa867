package batch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/refbatch/refbatch/ocr/probe"
)

// The breaker tells a broken engine from documents that break engines.
// One document failing again and again is the attempt cap's business.
// Many different documents failing with no success between them may mean
// the engines themselves are broken, and retrying would burn every
// document's attempts; or it may mean a run of hostile documents, each of
// which crashes the engine that reads it, and stopping the run then would
// let a handful of small files stop a whole batch. So the documents'
// failures alone never stop the run: they make it ask a fresh engine to
// read a page known to be good (probe.PDF). Only when that fails too
// are the engines broken.

// breakerThreshold is how many different documents failing in the
// engines with no success between them make the run probe the engines.
const breakerThreshold = 5

// breaker counts the documents failing in the engines since the last
// success, and holds one probe at a time.
type breaker struct {
	mu      sync.Mutex
	failing map[int64]bool // documents failing since the last success
	probing bool
}

// failed counts a transient failure of document id; it returns how many
// different documents failed since the last success, and whether the
// caller is to probe the engines (then it must call probed).
func (b *breaker) failed(id int64) (n int, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failing == nil {
		b.failing = map[int64]bool{}
	}
	b.failing[id] = true
	n = len(b.failing)
	if n < breakerThreshold || b.probing {
		return n, false
	}
	b.probing = true
	return n, true
}

// probed ends a probe: when the engines passed it, the failures counted
// so far were the documents' own, and are forgotten.
func (b *breaker) probed(passed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if passed {
		b.failing = nil
	}
}

// ok records a success: the engines work.
func (b *breaker) ok() {
	b.mu.Lock()
	b.failing = nil
	b.mu.Unlock()
}

// engineFailed counts a transient failure of a document in the engines
// (its attempt is already recorded) and, when documents keep failing,
// probes the engines: the run stops only when they fail the probe too.
func (r *runner) engineFailed(ctx context.Context, docID int64) {
	n, probe := r.breaker.failed(docID)
	if !probe {
		return
	}
	start := time.Now()
	err := r.probe(ctx)
	r.breaker.probed(err == nil)
	switch {
	case ctx.Err() != nil:
		// Interrupted: the probe proves nothing.
	case err == nil:
		r.log.Warn("documents keep failing in the engines, yet a fresh engine reads the probe page: the failures are the documents' own, and the run goes on",
			"documents", n, "probe_ms", time.Since(start).Milliseconds())
	default:
		r.setFatal(fmt.Errorf("%w: %d different documents failed in the engines with no success between them, and a fresh engine failed the probe page too: %w", ErrEnginesBroken, n, err))
	}
}

// probe has a fresh engine, started under the run's page policy, read
// probe.PDF's page, with the run's page deadline.
func (r *runner) probe(ctx context.Context) error {
	eng, err := r.engines(ctx, r.o.Policy)
	if err != nil {
		return fmt.Errorf("starting an engine: %w", err)
	}
	defer eng.Close()
	n, err := eng.Open(ctx, probe.PDF)
	if err != nil {
		return fmt.Errorf("opening the probe page: %w", err)
	}
	if n != 1 {
		return fmt.Errorf("opening the probe page: %d pages, want 1", n)
	}
	if _, err := eng.Page(ctx, 0, 0, r.o.PageTimeout); err != nil {
		return fmt.Errorf("reading the probe page: %w", err)
	}
	storeMax(&r.peakWorkerRSS, eng.Memory().VmHWM)
	return nil
}
