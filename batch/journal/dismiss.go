package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file records that a person acknowledged a rejected row (refbatch
// review dismiss): the row stays rejected, with its reason, and no longer
// counts as needing a person. The decision is one EventDecision of action
// Dismiss, which changes no table: the row is found dismissed by its
// events, for as long as it stays rejected for the reason dismissed.

// Dismiss is the decision that a rejected row needs nothing more: a
// person saw it and acknowledged the refusal.
const Dismiss Action = "dismiss"

// NotRejectedError refuses a dismissal of a source_id none of whose rows
// is rejected.
type NotRejectedError struct {
	SourceID string
	State    outcome.State
	Reason   outcome.Reason
}

func (e *NotRejectedError) Error() string {
	msg := fmt.Sprintf("%s is %s", e.SourceID, e.State)
	if e.Reason != "" {
		msg += " " + string(e.Reason)
	}
	return msg + ", not rejected: only a rejected row can be dismissed"
}

// ErrDismissed refuses a dismissal of a source_id whose rejected rows are
// all dismissed already.
var ErrDismissed = errors.New("dismissed already")

// dismissTarget is one rejected row a dismissal is about.
type dismissTarget struct {
	manifest string
	line     int
	docID    int64
	reason   outcome.Reason
}

// Dismiss records d (its action Dismiss) about every rejected row with
// sourceID that is not dismissed yet, one event each, in one transaction;
// it returns the decisions recorded (with From filled). A source_id with
// no row is ErrNoDocument; one with rows none of them rejected is a
// *NotRejectedError; one whose rejected rows are all dismissed already
// is ErrDismissed. When d.Since is not 0 and not the source_id's latest
// event (SourceVersions), it is a *ChangedError: the row was admitted
// again, or decided, since the person saw it.
func (j *Journal) Dismiss(sourceID string, d Decision) ([]Decision, error) {
	d.Action = Dismiss
	var out []Decision
	err := j.tx(func(tx *sql.Tx) error {
		out = nil
		targets, err := dismissTargets(tx, sourceID)
		if err != nil {
			return err
		}
		if d.Since != 0 {
			if err := j.chainPending(tx); err != nil {
				return err
			}
			var latest int64
			if err := tx.QueryRow(`SELECT COALESCE(MAX(id),0) FROM events WHERE source_id=?`, sourceID).Scan(&latest); err != nil {
				return err
			}
			if latest != d.Since {
				return &ChangedError{SourceID: sourceID, State: outcome.Rejected, Reason: targets[0].reason, Latest: latest}
			}
		}
		dismissed, err := readDismissals(tx)
		if err != nil {
			return err
		}
		for _, t := range targets {
			if dismissed.has(t.manifest, t.line, t.docID, t.reason) {
				continue
			}
			rec := d
			rec.FromState, rec.FromReason = outcome.Rejected, t.reason
			data, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			rec.At = time.UnixMilli(ms(j.now()))
			if err := j.appendEvent(tx, Event{Kind: EventDecision, Manifest: t.manifest, Line: t.line, DocID: t.docID, SourceID: sourceID, Data: data}); err != nil {
				return err
			}
			out = append(out, rec)
		}
		if len(out) == 0 {
			return fmt.Errorf("%s: %w", sourceID, ErrDismissed)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("journal: dismissing %s: %w", sourceID, err)
	}
	return out, nil
}

// dismissTargets are the rejected rows with sourceID, one per document;
// ErrNoDocument when no row has it, a *NotRejectedError when none is
// rejected.
func dismissTargets(q queryer, sourceID string) ([]dismissTarget, error) {
	rows, err := q.Query(`SELECT r.manifest, r.line, r.kind, r.reason, COALESCE(r.document_id,0), COALESCE(d.state,''), COALESCE(d.reason,'')
		FROM rows r LEFT JOIN documents d ON d.id = r.document_id WHERE r.source_id=? ORDER BY r.manifest, r.line`, sourceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []dismissTarget
	var refused *NotRejectedError
	docs := map[int64]bool{}
	for rows.Next() {
		var t dismissTarget
		var kind rowKind
		var state, docReason string
		if err := rows.Scan(&t.manifest, &t.line, &kind, &t.reason, &t.docID, &state, &docReason); err != nil {
			return nil, err
		}
		switch {
		case kind == kindRejected:
			t.docID = 0
			out = append(out, t)
		case kind == kindDoc && outcome.State(state) == outcome.Rejected && !docs[t.docID]:
			docs[t.docID] = true
			t.reason = outcome.Reason(docReason)
			out = append(out, t)
		case refused == nil:
			refused = &NotRejectedError{SourceID: sourceID, State: outcome.State(state), Reason: outcome.Reason(docReason)}
			if kind == kindDuplicate {
				refused.State, refused.Reason = outcome.Duplicate, ""
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch {
	case len(out) > 0:
		return out, nil
	case refused != nil:
		return nil, refused
	}
	return nil, fmt.Errorf("%s: %w", sourceID, ErrNoDocument)
}

// dismissals are the rejections persons dismissed: per row with no
// document (manifest and line) and per document, the reasons dismissed.
type dismissals struct {
	rows map[string][]Decision
	docs map[int64][]Decision
}

func rowKey(manifest string, line int) string { return fmt.Sprintf("%d:%s", line, manifest) }

// has reports whether the row (docID 0 for a row with no document),
// rejected for reason, was dismissed for that reason.
func (ds dismissals) has(manifest string, line int, docID int64, reason outcome.Reason) bool {
	return ds.latest(manifest, line, docID, reason) != nil
}

// latest is the latest dismissal of the row for reason, nil if none.
func (ds dismissals) latest(manifest string, line int, docID int64, reason outcome.Reason) *Decision {
	list := ds.rows[rowKey(manifest, line)]
	if docID != 0 {
		list = ds.docs[docID]
	}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].FromReason == reason {
			return &list[i]
		}
	}
	return nil
}

// readDismissals reads every dismissal from the decision events (they
// are few: one per row a person looked at).
func readDismissals(q queryer) (dismissals, error) {
	ds := dismissals{rows: map[string][]Decision{}, docs: map[int64][]Decision{}}
	moves, err := readLineTracker(q)
	if err != nil {
		return ds, err
	}
	rows, err := q.Query(`SELECT id, manifest, line, COALESCE(document_id,0), at, data FROM events WHERE kind=? ORDER BY id`, EventDecision)
	if err != nil {
		return ds, err
	}
	defer rows.Close()
	for rows.Next() {
		var manifest, data string
		var line int
		var id, doc int64
		var at sql.NullInt64
		if err := rows.Scan(&id, &manifest, &line, &doc, &at, &data); err != nil {
			return ds, err
		}
		d, err := parseDecision(data, at)
		if err != nil {
			return ds, err
		}
		switch {
		case d.Action != Dismiss:
		case doc != 0:
			ds.docs[doc] = append(ds.docs[doc], d)
		default:
			k := rowKey(manifest, moves.now(id, manifest, line))
			ds.rows[k] = append(ds.rows[k], d)
		}
	}
	return ds, rows.Err()
}

// OpenRows counts, per reason, the rows of one manifest (every manifest
// when manifest is "") that still need a person (outcome.Open): the
// count behind run's exit 4, status and the notifications.
func (j *Journal) OpenRows(manifest string) (map[outcome.Reason]int, error) {
	open, err := openRows(j.db, manifest)
	if err != nil {
		return nil, fmt.Errorf("journal: counting the rows that need a person: %w", err)
	}
	return open, nil
}

func openRows(q queryer, manifest string) (map[outcome.Reason]int, error) {
	ds, err := readDismissals(q)
	if err != nil {
		return nil, err
	}
	rows, err := q.Query(`SELECT r.manifest, r.line, r.kind, r.reason, COALESCE(r.document_id,0), COALESCE(d.state,''), COALESCE(d.reason,'')
		FROM rows r LEFT JOIN documents d ON d.id = r.document_id
		WHERE (?='' OR r.manifest=?) AND r.line > 0 AND (r.kind=? OR d.state IN (?,?))`, manifest, manifest, kindRejected, outcome.Review, outcome.Rejected)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	open := map[outcome.Reason]int{}
	for rows.Next() {
		var m string
		var line int
		var kind rowKind
		var reason outcome.Reason
		var doc int64
		var state, docReason string
		if err := rows.Scan(&m, &line, &kind, &reason, &doc, &state, &docReason); err != nil {
			return nil, err
		}
		st := outcome.Rejected
		if kind != kindRejected {
			st, reason = outcome.State(state), outcome.Reason(docReason)
		} else {
			doc = 0
		}
		if kind == kindDuplicate {
			continue
		}
		if outcome.Open(st, reason, ds.has(m, line, doc, reason)) {
			open[reason]++
		}
	}
	return open, rows.Err()
}

// SourceVersions returns each source_id's latest event: the version a
// dismissal's Decision.Since is checked against.
func (j *Journal) SourceVersions() (map[string]int64, error) {
	j.settle()
	rows, err := j.db.Query(`SELECT source_id, MAX(id) FROM events WHERE source_id <> '' GROUP BY source_id`)
	if err != nil {
		return nil, fmt.Errorf("journal: reading the rows' versions: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id string
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, fmt.Errorf("journal: reading the rows' versions: %w", err)
		}
		out[id] = v
	}
	return out, rows.Err()
}
