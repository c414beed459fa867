package journal

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing/fstest"
	"time"

	"modernc.org/sqlite/vfs"
)

// This file opens a journal for reading only, without writing a byte
// beside it: status, verify, review, show, report and export read a batch
// this way, on a folder a crash left as it was and on a read-only copy.

// legacyViews lets a connection read a journal of an earlier schema
// (version "1" or "2") as the current one, from the connection's own
// temporary database, which touches no file: the tables it lacks read as
// empty, the columns it lacks as their defaults (a temp view shadows the
// table of the same name). Its events have no hashes: it has no custody
// log.
func legacyViews(db *sql.DB, version string) error {
	stmts := []string{
		`CREATE TEMP VIEW documents AS SELECT *, '' AS content_sha256 FROM main.documents`,
		`CREATE TEMP VIEW events AS SELECT *, '' AS hash FROM main.events`,
	}
	if version == "1" {
		stmts = []string{
			strings.Replace(eventsTable, "CREATE TABLE IF NOT EXISTS", "CREATE TEMP TABLE IF NOT EXISTS", 1),
			`CREATE TEMP VIEW documents AS SELECT *, 0 AS attempts_base, '' AS retry_policy, '' AS content_sha256 FROM main.documents`,
			`CREATE TEMP VIEW rows AS SELECT *, '' AS admit_key, '' AS fields FROM main.rows`,
		}
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	return nil
}

// OpenReadOnly opens an existing journal for reading only. It never creates
// the file, never migrates it, and may be used while another process writes
// the journal. A journal of schema version 1 reads as one with no events, one
// of version 3 or earlier as one with an empty outbox; a journal of a
// version this build does not know is refused. One before version 6 has
// no artifact sizes: a Doc's ArtifactSize is 0, and a reader bounds the
// artifact by its pages instead.
//
// It creates and changes no file either, so that it works on a read-only
// copy and leaves a folder as it found it, crash or not (see openSQLiteRO).
//
// A postgres:// URL opens that journal with read-only sessions.
func OpenReadOnly(path string) (*Journal, error) {
	if IsURL(path) {
		return openPostgres(path, true)
	}
	db, release, err := openSQLiteRO(path)
	if err != nil {
		return nil, fmt.Errorf("opening journal: %w", err)
	}
	db.SetMaxOpenConns(1)
	var v string
	err = db.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		err = fmt.Errorf("%s: %w (it has no schema version)", path, ErrNotJournal)
	case errors.Is(notJournal(err), ErrNotJournal):
		err = fmt.Errorf("%s: %w (SQLite does not read it as a database)", path, ErrNotJournal)
	case err != nil:
		err = fmt.Errorf("opening journal %s: %w", path, err)
	case v == "1" || v == "2":
		// A journal an earlier build wrote, which it may still be
		// writing: it is not migrated (that would write), and the
		// tables it lacks are read as empty, from the connection's own
		// temporary database, which touches no file.
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		if err = legacyViews(db, v); err == nil {
			err = outboxReadOnly(db)
		}
		if err == nil {
			err = claimsReadOnly(db)
		}
	case v == "3":
		// Custody log and all, but no outbox yet: an empty one, from the
		// temporary database as above.
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		if err = outboxReadOnly(db); err == nil {
			err = claimsReadOnly(db)
		}
	case v == "4":
		// No run heartbeats nor admitters yet, as above.
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		err = claimsReadOnly(db)
	case v == "5":
		// No artifact sizes yet: read as NULL (sizeless), with no
		// view needed.
	case v == "6":
		// Only the index of rows by document is missing: read as it is.
	case v == "7":
		// Read as it is: version 8 changed only PostgreSQL's schema.
	case v != fmt.Sprint(schemaVersion):
		err = fmt.Errorf("journal schema version %s, this refbatch reads 1 to %d", v, schemaVersion)
	}
	if err != nil {
		db.Close()
		if release != nil {
			release()
		}
		return nil, err
	}
	return &Journal{db: db, path: path, clock: time.Now, legacy: v == "1" || v == "2", sizeless: v != "6" && v != "7" && v != fmt.Sprint(schemaVersion), release: release}, nil
}

// openSQLiteRO opens the SQLite journal at path to read it, in the one of
// three ways that writes nothing. SQLite reads a WAL database through its
// -wal and -shm files: it creates the -shm file when it is missing and
// rebuilds it when no connection holds it, even for a read-only
// connection, and it fails where it cannot.
//
//   - No write-ahead log with content (the journal was closed cleanly:
//     everything is in the main file, and no process writes it): the file
//     is opened as immutable, which reads it without the two files and
//     without locks.
//   - A log with content that a live connection holds (walInUse: a run
//     writing now): the journal is read as usual, sharing the -shm file
//     with that connection, as every reader does.
//   - A log with content and no connection (a process killed, or a copy):
//     the log holds committed transactions, part of the journal, so it is
//     read, but from a copy in memory of the two files, through SQLite's
//     read-only file-system VFS in exclusive locking mode, where SQLite
//     rebuilds the log's index in its own memory. If the files changed
//     while they were copied (a run started), it chooses again.
//
// release, when not nil, is to be called after the database is closed.
func openSQLiteRO(path string) (db *sql.DB, release func() error, err error) {
	for try := 0; ; try++ {
		if fi, err := os.Stat(path); err != nil {
			return nil, nil, err
		} else if !fi.Mode().IsRegular() {
			// SQLite would block in open(2) on a FIFO, past every signal.
			return nil, nil, fmt.Errorf("%s is not a regular file: %w", path, ErrNotJournal)
		}
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(30000)")
		q.Set("mode", "ro")
		wal, err := os.Stat(path + "-wal")
		if err != nil || wal.Size() == 0 {
			q.Set("immutable", "1")
			db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
			return db, nil, err
		}
		if try == 3 || walInUse(path) {
			db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
			return db, nil, err
		}
		db, release, err := openSnapshot(path)
		if !errors.Is(err, errMoved) {
			return db, release, err
		}
	}
}

// errMoved means the journal's files changed while they were copied.
var errMoved = errors.New("the journal changed while it was read")

// openSnapshot reads the journal at path and its write-ahead log into
// memory and opens that copy (see openSQLiteRO). It returns errMoved when
// the files changed, or a connection took them, while it copied them.
func openSnapshot(path string) (*sql.DB, func() error, error) {
	before, err := stamps(path)
	if err != nil {
		return nil, nil, err
	}
	main, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		return nil, nil, err
	}
	after, err := stamps(path)
	if err != nil {
		return nil, nil, err
	}
	if after != before || walInUse(path) {
		return nil, nil, errMoved
	}
	name, fsys, err := vfs.New(fstest.MapFS{
		"journal.db":     {Data: main, Mode: 0o400},
		"journal.db-wal": {Data: wal, Mode: 0o400},
	})
	if err != nil {
		return nil, nil, err
	}
	q := url.Values{}
	q.Set("vfs", name)
	q.Set("mode", "ro")
	q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	db, err := sql.Open("sqlite", "file:journal.db?"+q.Encode())
	if err != nil {
		fsys.Close()
		return nil, nil, err
	}
	return db, fsys.Close, nil
}

// fileStamps is what tells that the journal's two files changed.
type fileStamps struct {
	mainSize, walSize   int64
	mainMtime, walMtime time.Time
}

func stamps(path string) (fileStamps, error) {
	m, err := os.Stat(path)
	if err != nil {
		return fileStamps{}, err
	}
	w, err := os.Stat(path + "-wal")
	if err != nil {
		return fileStamps{}, err
	}
	return fileStamps{m.Size(), w.Size(), m.ModTime(), w.ModTime()}, nil
}

// walInUse reports whether a connection, in any process (this one
// included), holds the journal's write-ahead log: SQLite's connections
// each hold a read lock on one byte of the -shm file while they are open
// (its "dead man switch", at offset 128), and the first to open it after
// none did rebuilds the file's index. Asked with an open file description
// lock's query, which sees this process's own record locks too. Without a
// -shm file, or one it cannot read, no connection holds it.
func walInUse(path string) bool {
	f, err := os.OpenFile(path+"-shm", os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	const shmDMS = 128
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: shmDMS, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), fOFDGetLk, &lk); err != nil {
		// No open file description locks (a kernel before 3.15): a
		// record lock's query, blind to this process's own.
		lk = syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: shmDMS, Len: 1}
		if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
			return true
		}
	}
	return lk.Type != syscall.F_UNLCK
}

// fOFDGetLk is Linux's F_OFD_GETLK, which the syscall package lacks.
const fOFDGetLk = 36
