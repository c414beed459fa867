package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/notify"
	"github.com/refbatch/refbatch/batch/standing"
)

// This file delivers the journal's outbox (journal/outbox.go) to the
// run's notify targets, beside the run and never in its way: a courier
// goroutine attempts each pending event, records every attempt, and backs
// off from a failing receiver; the run's end waits for it a bounded time.
// It also watches a running batch for a stall.

// NotifyOptions say where a batch's events go and how hard to try.
type NotifyOptions struct {
	// Targets receive every event of the outbox not delivered to them
	// yet; none: the events wait in the outbox.
	Targets []notify.Target
	// Timeout bounds one attempt (DefaultNotifyTimeout when 0).
	Timeout time.Duration
	// Wait bounds how long the end of a run, or Flush, waits for the
	// events to be delivered (DefaultNotifyWait when 0); what is not
	// delivered by then stays pending for the next run or Flush.
	Wait time.Duration
	// StallAfter is how long a running batch may make no progress before
	// it sends batch_stalled (standing.DefaultStallAfter when 0).
	StallAfter time.Duration
}

// The defaults of NotifyOptions.
const (
	DefaultNotifyTimeout = 10 * time.Second
	DefaultNotifyWait    = 30 * time.Second
)

func (n NotifyOptions) withDefaults() NotifyOptions {
	if n.Timeout <= 0 {
		n.Timeout = DefaultNotifyTimeout
	}
	if n.Wait <= 0 {
		n.Wait = DefaultNotifyWait
	}
	if n.StallAfter <= 0 {
		n.StallAfter = standing.DefaultStallAfter
	}
	return n
}

// courier delivers the outbox to the targets.
type courier struct {
	j    *journal.Journal
	o    NotifyOptions
	log  *slog.Logger
	wake chan struct{}
	mu   sync.Mutex
	// next is, per event and target that failed, the earliest time of
	// the next attempt: exponential backoff with jitter (backoff).
	next map[string]time.Time
}

func newCourier(j *journal.Journal, o NotifyOptions, log *slog.Logger) *courier {
	return &courier{j: j, o: o.withDefaults(), log: log, wake: make(chan struct{}, 1), next: map[string]time.Time{}}
}

// poke makes the courier look at the outbox now (an event was written).
func (c *courier) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// round makes one attempt for every pending event whose backoff has
// passed. It returns how many events remain undelivered and the earliest
// time one of them may be tried again.
func (c *courier) round(ctx context.Context) (pending int, next time.Time, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.o.Targets {
		key := t.Key()
		events, err := c.j.Pending(key)
		if err != nil {
			return 0, next, err
		}
		for _, e := range events {
			k := e.ID + " " + key
			if at, ok := c.next[k]; ok && time.Now().Before(at) {
				pending++
				if next.IsZero() || at.Before(next) {
					next = at
				}
				continue
			}
			if ctx.Err() != nil {
				return pending + 1, next, nil
			}
			actx, cancel := context.WithTimeout(ctx, c.o.Timeout)
			derr := t.Deliver(actx, e.ID, e.Body, time.Now())
			cancel()
			if derr != nil && ctx.Err() != nil {
				// The run's end gave up waiting mid-attempt: not the
				// receiver's failure, and nothing to record.
				return pending + 1, next, nil
			}
			text := ""
			if derr != nil {
				text = derr.Error()
			}
			if err := c.j.RecordAttempt(e.ID, key, derr == nil, text); err != nil {
				return pending, next, err
			}
			attempt := e.Attempts + 1
			if derr == nil {
				delete(c.next, k)
				c.log.Info("notification delivered", "event", e.ID, "type", e.Type, "target", key, "attempt", attempt)
				continue
			}
			at := time.Now().Add(backoff(attempt))
			c.next[k] = at
			pending++
			if next.IsZero() || at.Before(next) {
				next = at
			}
			c.log.Warn("notification not delivered", "event", e.ID, "type", e.Type, "target", key, "attempt", attempt,
				"error", text, "retry_in", time.Until(at).Round(time.Millisecond))
		}
	}
	return pending, next, nil
}

// loop delivers until ctx ends, sleeping until the next retry is due or
// an event is written. A journal error is logged and retried later: the
// courier never fails the batch.
func (c *courier) loop(ctx context.Context) {
	for {
		pending, next, err := c.round(ctx)
		wait := time.Duration(-1)
		switch {
		case err != nil:
			c.log.Warn("notifications: reading the outbox", "error", err)
			wait = 5 * time.Second
		case pending > 0:
			wait = max(time.Until(next), 0)
		}
		var timer <-chan time.Time
		if wait >= 0 {
			timer = time.After(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-timer:
		}
	}
}

// flush delivers until nothing is pending or ctx ends, and returns how
// many events remain undelivered (to some target).
func (c *courier) flush(ctx context.Context) (int, error) {
	for {
		pending, next, err := c.round(ctx)
		if err != nil || pending == 0 {
			return pending, err
		}
		select {
		case <-ctx.Done():
			return pending, nil
		case <-time.After(max(time.Until(next), 0)):
		}
	}
}

// start runs the courier and the stall watch beside a run, and returns
// the function that stops them.
func (c *courier) start(batchID string, run int64) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if len(c.o.Targets) > 0 {
		wg.Go(func() { c.loop(ctx) })
	}
	wg.Go(func() { c.watchStall(ctx, batchID, run) })
	return func() { cancel(); wg.Wait() }
}

// interruptedWait is how long an interrupted run waits at its end for
// its events to be delivered: Ctrl-C ends a run within 2 seconds, its
// stop included.
const interruptedWait = 500 * time.Millisecond

// endOfRun delivers what the run's end wrote, waiting at most Wait, or
// at most interruptedWait for an interrupted run; an interruption during
// the wait ends it. What is left waits in the outbox.
func (c *courier) endOfRun(runCtx context.Context) {
	if len(c.o.Targets) == 0 {
		return
	}
	wait := c.o.Wait
	if runCtx.Err() != nil {
		wait = min(wait, interruptedWait)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if runCtx.Err() == nil {
		defer context.AfterFunc(runCtx, cancel)()
	}
	n, err := c.flush(ctx)
	switch {
	case err != nil:
		c.log.Warn("notifications: reading the outbox", "error", err)
	case n > 0:
		c.log.Warn("notifications not delivered yet: the next run, or refbatch notify, delivers them", "pending", n)
	}
}

// watchStall writes batch_stalled when the batch records no progress (a
// row, an attempt, a page, a run) for StallAfter, once per stall: it
// writes again only after progress resumed and stopped again.
func (c *courier) watchStall(ctx context.Context, batchID string, run int64) {
	tick := time.NewTicker(min(max(c.o.StallAfter/4, 10*time.Millisecond), time.Minute))
	defer tick.Stop()
	var reported time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		last, err := c.j.LatestRecorded()
		if err != nil || last.IsZero() || last.Equal(reported) || time.Since(last) < c.o.StallAfter {
			continue
		}
		data := map[string]any{"run": run, "last_progress": last.UTC(), "stall_after_seconds": c.o.StallAfter.Seconds()}
		if err := c.j.Notify(journal.NoticeStalled, batchID, data); err != nil {
			c.log.Warn("notifications: recording batch_stalled", "error", err)
			continue
		}
		reported = last
		c.log.Warn("no progress", "since", last.UTC().Format(time.RFC3339), "stall_after", c.o.StallAfter)
		c.poke()
	}
}

// runEnd says how a run ended, for the outbox's events: finished, or why
// not and the exit code `refbatch run` gives that (refbatch help outcomes, "Exit codes").
func runEnd(ctx context.Context, batchID, manifest string, runErr error) journal.RunEnd {
	e := journal.RunEnd{BatchID: batchID, Manifest: manifest, Finished: runErr == nil, ExitCode: 3}
	switch {
	case runErr == nil:
	case ctx.Err() != nil:
		e.Why = "interrupted"
	case errors.Is(diskFull(runErr), layout.ErrIncomplete) && !errors.Is(runErr, layout.ErrIncomplete):
		e.Why = "disk_full"
	case errors.Is(runErr, layout.ErrIncomplete):
		e.Why = "incomplete"
	default:
		e.Why, e.ExitCode = "failed", 1
	}
	return e
}

// Flush delivers the events of the batch at p that its targets have
// not received yet, waiting at most o.Wait, and returns how many remain
// undelivered (to some target). It is `refbatch notify`. When ctx ends
// first, it stops at once, and its error wraps context.Canceled; the
// events not delivered stay in the outbox.
func Flush(ctx context.Context, p layout.Place, o NotifyOptions, log *slog.Logger) (int, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	j, _, err := layout.OpenJournalRW(ctx, p)
	if err != nil {
		return 0, err
	}
	defer j.Close()
	c := newCourier(j, o, log)
	wctx, cancel := context.WithTimeout(ctx, c.o.Wait)
	defer cancel()
	n, err := c.flush(wctx)
	switch {
	case err != nil:
		return n, fmt.Errorf("notifications: %w", err)
	case ctx.Err() != nil && n > 0:
		return n, fmt.Errorf("notifications: %d not delivered: %w", n, context.Canceled)
	}
	return n, nil
}
