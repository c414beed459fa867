package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file records a document validated again from its artifact, with
// no OCR: under changed validation settings (EventRevalidated), or
// against corrected manifest fields (EventAmended).

// The kinds of a verdict found again from an artifact.
const (
	// EventRevalidated: a document in review was validated again from
	// its artifact because the run's validation settings changed; data
	// is a Revalidation.
	EventRevalidated EventKind = "revalidated"
	// EventAmended: a done or review row's participant_id or
	// referral_date was corrected, and its document validated again from
	// its artifact against them; data is a Revalidation with who, which
	// fields and their salted digests before and after, never the values.
	EventAmended EventKind = "amended"
)

// Revalidation is the data of a revalidated or amended event: the verdict
// it replaced, the one it found, the artifact it read (which stays the
// document's), and why.
type Revalidation struct {
	FromState      outcome.State  `json:"from_state"`
	FromReason     outcome.Reason `json:"from_reason"`
	State          outcome.State  `json:"state"`
	Reason         outcome.Reason `json:"reason"`
	MeanConfidence float64        `json:"mean_confidence"`
	Band           outcome.Band   `json:"band"`
	Artifact       string         `json:"artifact"`
	ArtifactSHA256 string         `json:"artifact_sha256"`
	ArtifactSize   int64          `json:"artifact_size,omitempty"` // 0: none recorded
	// Validation is the validation settings the verdict was found under
	// (bands, coverage threshold, checks).
	Validation string `json:"validation"`
	// Detail and Pages are what exactly the verdict found and the pages
	// it names (Result's Detail and DetailPages), when it says.
	Detail string `json:"detail,omitempty"`
	Pages  []int  `json:"pages,omitempty"`
	// An amendment's: who ran the run that took it, the fields changed
	// and their digests (Digest's) before and after.
	User   string            `json:"user,omitempty"`
	Host   string            `json:"host,omitempty"`
	Fields []string          `json:"fields,omitempty"`
	Before map[string]string `json:"before,omitempty"`
	After  map[string]string `json:"after,omitempty"`
}

// ErrVerdictMoved refuses a revalidation whose document is no longer in
// the state, or under the artifact, it was validated from: another
// process changed it meanwhile.
var ErrVerdictMoved = errors.New("the document changed meanwhile")

// Revalidate records rv (kind EventRevalidated or EventAmended) for the
// document of the row at manifest and line: its state, reason, band and
// confidence become rv's, in one transaction, only if it is still in
// rv.FromState under rv's artifact (else ErrVerdictMoved). fields, when
// not "", is the row's new field digests (an amendment).
func (j *Journal) Revalidate(manifest string, line int, kind EventKind, rv Revalidation, fields string) error {
	err := j.appendTx(func(tx *sql.Tx) error {
		var docID int64
		var sourceID string
		if err := tx.QueryRow(`SELECT COALESCE(document_id,0), source_id FROM rows WHERE manifest=? AND line=?`+j.forUpdate(), manifest, line).
			Scan(&docID, &sourceID); err != nil {
			return err
		}
		reason := rv.Reason
		res, err := tx.Exec(`UPDATE documents SET state=?, reason=?, band=?, mean_confidence=? WHERE id=? AND state=? AND artifact_sha256=?`,
			rv.State, reason, rv.Band, rv.MeanConfidence, docID, rv.FromState, rv.ArtifactSHA256)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			if err != nil {
				return err
			}
			return ErrVerdictMoved
		}
		touched := []touch{docTouch(docID)}
		if fields != "" {
			if _, err := tx.Exec(`UPDATE rows SET fields=? WHERE manifest=? AND line=?`, fields, manifest, line); err != nil {
				return err
			}
			touched = append(touched, rowTouch(manifest, line))
		}
		b, err := json.Marshal(rv)
		if err != nil {
			return err
		}
		return j.appendEvent(tx, Event{Kind: kind, Manifest: manifest, Line: line, DocID: docID, SourceID: sourceID, Data: b}, touched...)
	})
	if err != nil {
		return fmt.Errorf("journal: validating line %d again: %w", line, err)
	}
	return nil
}

// DocRevalidation is a revalidation with the document it is about.
type DocRevalidation struct {
	EventID  int64
	At       time.Time
	Kind     EventKind
	DocID    int64
	SourceID string
	Revalidation
}

// Revalidations returns every revalidated and amended event, oldest
// first.
func (j *Journal) Revalidations() ([]DocRevalidation, error) {
	var out []DocRevalidation
	err := j.Events(func(e Event) error {
		dr := DocRevalidation{EventID: e.ID, At: e.At, Kind: e.Kind, DocID: e.DocID, SourceID: e.SourceID}
		if err := json.Unmarshal(e.Data, &dr.Revalidation); err != nil {
			return fmt.Errorf("journal: event %d: %w", e.ID, err)
		}
		out = append(out, dr)
		return nil
	}, EventRevalidated, EventAmended)
	return out, err
}

// LatestValidation is the validation settings of the latest revalidated
// or amended event of document id, "" when it has none.
func (j *Journal) LatestValidation(id int64) (string, error) {
	var data string
	err := j.db.QueryRow(`SELECT data FROM events WHERE document_id=? AND kind IN (?,?) ORDER BY id DESC LIMIT 1`,
		id, EventRevalidated, EventAmended).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("journal: revalidations of document %d: %w", id, err)
	}
	var rv Revalidation
	if err := json.Unmarshal([]byte(data), &rv); err != nil {
		return "", fmt.Errorf("journal: revalidations of document %d: %w", id, err)
	}
	return rv.Validation, nil
}
