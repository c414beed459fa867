package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file records and reads the decisions a person makes about
// documents in review (refbatch review): each is one transaction that
// changes the document only if it is still in review, and appends an
// EventDecision to the history.

// Action is what a person decided about a document in review.
type Action string

// The decisions.
const (
	// Accept: the text is good enough; the document is done, and the
	// review reason stays in the decision as history.
	Accept Action = "accept"
	// Reject: the document is rejected rejected_by_person.
	Reject Action = "reject"
	// Retry: the document goes back to the queue to be read again, under
	// the decision's page policy, its attempts counted afresh.
	Retry Action = "retry"
)

// Decision is one decision about a document, as its event records it
// (EventDecision's data). It never holds document text; Note is the
// person's own words, stored in the clear.
type Decision struct {
	Action Action `json:"action"`
	User   string `json:"user"`
	Host   string `json:"host"`
	Note   string `json:"note,omitempty"`
	// FromState and FromReason are the document's state and reason
	// before the decision (review and its reason).
	FromState  outcome.State  `json:"from_state"`
	FromReason outcome.Reason `json:"from_reason"`
	// Settings is a retry's page policy (page.Policy's JSON): the one the
	// document is read again under.
	Settings json.RawMessage `json:"settings,omitempty"`
	// Artifact, ArtifactSHA256 and ArtifactSize are the document's
	// artifact when the decision was made: the one accepted or rejected,
	// or the one a retry supersedes, which stays on disk (size 0: none
	// recorded).
	Artifact       string `json:"artifact,omitempty"`
	ArtifactSHA256 string `json:"artifact_sha256,omitempty"`
	ArtifactSize   int64  `json:"artifact_size,omitempty"`
	// Attempts and Abandoned are the document's counts before a retry
	// started them afresh.
	Attempts  int `json:"attempts,omitempty"`
	Abandoned int `json:"abandoned,omitempty"`

	// At is when the decision was recorded (the event's time).
	At time.Time `json:"-"`
	// Since, when not 0, is the document's latest event as the person
	// deciding saw it (DocumentEvents): a document that has changed since
	// is refused with a *ChangedError, even if it is in review again. A
	// dismissal's Since is the source_id's latest event (SourceVersions).
	Since int64 `json:"-"`
}

// ChangedError refuses a decision about a document that changed since the
// person deciding looked at it (Decision.Since): another tab, another
// person or the CLI decided it, or a run read it again.
type ChangedError struct {
	SourceID string
	State    outcome.State
	Reason   outcome.Reason
	// Latest is the document's latest event now.
	Latest int64
}

func (e *ChangedError) Error() string {
	msg := fmt.Sprintf("%s changed since it was shown: it is now %s", e.SourceID, e.State)
	if e.Reason != "" {
		msg += " " + string(e.Reason)
	}
	return msg
}

// ErrNoDocument means no document has the source_id given: the journal
// never admitted one (a row rejected before OCR has none).
var ErrNoDocument = errors.New("no document with that source_id")

// NotInReviewError refuses a decision about a document that is not in
// review: decided already, never in review, or still queued.
type NotInReviewError struct {
	SourceID string
	State    outcome.State
	Reason   outcome.Reason
	// Earlier is the latest decision about the document, nil if none.
	Earlier *Decision
}

func (e *NotInReviewError) Error() string {
	msg := fmt.Sprintf("%s is %s", e.SourceID, e.State)
	if e.Reason != "" {
		msg += " " + string(e.Reason)
	}
	if d := e.Earlier; d != nil {
		msg += fmt.Sprintf(" (%s by %s on %s at %s)", d.Action, d.User, d.Host, d.At.UTC().Format(time.RFC3339))
	}
	return msg + ", not in review: only a document in review can be decided"
}

// Decide records d about the document with sourceID, in one transaction
// and only if the document is in review; otherwise it returns a
// *NotInReviewError (ErrNoDocument when there is none), or a
// *ChangedError when d.Since is not the document's latest event. It fills d's
// FromState, FromReason, Artifact and, for a retry, the counts, and
// returns d as recorded. retryPolicy is the page policy (JSON) of a retry,
// stored with the document and in the event.
//
//   - Accept: the document is done; its reason is cleared (the event keeps
//     it), its artifact, confidence and band stay.
//   - Reject: the document is rejected rejected_by_person; its artifact
//     stays.
//   - Retry: the document is queued again, with no verdict and no
//     artifact recorded (the superseded one stays on disk, named in the
//     event), attempts_base set to its attempts and abandoned to 0, so the
//     cap counts afresh; its attempt numbers, and so its artifacts' names,
//     keep increasing.
func (j *Journal) Decide(sourceID string, d Decision, retryPolicy string) (Decision, error) {
	switch d.Action {
	case Accept, Reject, Retry:
	default:
		return d, fmt.Errorf("journal: unknown decision %q", d.Action)
	}
	if d.Action == Retry {
		d.Settings = json.RawMessage(retryPolicy)
	}
	err := j.appendTx(func(tx *sql.Tx) error {
		var id int64
		var state outcome.State
		var reason outcome.Reason
		err := tx.QueryRow(`SELECT id, state, reason, artifact, artifact_sha256, COALESCE(artifact_size,0), attempts, abandoned FROM documents WHERE source_id=?`+j.forUpdate(), sourceID).
			Scan(&id, &state, &reason, &d.Artifact, &d.ArtifactSHA256, &d.ArtifactSize, &d.Attempts, &d.Abandoned)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", sourceID, ErrNoDocument)
		}
		if err != nil {
			return err
		}
		if err := j.unchangedSince(tx, id, d.Since, sourceID, state, reason); err != nil {
			return err
		}
		if state != outcome.Review {
			refused := &NotInReviewError{SourceID: sourceID, State: state, Reason: reason}
			if earlier, ok, err := latestDecision(tx, id); err != nil {
				return err
			} else if ok {
				refused.Earlier = &earlier
			}
			return refused
		}
		d.FromState, d.FromReason = state, reason
		now := ms(j.now())
		switch d.Action {
		case Accept:
			_, err = tx.Exec(`UPDATE documents SET state=?, reason='' WHERE id=? AND state=?`, outcome.Done, id, outcome.Review)
		case Reject:
			_, err = tx.Exec(`UPDATE documents SET state=?, reason=?, finished_at=? WHERE id=? AND state=?`,
				outcome.Rejected, outcome.RejectedByPerson, now, id, outcome.Review)
		case Retry:
			_, err = tx.Exec(`UPDATE documents SET state=?, reason='', mean_confidence=NULL, band='', artifact='', artifact_sha256='', artifact_size=NULL, content_sha256='',
				attempts_base=attempts, abandoned=0, retry_policy=?, next_attempt_at=0, finished_at=NULL,
				lease_owner=NULL, lease_token=NULL, lease_expires=NULL WHERE id=? AND state=?`,
				outcome.Queued, retryPolicy, id, outcome.Review)
		}
		if err != nil {
			return err
		}
		if d.Action != Retry {
			d.Attempts, d.Abandoned = 0, 0
		}
		data, err := json.Marshal(d)
		if err != nil {
			return err
		}
		var manifest string
		var line int
		err = tx.QueryRow(`SELECT manifest, line FROM rows WHERE document_id=? AND kind=? ORDER BY line LIMIT 1`, id, kindDoc).Scan(&manifest, &line)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		d.At = time.UnixMilli(now)
		return j.appendEvent(tx, Event{Kind: EventDecision, Manifest: manifest, Line: line, DocID: id, SourceID: sourceID, Data: data}, docTouch(id))
	})
	if err != nil {
		return d, fmt.Errorf("journal: deciding %s: %w", sourceID, err)
	}
	return d, nil
}

// latestDecision is the latest decision about document id.
func latestDecision(q interface {
	QueryRow(string, ...any) *sql.Row
}, id int64) (Decision, bool, error) {
	var at sql.NullInt64
	var data string
	err := q.QueryRow(`SELECT at, data FROM events WHERE kind=? AND document_id=? ORDER BY id DESC LIMIT 1`, EventDecision, id).Scan(&at, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return Decision{}, false, nil
	}
	if err != nil {
		return Decision{}, false, err
	}
	d, err := parseDecision(data, at)
	return d, err == nil, err
}

func parseDecision(data string, at sql.NullInt64) (Decision, error) {
	var d Decision
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return d, fmt.Errorf("reading a decision: %w", err)
	}
	d.At = fromMS(at)
	return d, nil
}

// LatestDecision returns the latest decision about document id; ok is
// false when a person never decided about it.
func (j *Journal) LatestDecision(id int64) (d Decision, ok bool, err error) {
	d, ok, err = latestDecision(j.db, id)
	if err != nil {
		return d, false, fmt.Errorf("journal: decisions of document %d: %w", id, err)
	}
	return d, ok, nil
}

// DocDecision is a decision with the document it is about.
type DocDecision struct {
	EventID  int64
	DocID    int64
	SourceID string
	Decision
}

// Decisions returns every decision, oldest first.
func (j *Journal) Decisions() ([]DocDecision, error) {
	rows, err := j.db.Query(`SELECT id, COALESCE(document_id,0), source_id, at, data FROM events WHERE kind=? ORDER BY id`, EventDecision)
	if err != nil {
		return nil, fmt.Errorf("journal: listing decisions: %w", err)
	}
	defer rows.Close()
	var out []DocDecision
	for rows.Next() {
		var dd DocDecision
		var at sql.NullInt64
		var data string
		if err := rows.Scan(&dd.EventID, &dd.DocID, &dd.SourceID, &at, &data); err != nil {
			return nil, fmt.Errorf("journal: listing decisions: %w", err)
		}
		if dd.Decision, err = parseDecision(data, at); err != nil {
			return nil, fmt.Errorf("journal: event %d: %w", dd.EventID, err)
		}
		out = append(out, dd)
	}
	return out, rows.Err()
}

// EventArtifact is an artifact an event names: one a decision accepted or
// rejected, or one superseded when its document was read again, which
// stays on disk.
type EventArtifact struct {
	EventID  int64
	Kind     EventKind
	DocID    int64
	SourceID string
	Artifact string
	SHA256   string
	// Size is the artifact's size on disk as the event recorded it; 0
	// when it recorded none (an event before sizes were recorded).
	Size int64
}

// EventArtifacts returns the artifacts the history events name (their
// data's artifact and artifact_sha256), oldest first. Only those name an
// artifact of their own; the custody log's other events, thousands in a
// large batch, carry table rows and are not read.
func (j *Journal) EventArtifacts() ([]EventArtifact, error) {
	artifact := `COALESCE(` + j.jsonText("data", "artifact") + `,'')`
	history, args := kindIn(HistoryKinds)
	rows, err := j.db.Query(`SELECT id, kind, COALESCE(document_id,0), source_id, `+artifact+`,
			COALESCE(`+j.jsonText("data", "artifact_sha256")+`,''), COALESCE(`+j.jsonText("data", "artifact_size")+`,'')
		FROM events WHERE `+history+` AND `+artifact+` <> '' ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("journal: listing the events' artifacts: %w", err)
	}
	defer rows.Close()
	var out []EventArtifact
	for rows.Next() {
		var a EventArtifact
		var size string
		if err := rows.Scan(&a.EventID, &a.Kind, &a.DocID, &a.SourceID, &a.Artifact, &a.SHA256, &size); err != nil {
			return nil, fmt.Errorf("journal: listing the events' artifacts: %w", err)
		}
		if size != "" {
			if a.Size, err = strconv.ParseInt(size, 10, 64); err != nil || a.Size < 0 {
				return nil, fmt.Errorf("journal: event %d records artifact_size %q, not a size", a.EventID, size)
			}
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// unchangedSince refuses a decision taken on document id as it was at
// event since (0: as it is now) when a later event has changed it: one
// committed and still pending is chained first (chainPending).
func (j *Journal) unchangedSince(tx *sql.Tx, id, since int64, sourceID string, state outcome.State, reason outcome.Reason) error {
	if since == 0 {
		return nil
	}
	if err := j.chainPending(tx); err != nil {
		return err
	}
	var latest int64
	if err := tx.QueryRow(`SELECT COALESCE(MAX(id),0) FROM events WHERE document_id=?`, id).Scan(&latest); err != nil {
		return err
	}
	if latest != since {
		return &ChangedError{SourceID: sourceID, State: state, Reason: reason, Latest: latest}
	}
	return nil
}
