// Package journal is refbatch's record of progress: the only source of truth
// for which manifest rows were seen, which documents were admitted, who holds
// a lease on which document, every attempt and its cause, and the final state
// of every row. It is the only importer of the SQLite driver.
//
// The journal is a SQLite database in WAL mode (modernc.org/sqlite, no cgo).
// Every write is a short IMMEDIATE transaction, so several refbatch processes
// may share one journal: the database serialises them, and every write that
// publishes a result is conditional on the caller's lease token.
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
//     a transient cause such as crash, oom, io).
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
	"net/url"
	"os"
	"syscall"
	"time"

	"modernc.org/sqlite"

	"github.com/refbatch/refbatch/report/outcome"
)

// State is the state of a row or a document. It is outcome.State, under
// its old name until batch uses outcome's.
type State = outcome.State

// The states under their old names, until batch uses outcome's.
const (
	Queued    = outcome.Queued
	Done      = outcome.Done
	Review    = outcome.Review
	Rejected  = outcome.Rejected
	Duplicate = outcome.Duplicate
)

// The reasons the journal sets itself, under their old names, until batch
// uses outcome's.
const (
	ReasonAttemptsExhausted = outcome.AttemptsExhausted
	ReasonConflict          = outcome.Conflict
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
	// ErrNotJournal means the file is not a refbatch journal: not SQLite,
	// or a SQLite database with tables of its own. Open never adds its
	// tables to such a file.
	ErrNotJournal = errors.New("not a refbatch journal")
)

// Journal is an open journal database.
type Journal struct {
	db   *sql.DB
	path string
}

const schemaVersion = 1

var schema = []string{
	`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS documents (
		id              INTEGER PRIMARY KEY,
		source_id       TEXT NOT NULL UNIQUE,
		sha256          TEXT NOT NULL,
		path            TEXT NOT NULL,
		manifest_line   INTEGER NOT NULL,
		size            INTEGER NOT NULL,
		pages           INTEGER NOT NULL,
		state           TEXT NOT NULL,
		reason          TEXT NOT NULL DEFAULT '',
		attempts        INTEGER NOT NULL DEFAULT 0,
		abandoned       INTEGER NOT NULL DEFAULT 0,
		lease_owner     TEXT,
		lease_token     TEXT,
		lease_expires   INTEGER,
		next_attempt_at INTEGER NOT NULL DEFAULT 0,
		trace_id        TEXT NOT NULL,
		mean_confidence REAL,
		band            TEXT NOT NULL DEFAULT '',
		artifact        TEXT NOT NULL DEFAULT '',
		artifact_sha256 TEXT NOT NULL DEFAULT '',
		admitted_at     INTEGER NOT NULL,
		started_at      INTEGER,
		finished_at     INTEGER
	)`,
	`CREATE INDEX IF NOT EXISTS documents_state ON documents(state)`,
	`CREATE TABLE IF NOT EXISTS rows (
		manifest    TEXT NOT NULL,
		line        INTEGER NOT NULL,
		source_id   TEXT NOT NULL,
		kind        TEXT NOT NULL,
		reason      TEXT NOT NULL DEFAULT '',
		sha256      TEXT NOT NULL DEFAULT '',
		document_id INTEGER REFERENCES documents(id),
		recorded_at INTEGER NOT NULL,
		PRIMARY KEY (manifest, line)
	)`,
	`CREATE TABLE IF NOT EXISTS attempts (
		id          INTEGER PRIMARY KEY,
		document_id INTEGER NOT NULL REFERENCES documents(id),
		number      INTEGER NOT NULL,
		owner       TEXT NOT NULL,
		token       TEXT NOT NULL,
		started_at  INTEGER NOT NULL,
		ended_at    INTEGER,
		outcome     TEXT NOT NULL DEFAULT '',
		cause       TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS attempts_document ON attempts(document_id)`,
	`CREATE TABLE IF NOT EXISTS pages (
		attempt_id  INTEGER NOT NULL REFERENCES attempts(id),
		document_id INTEGER NOT NULL,
		page        INTEGER NOT NULL,
		dpi         INTEGER NOT NULL,
		render_ms   REAL NOT NULL,
		ocr_ms      REAL NOT NULL,
		words       INTEGER NOT NULL,
		mean_confidence REAL NOT NULL,
		finished_at INTEGER NOT NULL,
		PRIMARY KEY (attempt_id, page)
	)`,
	`CREATE TABLE IF NOT EXISTS runs (
		id          INTEGER PRIMARY KEY,
		owner       TEXT NOT NULL,
		started_at  INTEGER NOT NULL,
		finished_at INTEGER,
		exit        TEXT NOT NULL DEFAULT '',
		settings    TEXT NOT NULL DEFAULT '{}',
		versions    TEXT NOT NULL DEFAULT '{}',
		cpu_seconds REAL NOT NULL DEFAULT 0,
		peak_inflight_bytes INTEGER NOT NULL DEFAULT 0,
		peak_parent_rss INTEGER NOT NULL DEFAULT 0,
		peak_worker_rss INTEGER NOT NULL DEFAULT 0
	)`,
}

// Open opens (creating if needed) the journal at path. The file is created
// with mode 0600.
func Open(path string) (*Journal, error) {
	// Create the file ourselves so its mode is 0600 from the first byte.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening journal: %w", err)
	}
	f.Close()
	if err := checkOurs(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening journal: %w", err)
	}
	// One connection: writes in this process are serialised here, and
	// SQLite serialises them across processes.
	db.SetMaxOpenConns(1)
	j := &Journal{db: db, path: path}
	if err := j.migrateRetrying(); err != nil {
		db.Close()
		return nil, err
	}
	return j, nil
}

// checkOurs refuses a file that is not a refbatch journal before Open sets
// a single pragma on it (WAL mode alone rewrites the file's header): one
// that SQLite does not read as a database, or a database with tables but
// no schema version of ours. It reads the file as immutable, so it
// creates nothing beside it. An empty file, or a database whose tables
// are still in another process's write-ahead log, is a journal being
// created.
func checkOurs(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		return err
	}
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		// A log with content: the main file alone may be torn mid
		// checkpoint, and it is a WAL database already, so WAL mode
		// rewrites nothing. migrate makes the check inside a transaction.
		return nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		return err
	}
	defer db.Close()
	var tables, meta int
	err = db.QueryRow(`SELECT COUNT(*), COALESCE(SUM(name='meta'),0) FROM sqlite_master WHERE type='table'`).Scan(&tables, &meta)
	if err != nil {
		if errors.Is(notJournal(err), ErrNotJournal) {
			return fmt.Errorf("%s: %w (SQLite does not read it as a database)", path, ErrNotJournal)
		}
		return fmt.Errorf("opening journal: %w", err)
	}
	var v string
	if tables > 0 && (meta == 0 || db.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&v) != nil) {
		return fmt.Errorf("%s: %w (it holds tables of its own)", path, ErrNotJournal)
	}
	return nil
}

// notJournal marks SQLite's "file is not a database" (SQLITE_NOTADB) as
// ErrNotJournal.
func notJournal(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == 26 {
		return fmt.Errorf("%w: %w", ErrNotJournal, err)
	}
	return err
}

// openBusyWait bounds how long Open retries a journal that another process
// is creating at the same moment; the same as the busy timeout.
const openBusyWait = 30 * time.Second

// migrateRetrying runs migrate, retrying while SQLite answers SQLITE_BUSY.
// Two processes opening a journal that does not exist yet race to make it
// a WAL database and create its schema, and SQLite then answers the loser's
// BEGIN IMMEDIATE with SQLITE_BUSY at once instead of calling the busy
// handler: TestTwoProcesses failed 2 runs in 12 that way, always here.
func (j *Journal) migrateRetrying() error {
	deadline := time.Now().Add(openBusyWait)
	wait := 10 * time.Millisecond
	for {
		err := j.migrate()
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// isBusy reports whether err is SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 5
}

func (j *Journal) migrate() error {
	return j.tx(func(tx *sql.Tx) error {
		var tables, meta int
		err := tx.QueryRow(`SELECT COUNT(*), COALESCE(SUM(name='meta'),0) FROM sqlite_master WHERE type='table'`).Scan(&tables, &meta)
		if err != nil {
			return err
		}
		if tables > 0 && meta == 0 {
			return fmt.Errorf("%s: %w (it holds tables of its own)", j.path, ErrNotJournal)
		}
		for _, s := range schema {
			if _, err := tx.Exec(s); err != nil {
				return fmt.Errorf("creating journal schema: %w", err)
			}
		}
		var v string
		err = tx.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows) && tables > 0:
			return fmt.Errorf("%s: %w (it holds tables of its own)", j.path, ErrNotJournal)
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.Exec(`INSERT INTO meta(key,value) VALUES('schema_version',?)`, fmt.Sprint(schemaVersion))
			return err
		case err != nil:
			return fmt.Errorf("reading journal schema version: %w", err)
		case v != fmt.Sprint(schemaVersion):
			return fmt.Errorf("journal schema version %s, this refbatch reads %d", v, schemaVersion)
		}
		return nil
	})
}

// Close closes the journal.
func (j *Journal) Close() error { return j.db.Close() }

// Path is the journal's file.
func (j *Journal) Path() string { return j.path }

func (j *Journal) tx(fn func(*sql.Tx) error) error {
	tx, err := j.db.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("journal: %w", classify(notJournal(err)))
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return classify(notJournal(err))
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("journal commit: %w", classify(err))
	}
	return nil
}

// classify marks a full disk so callers can stop cleanly rather than fail.
func classify(err error) error {
	var se *sqlite.Error
	if (errors.As(err, &se) && se.Code()&0xff == 13) || errors.Is(err, syscall.ENOSPC) { // SQLITE_FULL
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	return err
}

// now is the time the journal records and compares leases against.
func (j *Journal) now() time.Time { return time.Now() }

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
	_, err := j.db.Exec(`INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("journal meta %s: %w", key, classify(err))
	}
	return nil
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
// empty when the database is sound.
func (j *Journal) IntegrityCheck() ([]string, error) {
	rows, err := j.db.Query(`PRAGMA integrity_check`)
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
