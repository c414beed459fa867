package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file is the outbox: the notifications a batch owes its receivers
// (webhooks, a local command), written in the same transaction as the
// state change that caused them, and the record of every delivery
// attempt. A sender outside the journal reads what is pending, delivers
// it and records each attempt; a run killed before delivery leaves the
// event pending for the next run (at least once: a receiver deduplicates
// on the event's ID).
//
// The outbox is delivery state, not custody: it is not in custodyTables,
// so its writes append no event to the custody log. The facts an event
// reports (a run's end, its counts, the batch root) are custody already,
// and a delivery attempt changes nothing of the batch; chaining every
// retry against a dead receiver would grow the log for no fact.

// The outbox's tables (schema version 4). outbox holds each event's body
// as it is sent, byte for byte, in the order written (seq); deliveries
// holds, per event and target, the attempts so far and when one
// succeeded.
const (
	outboxTable = `CREATE TABLE IF NOT EXISTS outbox (
		seq        INTEGER PRIMARY KEY,
		id         TEXT NOT NULL UNIQUE,
		type       TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		body       TEXT NOT NULL
	)`
	deliveriesTable = `CREATE TABLE IF NOT EXISTS deliveries (
		event_id        TEXT NOT NULL REFERENCES outbox(id),
		target          TEXT NOT NULL,
		attempts        INTEGER NOT NULL DEFAULT 0,
		last_attempt_at INTEGER,
		last_error      TEXT NOT NULL DEFAULT '',
		delivered_at    INTEGER,
		PRIMARY KEY (event_id, target)
	)`
)

// NotifySchema is the version of the events' JSON body (Notice).
const NotifySchema = 1

// The types of event the outbox holds.
const (
	NoticeFinished    = "batch_finished"    // a run ended with every row of its manifest final
	NoticeInterrupted = "batch_interrupted" // a run ended before that: interrupted, disk full, failed
	NoticeNeedsPerson = "rows_need_person"  // a run ended with every row final, some in review or rejected
	NoticeStalled     = "batch_stalled"     // a running batch made no progress for a while
)

// Notice is an event's body: the fields every type has, and Data, the
// type's own. It never holds document text, participant IDs or paths.
type Notice struct {
	Schema  int             `json:"schema"`
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	BatchID string          `json:"batch_id"`
	Time    time.Time       `json:"time"`
	Data    json.RawMessage `json:"data"`
}

// RunEnd is what EndRun is told of how a run ended, for the events it
// writes to the outbox.
type RunEnd struct {
	BatchID  string
	Manifest string // the run's manifest: its rows are the ones counted
	// Finished is true when every row of the manifest is final.
	Finished bool
	// Why and ExitCode, when not Finished: why the run stopped (a stable
	// word: interrupted, disk_full, incomplete, failed) and the code
	// `refbatch run` exits with.
	Why      string
	ExitCode int
}

// runCounts is a run's rows per state and per reason, with the batch
// root after the run's end.
type runCounts struct {
	Run      int64                  `json:"run"`
	ExitCode int                    `json:"exit_code"`
	Why      string                 `json:"why,omitempty"`
	Rows     map[outcome.State]int  `json:"rows"`
	Reasons  map[outcome.Reason]int `json:"reasons"`
	Custody  *Root                  `json:"custody,omitempty"`
}

// runEndNotices writes, inside EndRun's transaction, the events the run's
// end causes: batch_finished (and rows_need_person when rows are in
// review or rejected) or batch_interrupted.
func (j *Journal) runEndNotices(tx *sql.Tx, run int64, end RunEnd) error {
	c := runCounts{Run: run, Rows: map[outcome.State]int{}, Reasons: map[outcome.Reason]int{}}
	rows, err := tx.Query(`SELECT r.kind, r.reason, COALESCE(d.state,''), COALESCE(d.reason,''), COUNT(*)
		FROM rows r LEFT JOIN documents d ON d.id = r.document_id WHERE r.manifest=?
		GROUP BY r.kind, r.reason, d.state, d.reason`, end.Manifest)
	if err != nil {
		return err
	}
	for rows.Next() {
		var kind rowKind
		var rowReason, state, docReason string
		var n int
		if err := rows.Scan(&kind, &rowReason, &state, &docReason, &n); err != nil {
			rows.Close()
			return err
		}
		switch kind {
		case kindRejected:
			c.Rows[outcome.Rejected] += n
			c.Reasons[outcome.Reason(rowReason)] += n
		case kindDuplicate:
			c.Rows[outcome.Duplicate] += n
		default:
			c.Rows[outcome.State(state)] += n
			if docReason != "" {
				c.Reasons[outcome.Reason(docReason)] += n
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	id, hash, err := lastEvent(tx)
	if err != nil {
		return err
	}
	if hash != ZeroHash {
		c.Custody = &Root{Hash: hash, Events: id}
	}
	open, err := openRows(tx, end.Manifest)
	if err != nil {
		return err
	}
	person := 0
	for _, n := range open {
		person += n
	}
	if !end.Finished {
		c.ExitCode, c.Why = end.ExitCode, end.Why
		return j.enqueue(tx, NoticeInterrupted, end.BatchID, c)
	}
	// The codes of `refbatch run` (refbatch help outcomes, "Exit codes").
	if person > 0 {
		c.ExitCode = 4
	}
	if err := j.enqueue(tx, NoticeFinished, end.BatchID, c); err != nil {
		return err
	}
	if person == 0 {
		return nil
	}
	hand, err := handwritingPages(tx, end.Manifest)
	if err != nil {
		return err
	}
	// Open counts what a person still has to do (outcome.Open), by
	// reason; Review and Rejected count every such row. Hand counts the
	// documents in review handwriting per page with a note not
	// transcribed: page numbers, nothing that names a document.
	need := struct {
		Run      int64                  `json:"run"`
		Review   int                    `json:"review"`
		Rejected int                    `json:"rejected"`
		Reasons  map[outcome.Reason]int `json:"reasons"`
		Open     int                    `json:"open"`
		Kinds    map[outcome.Reason]int `json:"open_reasons"`
		Hand     map[int]int            `json:"handwriting_pages,omitempty"`
	}{run, c.Rows[outcome.Review], c.Rows[outcome.Rejected], c.Reasons, person, open, hand}
	return j.enqueue(tx, NoticeNeedsPerson, end.BatchID, need)
}

// Notify writes an event of the given type to the outbox in a transaction
// of its own, for a notice no state change causes (batch_stalled). data
// is the type's own fields, marshalled as JSON.
func (j *Journal) Notify(typ, batchID string, data any) error {
	if err := j.tx(func(tx *sql.Tx) error { return j.enqueue(tx, typ, batchID, data) }); err != nil {
		return fmt.Errorf("journal: recording %s notice: %w", typ, err)
	}
	return nil
}

// enqueue adds one event to the outbox inside tx, with a new ID.
func (j *Journal) enqueue(tx *sql.Tx, typ, batchID string, data any) error {
	d, err := json.Marshal(data)
	if err != nil {
		return err
	}
	n := Notice{Schema: NotifySchema, ID: "evt-" + NewToken(), Type: typ, BatchID: batchID,
		Time: time.UnixMilli(ms(j.now())).UTC(), Data: d}
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	_, err = tx.Exec(`INSERT INTO outbox(id, type, created_at, body) VALUES(?,?,?,?)`, n.ID, typ, ms(n.Time), string(body))
	return err
}

// OutboxEvent is one event of the outbox, with its body as sent.
type OutboxEvent struct {
	ID      string
	Type    string
	Created time.Time
	Body    []byte
	// Attempts made to deliver it to the target Pending was asked about.
	Attempts int
}

// Pending returns, oldest first, the events not delivered to target yet
// (every event of the outbox, for a target it has never seen: a receiver
// added later gets the batch's earlier events too).
func (j *Journal) Pending(target string) ([]OutboxEvent, error) {
	rows, err := j.db.Query(`SELECT o.id, o.type, o.created_at, o.body, COALESCE(d.attempts,0)
		FROM outbox o LEFT JOIN deliveries d ON d.event_id = o.id AND d.target = ?
		WHERE d.delivered_at IS NULL ORDER BY o.seq`, target)
	if err != nil {
		return nil, fmt.Errorf("journal: reading the outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxEvent
	for rows.Next() {
		var e OutboxEvent
		var at int64
		var body string
		if err := rows.Scan(&e.ID, &e.Type, &at, &body, &e.Attempts); err != nil {
			return nil, fmt.Errorf("journal: reading the outbox: %w", err)
		}
		e.Created, e.Body = time.UnixMilli(at), []byte(body)
		out = append(out, e)
	}
	return out, rows.Err()
}

// RecordAttempt records one attempt to deliver an event to target, at the
// journal's time: delivered, or failed with errText (which must hold no
// path and no URL beyond its host).
func (j *Journal) RecordAttempt(eventID, target string, delivered bool, errText string) error {
	now := ms(j.now())
	var at sql.NullInt64
	if delivered {
		at = sql.NullInt64{Int64: now, Valid: true}
	}
	err := j.tx(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO deliveries(event_id, target, attempts, last_attempt_at, last_error, delivered_at)
			VALUES(?,?,1,?,?,?)
			ON CONFLICT(event_id, target) DO UPDATE SET attempts=deliveries.attempts+1, last_attempt_at=excluded.last_attempt_at,
				last_error=excluded.last_error, delivered_at=COALESCE(deliveries.delivered_at, excluded.delivered_at)`,
			eventID, target, now, errText, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("journal: recording a delivery attempt: %w", err)
	}
	return nil
}

// Delivery is what happened to one event for one target.
type Delivery struct {
	Target      string
	Attempts    int
	LastAttempt time.Time
	LastError   string    // of the last failed attempt; "" once delivered
	Delivered   time.Time // zero until an attempt succeeded
}

// OutboxEntry is one event of the outbox with its deliveries so far.
type OutboxEntry struct {
	ID         string
	Type       string
	Created    time.Time
	Deliveries []Delivery
}

// Outbox lists every event of the outbox, oldest first, with the
// attempts to deliver it. An earlier journal has none.
func (j *Journal) Outbox() ([]OutboxEntry, error) {
	rows, err := j.db.Query(`SELECT o.id, o.type, o.created_at, COALESCE(d.target,''), COALESCE(d.attempts,0),
		d.last_attempt_at, COALESCE(d.last_error,''), d.delivered_at
		FROM outbox o LEFT JOIN deliveries d ON d.event_id = o.id ORDER BY o.seq, d.target`)
	if err != nil {
		return nil, fmt.Errorf("journal: reading the outbox: %w", err)
	}
	defer rows.Close()
	var out []OutboxEntry
	for rows.Next() {
		var e OutboxEntry
		var d Delivery
		var at int64
		var last, done sql.NullInt64
		if err := rows.Scan(&e.ID, &e.Type, &at, &d.Target, &d.Attempts, &last, &d.LastError, &done); err != nil {
			return nil, fmt.Errorf("journal: reading the outbox: %w", err)
		}
		e.Created, d.LastAttempt, d.Delivered = time.UnixMilli(at), fromMS(last), fromMS(done)
		if len(out) == 0 || out[len(out)-1].ID != e.ID {
			out = append(out, e)
		}
		if d.Target != "" {
			if !d.Delivered.IsZero() {
				d.LastError = ""
			}
			out[len(out)-1].Deliveries = append(out[len(out)-1].Deliveries, d)
		}
	}
	return out, rows.Err()
}

// outboxReadOnly gives a read-only connection to a journal of schema 3 or
// earlier an empty outbox, from its own temporary database (see
// legacyViews), so that status and the report read it as one with no
// notifications.
func outboxReadOnly(db *sql.DB) error {
	for _, s := range []string{outboxTable, deliveriesTable} {
		temp := "CREATE TEMP TABLE" + s[len("CREATE TABLE"):]
		if _, err := db.Exec(temp); err != nil {
			return errors.Join(errors.New("journal: reading an earlier schema's outbox"), err)
		}
	}
	return nil
}
