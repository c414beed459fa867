package journal

import (
	"database/sql"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// This file is how, on PostgreSQL, the hot writes (admission, claims,
// verdicts) never hold the custody lock in their own transactions.
//
// A transaction run by appendTx begins without the lock. What it reads to
// decide a write, it locks (forUpdate, skipLocked): two transactions
// deciding about one row follow one another on that row's lock, and
// admission's inserts meet on the unique keys of rows and documents.
// appendEvent then queues its event in the pending table, with the rows
// it records as the transaction wrote them, which no other transaction
// can change before it commits; after the commit a seal chains it, with
// every other event pending, under one hold of the custody lock (seal.go).
// So the log is the same one chain, with the same hash inputs, as when
// each transaction appended under the lock. A transaction that appends
// nothing (a claim that finds nothing to claim) never queues or seals.
//
// Every write transaction that holds the custody lock takes its locks in
// that order: its rows' first, then the custody lock. Those that hold it
// from their start (begin: settings, runs, the outbox's notices, and
// dismissals, which write no row but their events) must never wait for a
// row lock a transaction of appendTx can hold, or the two could wait for
// each other: they write only rows no such transaction locks (meta,
// runs, outbox, deliveries) and events. A transaction of appendTx that
// must read the log whole (a decision's check that its document did not
// change: chainPending) takes the lock after its rows' locks. The seal
// holds no row lock while it waits. Decisions, undos, transcriptions,
// revalidations, reruns (Readmit, Requeue, backfills) and Rebind, which
// write documents and manifest rows, run in appendTx like admission and
// claims.
//
// A deadlock all the same (two transactions locking rows in opposite
// orders), a serialization failure, or a unique key another admission
// took first rolls the transaction back; on PostgreSQL every write
// transaction, of either kind, is then run again from its first read
// (rerun), so that no caller sees such a conflict as an error. On SQLite
// every write transaction is IMMEDIATE and holds the database from its
// start, and chains its events itself: appendTx is tx.

// appendRetries is how many times a write transaction PostgreSQL rolled
// back for a conflict with another (retryable) is run.
const appendRetries = 8

// custodyHolds holds, on PostgreSQL, the write transactions under way
// that take the custody lock, each with when it took it: zero for a
// transaction of appendTx that has not yet. within adds how long each
// held it to the journal's held, which the benchmarks report as the
// share of the time the lock was held.
type custodyHolds struct{ m sync.Map }

// begin records tx, which has not taken the custody lock yet.
func (h *custodyHolds) begin(tx *sql.Tx) { h.m.Store(tx, time.Time{}) }

// took records that tx took the custody lock now.
func (h *custodyHolds) took(tx *sql.Tx) { h.m.Store(tx, time.Now()) }

// end forgets tx, which has committed or rolled back, and returns how
// long it held the custody lock (0: never).
func (h *custodyHolds) end(tx *sql.Tx) time.Duration {
	v, ok := h.m.LoadAndDelete(tx)
	if !ok || v.(time.Time).IsZero() {
		return 0
	}
	return time.Since(v.(time.Time))
}

// appendTx runs fn in a write transaction that may append to the custody
// log; on PostgreSQL its events are queued and sealed after its commit,
// before appendTx returns (see above). fn must lock the rows it reads to decide
// what to write (forUpdate, skipLocked), must take every row lock it
// needs before its first appendEvent, and must set what it returns
// afresh on each run.
func (j *Journal) appendTx(fn func(*sql.Tx) error) error {
	if !j.pg {
		return j.tx(fn)
	}
	return j.rerun(func() (*sql.Tx, error) { return j.beginWaiting(j.beginTx, nil) }, func(tx *sql.Tx) error {
		j.holds.begin(tx)
		return fn(tx)
	})
}

// rerun runs fn in the transaction begin starts, as within does, and on
// PostgreSQL runs it again, up to appendRetries times, while it fails
// for a conflict with another transaction (retryable). fn must set what
// it returns afresh on each run.
func (j *Journal) rerun(begin func() (*sql.Tx, error), fn func(*sql.Tx) error) error {
	err := j.within(begin, fn)
	for n := 1; j.pg && n < appendRetries && retryable(err); n++ {
		j.reruns.Add(1)
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "40P01" {
			j.deadlocks.Add(1)
		}
		err = j.within(begin, fn)
	}
	return err
}

// retryable reports whether PostgreSQL rolled a transaction back for a
// conflict with another that running it again resolves: a deadlock, a
// serialization failure, or a unique key taken by a transaction that
// committed first.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40P01", "40001", "23505":
		return true
	}
	return false
}

// forUpdate is the clause with which a query locks the rows it reads to
// decide a write in a transaction of appendTx: PostgreSQL's FOR UPDATE,
// of the tables named by of when given (a join's nullable side cannot be
// locked). SQLite needs none: its write transaction holds the whole
// database.
func (j *Journal) forUpdate(of ...string) string {
	switch {
	case !j.pg:
		return ``
	case len(of) > 0:
		return ` FOR UPDATE OF ` + strings.Join(of, `, `)
	}
	return ` FOR UPDATE`
}
