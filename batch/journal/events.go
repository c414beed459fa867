package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// EventKind names what an event records.
type EventKind string

// The kinds of event. Their data is a JSON object whose fields each kind
// documents where it is written.
const (
	// EventRowReadmitted: a row refused at admission was admitted again
	// because the row, its file or the run's admission settings changed;
	// data holds the earlier verdict.
	EventRowReadmitted EventKind = "row_readmitted"
	// EventRowChanged: a row in review whose manifest fields changed was
	// queued to be read again; data names the fields.
	EventRowChanged EventKind = "row_changed"
	// EventDecision: a person decided a row in review (refbatch review);
	// data holds the decision, who made it, where, and the note.
	EventDecision EventKind = "decision"
	// EventTranscription: a person typed the text of a region of a
	// document in review (refbatch desk); data names who, where, the
	// region and the artifact replaced (kept) and the new one, never the
	// text.
	EventTranscription EventKind = "transcription"
	// EventTranscriptionWithdrawn: a person withdrew a transcription of a
	// document in review; data names who, the transcription's amendment
	// and the artifact replaced (kept) and the new one, never the text.
	EventTranscriptionWithdrawn EventKind = "transcription_withdrawn"

	// The custody log's own kinds (see custody.go). Their data holds the
	// rows they changed, under "custody".
	EventRowAdmitted      EventKind = "row_admitted"                       // a row admitted: its document created, or a duplicate of one
	EventRowRejected      EventKind = "row_rejected"                       // a row refused at parsing or admission, or its queued document with it
	EventRowBackfilled    EventKind = "row_backfilled"                     // a row's digests or admission key recorded for an earlier build's row
	EventAttemptClaimed   EventKind = "attempt_claimed"                    // a lease taken: the attempt counted, a dead lease's attempt ended abandoned
	EventAttemptAbandoned EventKind = "attempt_abandoned"                  // a dead lease's attempt ended abandoned, the document in its backoff
	EventAttemptFinished  EventKind = "attempt_finished"                   // an attempt published its verdict and artifact
	EventAttemptFailed    EventKind = "attempt_failed"                     // an attempt failed transiently; data "exhausted" when the document went to review
	EventAttemptReleased  EventKind = "attempt_released"                   // an interrupted run gave its lease back
	EventExhausted                  = EventKind(outcome.AttemptsExhausted) // a document sent to review: its attempts ran out
	EventRunStarted       EventKind = "run_started"                        // with its settings
	EventRunVersions      EventKind = "run_versions"
	EventRunEnded         EventKind = "run_ended"
	EventMetaSet          EventKind = "meta_set"         // the batch ID, the artifacts' encryption, the digests' salt
	EventJournalMigrated  EventKind = "journal_migrated" // an earlier build's journal sealed: every covered row as it stood
)

// Event is one entry of the journal's append-only history: what happened
// to a row or a document that its current state does not show. Events
// never hold document text or participant IDs.
type Event struct {
	ID       int64
	At       time.Time
	Kind     EventKind
	Manifest string
	Line     int
	DocID    int64 // 0 when the event is about a row with no document
	SourceID string
	Data     json.RawMessage // a JSON object
	Hash     string          // the chain's hash up to this event ("" before the custody log)
}

// appendEvent adds e to the custody log inside tx, at the journal's
// time, with the rows touched as they now stand (see custody.go); its ID
// and At are ignored. It is the log's only writer.
func (j *Journal) appendEvent(tx *sql.Tx, e Event, touched ...touch) error {
	data, err := j.withCustody(tx, e.Data, touched)
	if err != nil {
		return fmt.Errorf("recording %s event: %w", e.Kind, err)
	}
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	e.At, e.Data = time.UnixMilli(ms(j.now())), data
	var doc sql.NullInt64
	if e.DocID != 0 {
		doc = sql.NullInt64{Int64: e.DocID, Valid: true}
	}
	if j.pg {
		// Into pending, chained by the seal after the commit, or now
		// when tx holds the custody lock (seal.go).
		var seq int64
		if seq, err = queueEvent(tx, e, doc); err == nil && j.holdsCustody(tx) {
			_, err = callSeal(context.Background(), tx, nil)
		} else if err == nil {
			j.queued.Store(tx, seq)
		}
	} else {
		var last int64
		var prev string
		if last, prev, err = lastEvent(tx); err == nil {
			e.ID = last + 1
			_, err = tx.Exec(`INSERT INTO events(id, at, kind, manifest, line, document_id, source_id, data, hash) VALUES(?,?,?,?,?,?,?,?,?)`,
				e.ID, ms(e.At), e.Kind, e.Manifest, e.Line, doc, e.SourceID, string(data), EventHash(prev, e))
		}
	}
	if err != nil {
		return fmt.Errorf("recording %s event: %w", e.Kind, err)
	}
	return nil
}

// HistoryKinds are the events that tell a row's history beyond its state:
// the verdicts a rerun replaced or found again, a person's decisions,
// amendments, transcriptions and withdrawals. They are few (one per row
// admitted again, read again, validated again, decided, amended,
// transcribed or withdrawn).
var HistoryKinds = []EventKind{EventRowReadmitted, EventRowChanged, EventDecision, EventRevalidated, EventAmended, EventTranscription,
	EventTranscriptionWithdrawn, EventRowWithdrawn}

// kindIn is the condition that an event is of one of kinds (at least one),
// and its arguments.
func kindIn(kinds []EventKind) (string, []any) {
	args := make([]any, len(kinds))
	for i, k := range kinds {
		args[i] = k
	}
	return `kind IN (?` + strings.Repeat(`,?`, len(kinds)-1) + `)`, args
}

// Events calls fn for every event of the given kinds (of every kind when
// none is given) in the order they were recorded. The events are held at
// once: fn runs after the query is closed, so it may use the journal.
func (j *Journal) Events(fn func(Event) error, kinds ...EventKind) error {
	where := ""
	var args []any
	if len(kinds) > 0 {
		where, args = kindIn(kinds)
		where = ` WHERE ` + where
	}
	return j.events(where, args, fn)
}

// DocumentEvents calls fn for every event about the document with ID
// docID, in the order they were recorded: its history, whose last ID is
// the document's version (Decision.Since).
func (j *Journal) DocumentEvents(docID int64, fn func(Event) error) error {
	return j.events(` WHERE document_id=?`, []any{docID}, fn)
}

// events calls fn for the events the condition where selects, held at
// once, in order.
func (j *Journal) events(where string, args []any, fn func(Event) error) error {
	j.settle()
	query := `SELECT id, at, kind, manifest, line, COALESCE(document_id,0), source_id, data, hash FROM events`
	rows, err := j.db.Query(query+where+` ORDER BY id`, args...)
	if err != nil {
		return fmt.Errorf("journal: listing events: %w", err)
	}
	defer rows.Close()
	var events []Event
	for rows.Next() {
		var e Event
		var at sql.NullInt64
		var data string
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.Manifest, &e.Line, &e.DocID, &e.SourceID, &data, &e.Hash); err != nil {
			return fmt.Errorf("journal: listing events: %w", err)
		}
		e.At, e.Data = fromMS(at), json.RawMessage(data)
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("journal: listing events: %w", err)
	}
	rows.Close()
	for _, e := range events {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
