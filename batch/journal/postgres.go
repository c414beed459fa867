package journal

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
)

// This file is the journal on PostgreSQL: a database many machines share,
// named by a postgres:// URL where a SQLite journal is named by its path.
//
// The journal's SQL is written once, with SQLite's ? placeholders; the
// connections made here rebind them to PostgreSQL's $1, $2, ... (rebind).
// The few statements the two dialects cannot share are chosen in
// dialect.go. The schema is SQLite's with PostgreSQL's types
// (pgSchema), and the state machine is the same code.
//
// SQLite serialises writers with BEGIN IMMEDIATE. On PostgreSQL the
// appends to the custody log follow one another on one
// transaction-scoped advisory lock, the custody lock: the log demands it,
// since each appends the event that follows the last one and chains its
// hash. Admission, claims and verdicts never hold it in their own
// transactions: they queue their events, and a seal chains the events of
// many transactions under one hold (seal.go, applock.go), their reads
// locking their rows; the other writes that append take it as they begin
// (begin). The writes that append no event (leaseTx) take only their
// rows' locks, and a claim passes over documents another transaction
// holds (skipLocked). Reads take no lock. See the package's locking
// contract.

// IsURL reports whether location names a PostgreSQL journal
// (postgres://... or postgresql://...) rather than a SQLite file.
func IsURL(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// writeLockKey is the custody lock, the advisory lock every append to
// the custody log holds: the bytes of "refbatch" as a bigint.
const writeLockKey = 0x7265666261746368

// openPostgres opens the journal at the URL location, creating its schema
// when the database (or the schema its search_path names) has none. A
// read-only journal's sessions are read-only (default_transaction_read_only),
// so no statement of it can write.
func openPostgres(location string, readOnly bool, opts ...Option) (*Journal, error) {
	cfg, err := pgx.ParseConfig(location)
	if err != nil {
		return nil, redactErr(location, fmt.Errorf("opening journal %s: %w", Redact(location), err))
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	// A statement whose context ends (a wait for the custody lock cut
	// short: WithInterrupt) is cancelled in the server, and the
	// transaction then rolled back on the same connection: its row locks
	// are given back at once, not when the server, still waiting for the
	// lock on a connection the client closed, next reads from it.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 5 * time.Second}
	}
	// A writing session makes the seal it chains pending events with
	// (seal.go).
	var connOpts []stdlib.OptionOpenDB
	if !readOnly {
		connOpts = append(connOpts, stdlib.OptionAfterConnect(makeSealFunction))
	}
	db := sql.OpenDB(rebinder{stdlib.GetConnector(*cfg, connOpts...)})
	// A few connections: writes wait for the advisory lock in the
	// database, and a read need not wait behind them.
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	j := &Journal{db: db, path: location, clock: time.Now, pg: true}
	for _, o := range opts {
		o(j)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, redactErr(location, fmt.Errorf("opening journal %s: %w", Redact(location), pgClassify(err)))
	}
	if readOnly {
		err = j.checkVersion()
	} else {
		err = j.migrate()
	}
	if err != nil {
		db.Close()
		return nil, redactErr(location, err)
	}
	return j, nil
}

// checkVersion refuses a database that is not a journal of this schema.
func (j *Journal) checkVersion() error {
	var v string
	err := j.db.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&v)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "42P01": // undefined_table
		return fmt.Errorf("%s: %w (it has no meta table)", Redact(j.path), ErrNotJournal)
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%s: %w (it has no schema version)", Redact(j.path), ErrNotJournal)
	case err != nil:
		return fmt.Errorf("opening journal %s: %w", Redact(j.path), err)
	case v == "5":
		// Read as it is, its artifact sizes as NULL (sizeless).
		j.sizeless = true
	case v == "6":
		// Read as it is: only the index of rows by document is missing.
	case v == "7":
		// Read as it is, with no pending table (below).
	case v != fmt.Sprint(schemaVersion):
		return fmt.Errorf("journal schema version %s, this refbatch reads 5 to %d on PostgreSQL", v, schemaVersion)
	}
	// Before version 8 no event was ever pending (seal.go).
	j.noPending = v != fmt.Sprint(schemaVersion)
	return nil
}

// schemaCurrent reports whether a PostgreSQL journal is at this
// schema's version already, read without the custody lock: then migrate
// has nothing to write, and opening the journal does not wait in the
// custody lock's queue behind every claim and verdict of a busy batch
// (a handle opened beside six workers on a loaded machine waited up to
// 0.8 s). Anything else, or an error, is for migrate to find under the
// lock. On SQLite it is false: migrate's transaction is cheap there.
func (j *Journal) schemaCurrent() bool {
	if !j.pg {
		return false
	}
	var tables, meta int
	if err := j.db.QueryRow(j.tablesQuery()).Scan(&tables, &meta); err != nil || tables == 0 || meta == 0 {
		return false
	}
	var v string
	err := j.db.QueryRow(`SELECT value FROM meta WHERE key='schema_version'`).Scan(&v)
	return err == nil && v == fmt.Sprint(schemaVersion)
}

// pgTypes turns the schema's SQLite types into PostgreSQL's: 64-bit
// integers (times are Unix milliseconds), doubles, and identity columns
// where SQLite's INTEGER PRIMARY KEY numbers rows.
var pgTypes = strings.NewReplacer(
	"INTEGER PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
	"INTEGER", "BIGINT",
	"REAL", "DOUBLE PRECISION",
)

// pgSchema is the schema with PostgreSQL's types. A PostgreSQL journal
// starts at the current schema version; one made at version 3 or later
// takes the migrations from there (migrate).
func pgSchema() []string {
	out := make([]string, len(schema), len(schema)+1)
	for i, s := range schema {
		out[i] = pgTypes.Replace(s)
	}
	return append(out, pendingTable)
}

// pgClassify marks PostgreSQL's disk_full (53100) as ErrDiskFull, and a
// server that cannot be reached, or a connection lost, as ErrUnreachable.
func pgClassify(err error) error {
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case err == nil || errors.Is(err, ErrUnreachable):
		return err
	case errors.As(err, &pe) && pe.Code == "53100":
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "08"): // connection_exception
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	case errors.As(err, &ce), errors.As(err, &ne), errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// rebind returns query with each ? placeholder outside a quoted string
// replaced by $1, $2, ... in order.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n, quoted := 0, false
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// rebinder makes pgx's database/sql connections, each rebinding the
// placeholders of what it runs.
type rebinder struct{ driver.Connector }

func (r rebinder) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return rebindConn{c.(*stdlib.Conn)}, nil
}

// rebindConn is pgx's connection with the statements it runs rebound;
// everything else (transactions, value checks, session reset) is pgx's.
type rebindConn struct{ *stdlib.Conn }

func (c rebindConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(query))
}

func (c rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

func (c rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

func (c rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}
