package journal

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
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
}

// appendEvent adds e to the history inside tx, at the journal's time; its
// ID and At are ignored.
func (j *Journal) appendEvent(tx *sql.Tx, e Event) error {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	var doc sql.NullInt64
	if e.DocID != 0 {
		doc = sql.NullInt64{Int64: e.DocID, Valid: true}
	}
	_, err := tx.Exec(`INSERT INTO events(at, kind, manifest, line, document_id, source_id, data) VALUES(?,?,?,?,?,?,?)`,
		ms(j.now()), e.Kind, e.Manifest, e.Line, doc, e.SourceID, string(data))
	if err != nil {
		return fmt.Errorf("recording %s event: %w", e.Kind, err)
	}
	return nil
}

// Events calls fn for every event in the order they were recorded. fn
// runs after the query is closed, so it may use the journal.
func (j *Journal) Events(fn func(Event) error) error {
	rows, err := j.db.Query(`SELECT id, at, kind, manifest, line, COALESCE(document_id,0), source_id, data FROM events ORDER BY id`)
	if err != nil {
		return fmt.Errorf("journal: listing events: %w", err)
	}
	defer rows.Close()
	var events []Event
	for rows.Next() {
		var e Event
		var at sql.NullInt64
		var data string
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.Manifest, &e.Line, &e.DocID, &e.SourceID, &data); err != nil {
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
