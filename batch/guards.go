package batch

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr"
)

// This file holds the small pieces of state a run shares between its
// goroutines, each with its own lock: the stop, the byte budget, the engine
// versions and the lease heartbeat (the breaker is in breaker.go).

// stopper records the first fatal error of a run and cancels it.
type stopper struct {
	mu     sync.Mutex
	first  error
	cancel context.CancelFunc
}

func (s *stopper) set(err error) {
	s.mu.Lock()
	if s.first == nil {
		s.first = err
	}
	s.mu.Unlock()
	s.cancel()
}

func (s *stopper) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first
}

// byteBudget bounds the source bytes in flight (Options.MaxInflightBytes),
// whatever the documents' sizes, and measures the peak.
type byteBudget struct {
	sem  *semaphore.Weighted
	max  int64
	held atomic.Int64
	peak atomic.Int64
}

func newByteBudget(max int64) *byteBudget {
	return &byteBudget{sem: semaphore.NewWeighted(max), max: max}
}

// acquire waits for room for a document of size bytes; a document larger
// than the whole budget takes all of it. release gives the room back.
func (b *byteBudget) acquire(ctx context.Context, size int64) (release func(), err error) {
	w := min(max(size, 1), b.max)
	if err := b.sem.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { b.sem.Release(w) }, nil
}

// hold counts n bytes read into memory (negative when they are let go).
func (b *byteBudget) hold(n int64) { storeMax(&b.peak, b.held.Add(n)) }

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for {
		p := a.Load()
		if v <= p || a.CompareAndSwap(p, v) {
			return
		}
	}
}

// engineVersions holds the versions of the first engine that started, for
// the run's record and its report.
type engineVersions struct {
	mu sync.Mutex
	v  *ocr.Versions
}

func (e *engineVersions) note(v ocr.Versions) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.v == nil {
		e.v = &v
	}
}

// snapshot returns the versions map: refbatch's own, and the engines' once
// one has started.
func (e *engineVersions) snapshot() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var v ocr.Versions
	if e.v != nil {
		v = *e.v
	}
	return versionsMap(v)
}

// versionsMap is the one rendering of engine versions, as runs, reports
// and artifacts record them. Versions not known are left out.
func versionsMap(v ocr.Versions) map[string]string {
	m := map[string]string{"refbatch": layout.Version()}
	for k, s := range map[string]string{"tesseract": v.Tesseract, "mupdf": v.MuPDF, "leptonica": v.Leptonica} {
		if s != "" {
			m[k] = s
		}
	}
	return m
}

// leaseTTL is how long a claim lives without renewal; the heartbeat renews
// it every leaseTTL/3 while the engine works.
const leaseTTL = 30 * time.Second

// heartbeat renews lease l every leaseTTL/3 until ctx ends, and calls lost
// when a renewal fails: another owner now holds the document. The returned
// channel closes when the heartbeat has stopped.
func heartbeat(ctx context.Context, j *journal.Journal, l journal.Lease, lost func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(leaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := j.Renew(l, leaseTTL); err != nil {
					lost()
					return
				}
			}
		}
	}()
	return done
}

// beat records run id's heartbeat every journal.HeartbeatTTL/3, so that
// processes on other hosts can tell it goes on; stop ends it.
func beat(j *journal.Journal, id int64, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(journal.HeartbeatTTL / 3)
		defer t.Stop()
		for {
			if err := j.Beat(id); err != nil {
				log.Warn("could not record the run's heartbeat", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}
