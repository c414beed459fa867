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
	// disk as written (0: none recorded).
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
	err := j.tx(func(tx *sql.Tx) error {
		var id int64
		var state outcome.State
		var reason outcome.Reason
		var artifact, manifest string
		var line int
		var size int64
		err := tx.QueryRow(`SELECT id, state, reason, artifact, COALESCE(artifact_size,0) FROM documents WHERE source_id=?`, sourceID).
			Scan(&id, &state, &reason, &artifact, &size)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", sourceID, ErrNoDocument)
		}
		if err != nil {
			return err
		}
		var latest int64
		if err := tx.QueryRow(`SELECT COALESCE(MAX(id),0) FROM events WHERE document_id=?`, id).Scan(&latest); err != nil {
			return err
		}
		if (t.Since != 0 && latest != t.Since) || artifact != t.Artifact {
			return &ChangedError{SourceID: sourceID, State: state, Reason: reason, Latest: latest}
		}
		if state != outcome.Review {
			return &NotInReviewError{SourceID: sourceID, State: state, Reason: reason}
		}
		if _, err := tx.Exec(`UPDATE documents SET artifact=?, artifact_sha256=?, artifact_size=? WHERE id=?`,
			t.NewArtifact, t.NewArtifactSHA256, sizeOrNull(t.NewArtifactSize), id); err != nil {
			return err
		}
		t.ArtifactSize = size // the kept artifact's, as recorded
		data, err := json.Marshal(t)
		if err != nil {
			return err
		}
		err = tx.QueryRow(`SELECT manifest, line FROM rows WHERE document_id=? AND kind=? ORDER BY line LIMIT 1`, id, kindDoc).Scan(&manifest, &line)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return j.appendEvent(tx, Event{Kind: EventTranscription, Manifest: manifest, Line: line, DocID: id, SourceID: sourceID, Data: data}, docTouch(id))
	})
	if err != nil {
		return fmt.Errorf("journal: transcription of %s: %w", sourceID, err)
	}
	return nil
}

// sizeOrNull is an artifact's size as the journal records it: NULL for
// none (0).
func sizeOrNull(size int64) sql.NullInt64 { return sql.NullInt64{Int64: size, Valid: size > 0} }

// Transcriptions counts the transcriptions the journal records.
func (j *Journal) Transcriptions() (int, error) {
	var n int
	err := j.db.QueryRow(`SELECT COUNT(*) FROM events WHERE kind=?`, EventTranscription).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("journal: counting transcriptions: %w", err)
	}
	return n, nil
}
