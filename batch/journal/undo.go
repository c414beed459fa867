package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file takes a person's decision back (refbatch review undo): one
// more decision, of action Undo, that puts the document in review again
// for the reason it had. The decision undone stays in the history, as
// every event does; verify finds the document's state explained by its
// artifact again.

// Undo is the action of a decision that takes back the latest accept or
// reject of a document: it is in review again, for the reason it had.
const Undo Action = "undo"

// NotUndoableError refuses an undo: the document's latest decision is
// not an accept or a reject that still stands.
type NotUndoableError struct {
	SourceID string
	Why      string
}

func (e *NotUndoableError) Error() string {
	return fmt.Sprintf("%s: nothing to undo: %s", e.SourceID, e.Why)
}

// UndoDecision records d (its Action Undo) about the document with
// sourceID, in one transaction: its latest decision must be an accept
// that left it done, or a reject that left it rejected rejected_by_person,
// with the artifact decided about still its own. The document is then in
// review again, for the reason it had before that decision, its artifact,
// confidence and band as they are. A retry cannot be undone (the reading
// it superseded is no longer the document's: decide again once it is read
// again), nor a dismissal (dismiss a row again rather), nor an undo. It
// returns d as recorded (FromState and FromReason the state undone), a
// *NotUndoableError, a *ChangedError when d.Since is not the document's
// latest event, or ErrNoDocument.
func (j *Journal) UndoDecision(sourceID string, d Decision) (Decision, error) {
	d.Action = Undo
	err := j.appendTx(func(tx *sql.Tx) error {
		var id int64
		var state outcome.State
		var reason outcome.Reason
		err := tx.QueryRow(`SELECT id, state, reason, artifact, artifact_sha256, COALESCE(artifact_size,0) FROM documents WHERE source_id=?`+j.forUpdate(), sourceID).
			Scan(&id, &state, &reason, &d.Artifact, &d.ArtifactSHA256, &d.ArtifactSize)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", sourceID, ErrNoDocument)
		}
		if err != nil {
			return err
		}
		if err := j.unchangedSince(tx, id, d.Since, sourceID, state, reason); err != nil {
			return err
		}
		last, ok, err := latestDecision(tx, id)
		if err != nil {
			return err
		}
		if why := notUndoable(last, ok, state, reason, d.Artifact); why != "" {
			return &NotUndoableError{SourceID: sourceID, Why: why}
		}
		d.FromState, d.FromReason = state, reason
		if _, err := tx.Exec(`UPDATE documents SET state=?, reason=? WHERE id=? AND state=?`, outcome.Review, last.FromReason, id, state); err != nil {
			return err
		}
		data, err := json.Marshal(d)
		if err != nil {
			return err
		}
		var manifest string
		var line int
		err = tx.QueryRow(`SELECT manifest, line FROM rows WHERE document_id=? AND kind=? ORDER BY line DESC LIMIT 1`, id, kindDoc).Scan(&manifest, &line)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		d.At = time.UnixMilli(ms(j.now()))
		return j.appendEvent(tx, Event{Kind: EventDecision, Manifest: manifest, Line: line, DocID: id, SourceID: sourceID, Data: data}, docTouch(id))
	})
	if err != nil {
		return d, fmt.Errorf("journal: undoing the decision about %s: %w", sourceID, err)
	}
	return d, nil
}

// notUndoable says why the latest decision last (ok false: none) about a
// document now state and reason, with artifact, cannot be undone; "" when
// it can.
func notUndoable(last Decision, ok bool, state outcome.State, reason outcome.Reason, artifact string) string {
	switch {
	case !ok:
		return "no person decided about it"
	case last.Action == Retry:
		return "its latest decision is a retry, which cannot be undone: decide again once it is read again"
	case last.Action != Accept && last.Action != Reject:
		return "its latest decision is " + string(last.Action) + ", which cannot be undone"
	case last.FromState != outcome.Review || last.FromReason == "":
		return "the decision was not about a document in review"
	case last.Action == Accept && state != outcome.Done, last.Action == Reject && (state != outcome.Rejected || reason != outcome.RejectedByPerson):
		return fmt.Sprintf("its latest decision, %s, no longer stands: it is %s %s", last.Action, state, reason)
	case last.Artifact != artifact:
		return "it was read again since the decision"
	}
	return ""
}
