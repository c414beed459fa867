// Package journal is refbatch's record of progress: the only source of truth
// for which manifest rows were seen, which documents were admitted, who holds
// a lease on which document, every attempt and its cause, and the final state
// of every row. It is the only importer of the SQLite and PostgreSQL drivers.
//
// The journal is a SQLite database in WAL mode (modernc.org/sqlite, no cgo),
// or, named by a postgres:// URL, a PostgreSQL database several machines
// share (github.com/jackc/pgx/v5 through database/sql; see postgres.go).
// Both hold the same schema and run the same code: the statements the two
// dialects cannot share are in dialect.go. Every write is a short
// transaction. So several refbatch processes, on one machine or many,
// share one journal: workers claim the next claimable document
// (ClaimNext), one process at a time admits a manifest (HoldAdmission),
// and every write that publishes a result is conditional on the caller's
// lease token.
//
// The locking contract. The custody log is one hash chain: each event is
// numbered after, and hashes, the one before it, so its appends must
// follow one another. On SQLite every write transaction is IMMEDIATE and
// holds the whole database from its start. On PostgreSQL the appends
// follow one another on the custody lock, a transaction-scoped advisory
// lock, and are made in batches (group commit, seal.go):
//
//   - admission (Admit, RejectDetail), claims (ClaimNext, Claim) and the
//     ends of attempts (Finish, Fail, Release) never take it in their
//     own transactions: they lock what they read to decide a write (the
//     manifest row FOR UPDATE, the document claimed FOR UPDATE SKIP
//     LOCKED, the document whose lease is checked FOR UPDATE; two
//     admissions of one row or source_id meet on the unique keys, and the
//     one that comes second runs again and finds the first's row), queue
//     their events in the pending table and commit. The handle's seal
//     then chains them, with every event pending from any process, in
//     one statement under one hold of the lock (sealer.go). A claim that
//     finds nothing appends nothing;
//   - the writes of people and reruns that change documents or manifest
//     rows (decisions, undos, transcriptions, revalidations, Readmit,
//     Requeue, backfills, Rebind) do the same, and seal before they
//     return; those that check a document's latest event first chain
//     what is pending (chainPending), after their rows' locks;
//   - the writes that change neither (settings, recipients, runs,
//     notices, dismissals, which add only their events) take it when they
//     begin, chain what is pending and their own events, and hold it to
//     their commit: they never wait for a row lock another can hold;
//   - a transaction PostgreSQL rolls back for a conflict all the same (a
//     deadlock, a serialization failure) is run again, whichever it is,
//     so no caller sees the conflict;
//   - page records, lease renewals and heartbeats append nothing and lock
//     only their row; reads take no lock.
//
// So the events are one chain, numbered without gaps; events of
// transactions that wrote a common row are chained in the order those
// committed, and the rows each records are those its transaction wrote
// and held locked until then: verify and CheckChain recompute it as they
// always did, replaying after it the events committed and not yet
// chained.
//
// The model:
//
//   - a row is one manifest record, keyed by its manifest (the absolute path
//     of the CSV: one output folder may take several manifests) and line. It is
//     rejected (with a reason), a duplicate of a document, or the owner of a
//     document whose state it shares;
//   - a document is one referral to OCR, keyed by source_id, with the SHA-256
//     of its bytes. Its state is queued until it ends done or review;
//   - a lease (owner, token, expiry) on a queued document gives one process
//     the right to work on it; Claim counts the attempt before any work, so a
//     document that keeps failing reaches the attempt cap;
//   - an attempt records who tried, when, and how it ended (done, review, or
//     a transient cause such as crash, oom, io);
//   - an event records what a row's current state no longer shows: a
//     verdict a rerun replaced (Readmit, Requeue) or a person's decision.
//     A rejected row keeps the key of what decided it, an admitted row
//     salted 32-bit digests of its fields (Digest), so that a rerun sees
//     what was fixed or edited.
//
// The journal never stores document text or participant IDs.
package journal

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"modernc.org/sqlite"

	"github.com/refbatch/refbatch/report/outcome"
)

// rowKind is what a manifest row is to the journal (the rows table's kind
// column): the owner of a document, whose state it shares, or a row with
// a state of its own.
type rowKind string

const (
	kindDoc       rowKind = "doc"
	kindRejected          = rowKind(outcome.Rejected)
	kindDuplicate         = rowKind(outcome.Duplicate)
)

// AttemptOutcome is how an attempt ended (the attempts table's outcome
// column): with the verdict it published, or without one.
type AttemptOutcome string

// The outcomes of an attempt.
const (
	// AttemptOpen: the attempt has not ended. It is running, or its
	// process died and no one has taken the document over yet.
	AttemptOpen AttemptOutcome = ""
	// AttemptDone, AttemptReview and AttemptRejected: the attempt
	// published that verdict (Finish).
	AttemptDone     = AttemptOutcome(outcome.Done)
	AttemptReview   = AttemptOutcome(outcome.Review)
	AttemptRejected = AttemptOutcome(outcome.Rejected)
	// AttemptFailed: the engine or the source failed (Fail, with a
	// transient outcome.Cause); the attempt counts against the cap.
	AttemptFailed AttemptOutcome = "failed"
	// AttemptAbandoned: the attempt's lease expired or its process died,
	// and another claim took the document over; it is not counted.
	AttemptAbandoned AttemptOutcome = "abandoned"
	// AttemptInterrupted: the run was interrupted and gave the lease back
	// (Release); it is not counted.
	AttemptInterrupted AttemptOutcome = "interrupted"
)

// Errors returned by the lease operations.
var (
	// ErrNotClaimable means the document is final, leased by a live owner,
	// or waiting out a retry backoff.
	ErrNotClaimable = errors.New("document is not claimable")
	// ErrLeaseLost means the caller's lease token is no longer current:
	// another owner took the document, so the caller must not publish.
	ErrLeaseLost = errors.New("lease lost")
	// ErrDiskFull means the journal could not be written because its disk
	// is full. Nothing half-written is left: the transaction rolled back.
	ErrDiskFull = errors.New("journal disk full")
	// ErrManifestChanged means a manifest line now names another source_id
	// than the journal recorded for it.
	ErrManifestChanged = errors.New("manifest changed since the journal was written")
	// ErrUnreachable means the journal's PostgreSQL server could not be
	// reached, or the connection to it was lost: nothing of the
	// transaction under way was written.
	ErrUnreachable = errors.New("the journal's database cannot be reached")
	// ErrNotJournal means the file is not a refbatch journal: not SQLite,
	// or a SQLite database with tables of its own. Open never adds its
	// tables to such a file.
	ErrNotJournal = errors.New("not a refbatch journal")
)

// IsCorrupt reports whether err, from opening or reading a journal, says
// the journal itself is damaged or not a journal (ErrNotJournal, SQLite's
// SQLITE_CORRUPT, SQLITE_NOTADB, a schema not its own), rather than that
// it could not be read here (permissions, a busy or missing file) or is
// of a later refbatch.
func IsCorrupt(err error) bool {
	var se *sqlite.Error
	if errors.Is(err, ErrNotJournal) {
		return true
	}
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case 11, 26, 1: // SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_ERROR (no such table: a schema not ours)
		return true
	}
	return false
}

// Journal is an open journal database.
type Journal struct {
	db    *sql.DB
	path  string
	clock func() time.Time
	salt  string // the field digests' salt, once read (fieldSalt)
	// pg: the journal is a PostgreSQL database (see postgres.go).
	pg bool
	// legacy: an earlier schema read as it is (OpenReadOnly), with no
	// custody log.
	legacy bool
	// sizeless: a journal of a schema before version 6 read as it is
	// (OpenReadOnly): its documents have no artifact_size, read as NULL.
	sizeless bool
	// noPending: a PostgreSQL journal of a schema before version 8 read
	// as it is (OpenReadOnly), which has no pending table (seal.go).
	noPending bool
	// release frees what a read-only journal was read from, once db is
	// closed (openSQLiteRO), when not nil.
	release func() error
	// interrupt, when set, bounds the waits for the write lock (see
	// WithInterrupt).
	interrupt context.Context
	// locked counts the transactions that took the custody lock (on
	// PostgreSQL, its advisory lock): what the benchmarks report per
	// document.
	locked atomic.Int64
	// reruns counts the write transactions run again after a conflict
	// with another (rerun).
	reruns atomic.Int64
	// deadlocks counts those of them PostgreSQL rolled back as a
	// deadlock's victim: none while every write locks its rows before the
	// custody lock (applock.go), which the tests check.
	deadlocks atomic.Int64
	// holds are the transactions under way that take the custody lock
	// (applock.go), and held the time they held it, in nanoseconds: with
	// locked, what the benchmarks report.
	holds custodyHolds
	held  atomic.Int64
	// sealed counts the events its seals chained (seal.go): per hold of
	// the lock, the batch the benchmarks report.
	sealed atomic.Int64
	// queued holds, on PostgreSQL, the transactions under way that
	// queued events to be chained after their commit, each with its last
	// seq (seal.go).
	queued sync.Map
	// deferred holds the transactions of hotTx under way: their events
	// are chained by sealer once they commit (sealer.go).
	deferred sync.Map
	sealer   sealer
}

// Close closes the journal.
func (j *Journal) Close() error {
	j.settle()
	err := j.db.Close()
	if j.release != nil {
		err = errors.Join(err, j.release())
	}
	return err
}

// Path is where the journal is: its file, or its PostgreSQL URL as given
// (with any password: see Redact), so that it can be opened again.
func (j *Journal) Path() string { return j.path }

// tx runs fn in a write transaction that may append to the custody log
// and holds the custody lock from its start (begin), and commits it when
// fn returns nil; on PostgreSQL fn must write no row a transaction of
// appendTx may lock, and is run again after a conflict (rerun).
func (j *Journal) tx(fn func(*sql.Tx) error) error { return j.rerun(j.begin, fn) }

// within runs fn in the transaction begin starts, and commits it when fn
// returns nil.
func (j *Journal) within(begin func() (*sql.Tx, error), fn func(*sql.Tx) error) error {
	tx, err := begin()
	if err != nil {
		return fmt.Errorf("journal: %w", classify(notJournal(err)))
	}
	defer func() { j.held.Add(int64(j.holds.end(tx))) }()
	defer j.deferred.Delete(tx)
	if err := fn(tx); err != nil {
		j.queued.Delete(tx)
		tx.Rollback()
		return classify(notJournal(err))
	}
	seq, queued := j.queued.LoadAndDelete(tx)
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("journal commit: %w", classify(err))
	}
	_, deferred := j.deferred.Load(tx)
	switch {
	case queued && deferred:
		j.sealLater(seq.(int64))
	case queued:
		// Committed: its events are the log's now, chained by this seal
		// or, should it fail, by the next one (seal.go).
		j.seal([]int64{seq.(int64)})
	}
	return nil
}

// classify marks a full disk so callers can stop cleanly rather than fail:
// SQLITE_FULL, ENOSPC or EDQUOT, and SQLITE_IOERR_SHMSIZE, which is how
// SQLite says it could not grow the -shm file of a full disk.
func classify(err error) error {
	var se *sqlite.Error
	full := errors.As(err, &se) && (se.Code()&0xff == 13 || se.Code() == 4874)
	if full || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return pgClassify(err)
}

// now is the time the journal records and compares leases against.
func (j *Journal) now() time.Time { return j.clock() }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid || v.Int64 == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64)
}

// NewToken returns a random identifier for a lease or a trace.
func NewToken() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

// SetMeta records a key/value pair (settings, the encryption choice).
func (j *Journal) SetMeta(key, value string) error {
	err := j.tx(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, key, value)
		if err != nil {
			return err
		}
		return j.appendEvent(tx, Event{Kind: EventMetaSet}, metaTouch(key))
	})
	if err != nil {
		return fmt.Errorf("journal meta %s: %w", key, classify(err))
	}
	return nil
}

// InitMeta records value for key unless the key has a value already, in
// one write transaction (so that of two processes the first wins), and
// returns the key's value.
func (j *Journal) InitMeta(key, value string) (string, error) {
	var got string
	err := j.tx(func(tx *sql.Tx) error {
		err := tx.QueryRow(`SELECT value FROM meta WHERE key=?`, key).Scan(&got)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		got = value
		if _, err := tx.Exec(`INSERT INTO meta(key,value) VALUES(?,?)`, key, value); err != nil {
			return err
		}
		return j.appendEvent(tx, Event{Kind: EventMetaSet}, metaTouch(key))
	})
	if err != nil {
		return "", fmt.Errorf("journal meta %s: %w", key, classify(err))
	}
	return got, nil
}

// Meta returns a value set by SetMeta, or "" when unset.
func (j *Journal) Meta(key string) (string, error) {
	var v string
	err := j.db.QueryRow(`SELECT value FROM meta WHERE key=?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// IntegrityCheck runs SQLite's integrity check and returns its findings,
// empty when the database is sound. PostgreSQL checks its own pages (and
// has no such statement): on it, the check finds nothing.
func (j *Journal) IntegrityCheck() ([]string, error) {
	if j.pg {
		return nil, nil
	}
	rows, err := j.db.QueryContext(j.readContext(), `PRAGMA integrity_check`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		if s != "ok" {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}
