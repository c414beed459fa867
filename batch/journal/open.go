package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"

	"modernc.org/sqlite"
)

// This file opens a journal: the schema, its creation and version check,
// and the refusal of a file that is not a journal.

// Option changes how Open opens a journal.
type Option func(*Journal)

// WithClock makes the journal take the time from clock instead of
// time.Now: every time it records (admissions, claims, pages, verdicts,
// runs) and every lease expiry it compares. A test uses it to build a
// journal whose times it knows; waiting for a busy database still takes
// real time.
func WithClock(clock func() time.Time) Option {
	return func(j *Journal) { j.clock = clock }
}

// schemaVersion is the journal's schema. Version 2 added the events table
// and, for the run's own use, rows.admit_key, rows.fields,
// documents.attempts_base and documents.retry_policy. Version 3 made the
// events a hash chain (events.hash) covering the other tables, and added
// documents.content_sha256. Version 4 added the outbox (outbox.go).
// Version 5 added what processes on several machines share a batch by
// (claims.go): runs.heartbeat_at, the admitters table and the queue's
// index. Version 6 added documents.artifact_size, the artifact's size on
// disk as written, under the custody log like the rest of the row (NULL
// for an artifact published before it: a reader then bounds it by its
// pages, layout.MaxArtifactBytes). Version 7 added the index of the rows
// by document (rowsDocumentIndex), without which every claim read every
// row. Version 8 added, on PostgreSQL, the pending table: the events
// committed and not yet chained, which one hold of the custody lock
// chains by the batch (seal.go); SQLite's schema is version 7's. An
// earlier journal is migrated by Open
// (which seals one before version 3: see sealLegacy) and read as it is by
// OpenReadOnly.
const schemaVersion = 8

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
		artifact_size   INTEGER,
		content_sha256  TEXT NOT NULL DEFAULT '',
		admitted_at     INTEGER NOT NULL,
		started_at      INTEGER,
		finished_at     INTEGER,
		attempts_base   INTEGER NOT NULL DEFAULT 0,
		retry_policy    TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS documents_state ON documents(state)`,
	queueIndex,
	`CREATE TABLE IF NOT EXISTS rows (
		manifest    TEXT NOT NULL,
		line        INTEGER NOT NULL,
		source_id   TEXT NOT NULL,
		kind        TEXT NOT NULL,
		reason      TEXT NOT NULL DEFAULT '',
		sha256      TEXT NOT NULL DEFAULT '',
		document_id INTEGER REFERENCES documents(id),
		recorded_at INTEGER NOT NULL,
		admit_key   TEXT NOT NULL DEFAULT '',
		fields      TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (manifest, line)
	)`,
	rowsDocumentIndex,
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
		peak_worker_rss INTEGER NOT NULL DEFAULT 0,
		heartbeat_at INTEGER
	)`,
	eventsTable,
	`CREATE INDEX IF NOT EXISTS events_document ON events(document_id)`,
	outboxTable,
	deliveriesTable,
	admittersTable,
}

// eventsTable is the append-only history of what happened to rows and
// documents beyond their current state (see Event).
const eventsTable = `CREATE TABLE IF NOT EXISTS events (
		id          INTEGER PRIMARY KEY,
		at          INTEGER NOT NULL,
		kind        TEXT NOT NULL,
		manifest    TEXT NOT NULL DEFAULT '',
		line        INTEGER NOT NULL DEFAULT 0,
		document_id INTEGER,
		source_id   TEXT NOT NULL DEFAULT '',
		data        TEXT NOT NULL DEFAULT '{}',
		hash        TEXT NOT NULL DEFAULT ''
	)`

// migrations bring a journal of the version before each to the next.
// SQLite's ADD COLUMN with a constant default rewrites nothing.
var migrations = map[int][]string{
	1: {
		// The events table as version 2 made it.
		`CREATE TABLE events (
			id INTEGER PRIMARY KEY, at INTEGER NOT NULL, kind TEXT NOT NULL, manifest TEXT NOT NULL DEFAULT '',
			line INTEGER NOT NULL DEFAULT 0, document_id INTEGER, source_id TEXT NOT NULL DEFAULT '', data TEXT NOT NULL DEFAULT '{}')`,
		`ALTER TABLE documents ADD COLUMN attempts_base INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE documents ADD COLUMN retry_policy TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE rows ADD COLUMN admit_key TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE rows ADD COLUMN fields TEXT NOT NULL DEFAULT ''`,
	},
	2: {
		`ALTER TABLE events ADD COLUMN hash TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE documents ADD COLUMN content_sha256 TEXT NOT NULL DEFAULT ''`,
	},
	3: {outboxTable, deliveriesTable},
	4: {`ALTER TABLE runs ADD COLUMN heartbeat_at INTEGER`, admittersTable, queueIndex},
	5: {`ALTER TABLE documents ADD COLUMN artifact_size INTEGER`},
	6: {rowsDocumentIndex},
	// 7: PostgreSQL's pending table, which its schema() creates.
}

// Open opens (creating if needed) the journal at path. The file is created
// with mode 0600. A postgres:// URL (IsURL) opens a journal in that
// PostgreSQL database, creating its tables when it has none.
func Open(path string, opts ...Option) (*Journal, error) {
	if IsURL(path) {
		return openPostgres(path, false, opts...)
	}
	// Create the file ourselves so its mode is 0600 from the first byte,
	// and never through a symbolic link: a batch's journal is its own.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening journal: %w", err)
	}
	fi, err := f.Stat()
	f.Close()
	if err == nil && !fi.Mode().IsRegular() {
		// SQLite would wait on a FIFO for good.
		err = fmt.Errorf("%s is not a regular file: %w", path, ErrNotJournal)
	}
	if err != nil {
		return nil, fmt.Errorf("opening journal: %w", err)
	}
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
	j := &Journal{db: db, path: path, clock: time.Now}
	for _, o := range opts {
		o(j)
	}
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

// migrateRetrying runs migrate, retrying while SQLite answers SQLITE_BUSY,
// until the journal's interruption (WithInterrupt).
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
		select {
		case <-time.After(wait):
		case <-j.readContext().Done(): // interrupted (WithInterrupt)
			return errLockWait
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// isBusy reports whether err is SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == 5
}

func (j *Journal) migrate() error {
	if j.schemaCurrent() {
		return nil
	}
	return j.tx(func(tx *sql.Tx) error {
		var tables, meta int
		err := tx.QueryRow(j.tablesQuery()).Scan(&tables, &meta)
		if err != nil {
			return err
		}
		if tables > 0 && meta == 0 {
			return fmt.Errorf("%s: %w (it holds tables of its own)", Redact(j.path), ErrNotJournal)
		}
		if tables == 0 {
			for _, s := range j.schema() {
				if _, err := tx.Exec(s); err != nil {
					return fmt.Errorf("creating journal schema: %w", err)
				}
			}
			if _, err = tx.Exec(`INSERT INTO meta(key,value) VALUES('schema_version',?)`, fmt.Sprint(schemaVersion)); err != nil {
				return err
			}
			return j.appendEvent(tx, Event{Kind: EventMetaSet}, metaTouch("schema_version"))
		}
		var v string
		err = tx.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("%s: %w (it holds tables of its own)", Redact(j.path), ErrNotJournal)
		case err != nil:
			return fmt.Errorf("reading journal schema version: %w", err)
		}
		version, err := strconv.Atoi(v)
		if err != nil || version < 1 || version > schemaVersion {
			return fmt.Errorf("journal schema version %s, this refbatch reads 1 to %d", v, schemaVersion)
		}
		if version == schemaVersion {
			return nil
		}
		if j.pg && version < 3 {
			return fmt.Errorf("journal schema version %s: a PostgreSQL journal has no migrations from it", v)
		}
		from := version
		// A PostgreSQL journal started at version 3, and takes the
		// migrations from there in its own types.
		for ; version < schemaVersion; version++ {
			for _, s := range migrations[version] {
				if j.pg {
					s = pgTypes.Replace(s)
				}
				if _, err := tx.Exec(s); err != nil {
					return fmt.Errorf("migrating the journal from schema %d: %w", version, err)
				}
			}
		}
		// Tables and indexes new in later versions.
		for _, s := range j.schema() {
			if _, err := tx.Exec(s); err != nil {
				return fmt.Errorf("migrating the journal: %w", err)
			}
		}
		if _, err = tx.Exec(`UPDATE meta SET value=? WHERE key='schema_version'`, fmt.Sprint(schemaVersion)); err != nil {
			return err
		}
		if from < 3 {
			return j.sealLegacy(tx, from)
		}
		// Under the custody log already: the new version is a meta
		// change like any other, recorded as the migration.
		data, _ := json.Marshal(map[string]int{"from_schema": from})
		return j.appendEvent(tx, Event{Kind: EventJournalMigrated, Data: data}, metaTouch("schema_version"))
	})
}
