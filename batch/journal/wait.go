package journal

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// This file bounds the journal's waits for its write lock, and its reads
// of the whole journal, by the command's interruption (WithInterrupt), so
// that Ctrl-C ends a command waiting for a lock another process holds
// within a moment, not after SQLite's busy timeout.

// WithInterrupt makes the journal's waits for its write lock (SQLite's
// BEGIN IMMEDIATE, PostgreSQL's advisory lock) end once ctx is done and
// AfterInterruptWait has passed: a write then fails with an error that
// wraps context.Canceled, and nothing of it was written. A write that
// starts after the interruption (the end of an interrupted command:
// leases given back, the run's end recorded) still takes a free lock at
// once, and waits at most AfterInterruptWait for a held one. Only the wait
// is bounded: a transaction that has its lock runs to its end.
//
// The checks that read the whole journal (IntegrityCheck, CheckChain) end
// with ctx's error once it is done. OpenReadOnly takes no options: the
// option may be applied to a journal already open, WithInterrupt(ctx)(j).
func WithInterrupt(ctx context.Context) Option {
	return func(j *Journal) { j.interrupt = ctx }
}

// AfterInterruptWait is how long a write waits for the journal's lock
// once the journal's interruption came (WithInterrupt).
const AfterInterruptWait = 250 * time.Millisecond

// readContext is the context of the reads of a whole journal
// (IntegrityCheck, CheckChain): the journal's interruption, which ends
// them (WithInterrupt).
func (j *Journal) readContext() context.Context {
	if j.interrupt == nil {
		return context.Background()
	}
	return j.interrupt
}

// errLockWait is how a write that gave up waiting for the lock fails.
var errLockWait = fmt.Errorf("interrupted while waiting for the journal's write lock, which another process holds: %w", context.Canceled)

// lockWait returns the context a write waits for the lock under, and
// hold, to be called once the lock is taken: it ends the bound, so that
// an interruption mid-transaction does not roll the transaction back
// (database/sql rolls back a transaction whose context ends). hold reports
// false when the bound ended first: the caller then gives the transaction
// up.
func (j *Journal) lockWait() (ctx context.Context, hold func() bool) {
	if j.interrupt == nil {
		return context.Background(), func() bool { return true }
	}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var timer *time.Timer
	held := false
	stop := context.AfterFunc(j.interrupt, func() {
		mu.Lock()
		defer mu.Unlock()
		if !held {
			timer = time.AfterFunc(AfterInterruptWait, cancel)
		}
	})
	return ctx, func() bool {
		stop()
		mu.Lock()
		defer mu.Unlock()
		held = true
		return timer == nil || timer.Stop()
	}
}

// beginWaiting begins a transaction with begin under the lock's wait
// bound (lockWait), and then runs lock, if any, in it: the wait for
// PostgreSQL's advisory lock. A wait cut short returns errLockWait.
func (j *Journal) beginWaiting(begin func(ctx context.Context) (*sql.Tx, error), lock func(ctx context.Context, tx *sql.Tx) error) (*sql.Tx, error) {
	ctx, hold := j.lockWait()
	tx, err := begin(ctx)
	if err == nil && lock != nil {
		if err = lock(ctx, tx); err != nil {
			tx.Rollback()
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		hold()
		return nil, errLockWait
	case err != nil:
		hold()
		return nil, err
	case !hold():
		tx.Rollback()
		j.holds.end(tx)
		return nil, errLockWait
	}
	return tx, nil
}

// execWaiting runs one write statement outside a transaction, its wait
// for the lock bounded as a transaction's (lockWait).
func (j *Journal) execWaiting(query string, args ...any) error {
	ctx, hold := j.lockWait()
	_, err := j.db.ExecContext(ctx, query, args...)
	hold()
	if err != nil && ctx.Err() != nil {
		return errLockWait
	}
	return err
}
