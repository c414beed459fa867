package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file records a person's transcriptions (refbatch desk): the text
// of a region refbatch could not read, typed by a person, goes into a new
// artifact that keeps the old one's text; the journal then names the new
// artifact and keeps the old one in an EventTranscription, so that verify
// checks both. The event holds no text.

// Transcription is what an EventTranscription records: who typed the
// text of which region, and the artifact it replaced with which.
type Transcription struct {
	User string `json:"user"`
	Host string `json:"host"`
	// Page (from 0) and Box (pixels of the page as read: x0, y0, x1, y1)
	// are the region; Field is the manifest field it corrects, if any.
	Page  int    `json:"page"`
	Box   [4]int `json:"box"`
	Field string `json:"field,omitempty"`
	// Artifact, ArtifactSHA256 and ArtifactSize are the artifact
	// replaced, which stays on disk; NewArtifact, NewArtifactSHA256 and
	// NewArtifactSize the one that replaces it. A size is the file's on
	// disk as written (0: none recorded); ArtifactSize is the journal's
	// record of it, set as the event is written.
	Artifact          string `json:"artifact"`
	ArtifactSHA256    string `json:"artifact_sha256"`
	ArtifactSize      int64  `json:"artifact_size,omitempty"`
	NewArtifact       string `json:"new_artifact"`
	NewArtifactSHA256 string `json:"new_artifact_sha256"`
	NewArtifactSize   int64  `json:"new_artifact_size,omitempty"`
	// Since, when not 0, is the document's latest event as the person saw
	// it (see Decision.Since).
	Since int64 `json:"-"`
}

// Transcribe records t about the document with sourceID in one
// transaction: the document must be in review with t.Artifact as its
// artifact (else a *NotInReviewError, or a *ChangedError when it changed
// since t.Since or its artifact is another), and then names
// t.NewArtifact as its artifact.
func (j *Journal) Transcribe(sourceID string, t Transcription) error {
	err := j.replaceArtifact(sourceID, EventTranscription, t.Since, t.Artifact, t.NewArtifact, t.NewArtifactSHA256, t.NewArtifactSize,
		func(kept int64) any { t.ArtifactSize = kept; return t })
	if err != nil {
		return fmt.Errorf("journal: transcription of %s: %w", sourceID, err)
	}
	return nil
}

// TranscriptionWithdrawal is what an EventTranscriptionWithdrawn records: who took
// back which transcription (by its amendment, as the journal names
// artifacts), and the artifact replaced (kept) with the one that records
// the withdrawal. The transcription and its event stay in custody.
type TranscriptionWithdrawal struct {
	User string `json:"user"`
	Host string `json:"host"`
	// Note is the person's own words, stored in the clear.
	Note string `json:"note,omitempty"`
	// Withdraws is the transcription's amendment; Page its page.
	Withdraws string `json:"withdraws"`
	Page      int    `json:"page"`
	// Artifact, ArtifactSHA256, ArtifactSize and the New ones are as
	// Transcription's: the withdrawal is an artifact version too.
	Artifact          string `json:"artifact"`
	ArtifactSHA256    string `json:"artifact_sha256"`
	ArtifactSize      int64  `json:"artifact_size,omitempty"`
	NewArtifact       string `json:"new_artifact"`
	NewArtifactSHA256 string `json:"new_artifact_sha256"`
	NewArtifactSize   int64  `json:"new_artifact_size,omitempty"`
	// Since is as Transcription's.
	Since int64 `json:"-"`
}

// WithdrawTranscription records w about the document with sourceID, as
// Transcribe records a transcription: the document must be in review
// with w.Artifact as its artifact, and then names w.NewArtifact.
func (j *Journal) WithdrawTranscription(sourceID string, w TranscriptionWithdrawal) error {
	err := j.replaceArtifact(sourceID, EventTranscriptionWithdrawn, w.Since, w.Artifact, w.NewArtifact, w.NewArtifactSHA256, w.NewArtifactSize,
		func(kept int64) any { w.ArtifactSize = kept; return w })
	if err != nil {
		return fmt.Errorf("journal: withdrawal of a transcription of %s: %w", sourceID, err)
	}
	return nil
}

// replaceArtifact names newArtifact (of newSize bytes on disk, 0: none
// recorded) as the artifact of the document with sourceID, in one
// transaction with the event of kind that records it: the document must
// be in review with artifact as its artifact, unchanged since the event
// since (0: not checked). The event's data is what event returns, given
// the size the journal recorded of the artifact kept (0: none), encoded.
func (j *Journal) replaceArtifact(sourceID string, kind EventKind, since int64, artifact, newArtifact, newSHA256 string, newSize int64, event func(kept int64) any) error {
	return j.appendTx(func(tx *sql.Tx) error {
		var id int64
		var state outcome.State
		var reason outcome.Reason
		var current, manifest string
		var line int
		var size int64
		err := tx.QueryRow(`SELECT id, state, reason, artifact, COALESCE(artifact_size,0) FROM documents WHERE source_id=?`+j.forUpdate(), sourceID).
			Scan(&id, &state, &reason, &current, &size)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", sourceID, ErrNoDocument)
		}
		if err != nil {
			return err
		}
		if err := j.chainPending(tx); err != nil {
			return err
		}
		var latest int64
		if err := tx.QueryRow(`SELECT COALESCE(MAX(id),0) FROM events WHERE document_id=?`, id).Scan(&latest); err != nil {
			return err
		}
		if (since != 0 && latest != since) || current != artifact {
			return &ChangedError{SourceID: sourceID, State: state, Reason: reason, Latest: latest}
		}
		if state != outcome.Review {
			return &NotInReviewError{SourceID: sourceID, State: state, Reason: reason}
		}
		if _, err := tx.Exec(`UPDATE documents SET artifact=?, artifact_sha256=?, artifact_size=? WHERE id=?`,
			newArtifact, newSHA256, sizeOrNull(newSize), id); err != nil {
			return err
		}
		data, err := json.Marshal(event(size)) // size: the kept artifact's, as recorded
		if err != nil {
			return err
		}
		err = tx.QueryRow(`SELECT manifest, line FROM rows WHERE document_id=? AND kind=? ORDER BY line LIMIT 1`, id, kindDoc).Scan(&manifest, &line)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return j.appendEvent(tx, Event{Kind: kind, Manifest: manifest, Line: line, DocID: id, SourceID: sourceID, Data: data}, docTouch(id))
	})
}

// sizeOrNull is an artifact's size as the journal records it: NULL for
// none (0).
func sizeOrNull(size int64) sql.NullInt64 { return sql.NullInt64{Int64: size, Valid: size > 0} }

// TranscriptionCount is how many transcriptions people made of a
// document, and how many of them were withdrawn since.
type TranscriptionCount struct{ Made, Withdrawn int }

// Transcriptions counts the transcriptions the journal records, and
// their withdrawals.
func (j *Journal) Transcriptions() (TranscriptionCount, error) {
	var n TranscriptionCount
	err := j.db.QueryRow(`SELECT COALESCE(SUM(CASE WHEN kind=? THEN 1 ELSE 0 END),0), COALESCE(SUM(CASE WHEN kind=? THEN 1 ELSE 0 END),0) FROM events WHERE kind IN (?,?)`,
		EventTranscription, EventTranscriptionWithdrawn, EventTranscription, EventTranscriptionWithdrawn).Scan(&n.Made, &n.Withdrawn)
	if err != nil {
		return n, fmt.Errorf("journal: counting transcriptions: %w", err)
	}
	return n, nil
}

// documentTranscriptions counts each document's transcriptions and
// withdrawals, by document ID; documents with none are absent.
func documentTranscriptions(db *sql.DB) (map[int64]TranscriptionCount, error) {
	rows, err := db.Query(`SELECT document_id, kind, COUNT(*) FROM events WHERE kind IN (?,?) AND document_id IS NOT NULL GROUP BY document_id, kind`,
		EventTranscription, EventTranscriptionWithdrawn)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]TranscriptionCount{}
	for rows.Next() {
		var id int64
		var kind EventKind
		var n int
		if err := rows.Scan(&id, &kind, &n); err != nil {
			return nil, err
		}
		c := out[id]
		if kind == EventTranscription {
			c.Made = n
		} else {
			c.Withdrawn = n
		}
		out[id] = c
	}
	return out, rows.Err()
}
