package journal

import (
	"context"
	"database/sql"
)

// This file holds the few places where SQLite and PostgreSQL need
// different SQL. Everything else is written once, in the SQL both read
// (upserts as ON CONFLICT, new ids with RETURNING, counts of a condition
// as SUM(CASE ...)), with ? placeholders (see postgres.go).

// begin starts a write transaction that holds the custody lock from its
// start. SQLite's is IMMEDIATE (the _txlock of its connection); on
// PostgreSQL it first waits for the journal's custody lock, an advisory
// lock, so that it follows every other writer of the log as on SQLite.
// The transactions whose every read that decides a write locks its rows
// (appendTx) queue their events for a seal instead (seal.go).
func (j *Journal) begin() (*sql.Tx, error) {
	var lock func(context.Context, *sql.Tx) error
	if j.pg {
		lock = func(ctx context.Context, tx *sql.Tx) error {
			j.locked.Add(1)
			_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(?)`, int64(writeLockKey))
			if err == nil {
				j.holds.took(tx)
			}
			return err
		}
	}
	return j.beginWaiting(j.beginTx, lock)
}

// beginTx begins a transaction of the journal's kind: IMMEDIATE on SQLite.
func (j *Journal) beginTx(ctx context.Context) (*sql.Tx, error) { return j.db.BeginTx(ctx, nil) }

// leaseTx runs fn in a write transaction that appends no event, and so
// need not follow the others (the custody log's order): on PostgreSQL it
// takes no write lock, only the row locks of what it updates. Page
// records and lease renewals, one per page, use it, so that they never
// wait behind another machine's claims and verdicts. fn must append no
// event; on SQLite the transaction is IMMEDIATE like every other.
func (j *Journal) leaseTx(fn func(*sql.Tx) error) error {
	return j.within(func() (*sql.Tx, error) { return j.beginWaiting(j.beginTx, nil) }, fn)
}

// skipLocked is the clause with which a query locks the documents it
// selects, passing over those another transaction holds: PostgreSQL's
// FOR UPDATE SKIP LOCKED. SQLite has none, and needs none: its write
// transaction holds the whole database.
func (j *Journal) skipLocked() string {
	if j.pg {
		return ` FOR UPDATE OF d SKIP LOCKED`
	}
	return ``
}

// readTx begins a read transaction in which every query sees one
// snapshot: on SQLite a deferred one (BEGIN, not BEGIN IMMEDIATE), which
// takes no write lock; on PostgreSQL a repeatable read one.
func (j *Journal) readTx() (*sql.Tx, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if j.pg {
		opts.Isolation = sql.LevelRepeatableRead
	}
	return j.db.BeginTx(context.Background(), opts)
}

// tablesQuery counts the tables of the journal's database (or schema),
// and among them the meta table.
func (j *Journal) tablesQuery() string {
	if j.pg {
		return `SELECT COUNT(*), COALESCE(SUM(CASE WHEN table_name='meta' THEN 1 ELSE 0 END),0)
			FROM information_schema.tables WHERE table_schema=current_schema()`
	}
	return `SELECT COUNT(*), COALESCE(SUM(CASE WHEN name='meta' THEN 1 ELSE 0 END),0) FROM sqlite_master WHERE type='table'`
}

// schema returns the statements that create the journal's tables.
func (j *Journal) schema() []string {
	if j.pg {
		return pgSchema()
	}
	return schema
}

// jsonText is the SQL for the text of field in the JSON object of column
// col, NULL when it has none.
func (j *Journal) jsonText(col, field string) string {
	if j.pg {
		return `(` + col + `::jsonb->>'` + field + `')`
	}
	return `json_extract(` + col + `,'$.` + field + `')`
}
