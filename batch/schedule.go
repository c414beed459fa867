package batch

import (
	"sync"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
)

// This file holds the small pieces of state a run's admission and its
// workers share to find work: the jobs admission made, the documents a
// worker could not take, and the signal that there may be more.

// jobCache holds the jobs of the documents this process admitted, until
// one of its workers claims the document (take). A document another
// process claims leaves its job behind: the cache keeps the newest
// jobCacheMax and forgets the oldest, which at worst costs a claim here
// the checks admission already made (jobFor).
type jobCache struct {
	mu    sync.Mutex
	jobs  map[int64]job
	order []int64
}

const jobCacheMax = 256

func (c *jobCache) put(jb job) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jobs == nil {
		c.jobs = map[int64]job{}
	}
	if _, ok := c.jobs[jb.docID]; !ok {
		c.order = append(c.order, jb.docID)
	}
	c.jobs[jb.docID] = jb
	for len(c.order) > jobCacheMax {
		delete(c.jobs, c.order[0])
		c.order = c.order[1:]
	}
}

// take returns and forgets the job of document id, if there is one.
func (c *jobCache) take(id int64) (job, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	jb, ok := c.jobs[id]
	delete(c.jobs, id) // its id stays in order until it falls off
	return jb, ok
}

// skipSet is the documents this process's workers found they cannot work
// on (their manifest row changed since admission): they claim them no
// more.
type skipSet struct {
	mu  sync.Mutex
	ids []int64
}

func (s *skipSet) add(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, id)
}

func (s *skipSet) list() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.ids...)
}

func (s *skipSet) has(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.ids {
		if x == id {
			return true
		}
	}
	return false
}

func (s *skipSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// signal wakes every goroutine waiting on it (wait) when notify is
// called, and one of those waiting on its tokens (one) when notifyOne
// is.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
	// tokens holds a wake-up for one waiter each, at most as many as
	// there are waiters (setWaiters): a token no waiter was there to take
	// wakes the next that waits, which then finds the work it was for,
	// or, when another took it, nothing.
	tokens chan struct{}
}

// setWaiters sizes the signal's tokens for n waiters, before any waits.
func (s *signal) setWaiters(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = make(chan struct{}, max(n, 1))
}

// one is what a waiter woken by notifyOne receives from (nil, never
// ready, before setWaiters).
func (s *signal) one() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens
}

// notifyOne wakes one waiter of one(): a document admitted is work for
// one worker, not for every idle one.
func (s *signal) notifyOne() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.tokens <- struct{}{}:
	default: // a token for each waiter is pending already
	}
}

func (s *signal) wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// otherAdmitters remembers for a moment whether another process is
// admitting rows of the runner's manifests (journal.Admitting), which
// every claim asks.
type otherAdmitters struct {
	mu      sync.Mutex
	checked time.Time
	yes     bool
}

const otherAdmittersFor = time.Second

func (a *otherAdmitters) get(j *journal.Journal, manifests []string, owner journal.Owner) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if time.Since(a.checked) < otherAdmittersFor {
		return a.yes, nil
	}
	yes, err := j.Admitting(manifests, owner)
	if err != nil {
		return false, err
	}
	a.yes, a.checked = yes, time.Now()
	return yes, nil
}
