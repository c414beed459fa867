package journal

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file is what a rerun of a manifest into the same journal looks at:
// the admission key of a rejected row (Readmit), and the digests of an
// admitted row's fields (Requeue, and the refusal of a done row's edit).

// Field names a manifest column whose value a row's digests cover. They
// are the manifest's column names.
const (
	FieldPath          = "path"
	FieldSHA256        = "sha256"
	FieldParticipantID = "participant_id"
	FieldReferralDate  = "referral_date"
)

// RowFields are the values of an admitted row that decide its document:
// which file, which bytes, and what its text must show.
type RowFields struct {
	Path, SHA256, ParticipantID, ReferralDate string
}

// fieldDigestLen is how many hex digits of each salted SHA-256 a row keeps:
// 32 bits tell an edit from none (a miss is one in four billion) and are
// far too few to find a participant ID again, even by trying every ID of
// a known format, since each digest matches millions of values.
const fieldDigestLen = 8

// Digest returns f as the journal stores it (the rows table's fields
// column): a JSON object with, for each field, the first 32 bits of the
// SHA-256 of the journal's salt, the field's name and its value. The salt
// is random, made on first use and kept in the meta table (field_salt),
// so the same ID digests differently in every journal.
func (j *Journal) Digest(f RowFields) (string, error) {
	salt, err := j.fieldSalt()
	if err != nil {
		return "", err
	}
	d := func(name, v string) string {
		h := sha256.New()
		h.Write([]byte(salt))
		h.Write([]byte{0})
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write([]byte(v))
		return hex.EncodeToString(h.Sum(nil))[:fieldDigestLen]
	}
	b, err := json.Marshal(map[string]string{
		FieldPath:          d(FieldPath, f.Path),
		FieldSHA256:        d(FieldSHA256, f.SHA256),
		FieldParticipantID: d(FieldParticipantID, f.ParticipantID),
		FieldReferralDate:  d(FieldReferralDate, f.ReferralDate),
	})
	return string(b), err
}

// fieldSalt returns the journal's salt, making it on first use. Two
// processes making it at once keep the first one written.
func (j *Journal) fieldSalt() (string, error) {
	if j.salt != "" {
		return j.salt, nil
	}
	if s, err := j.Meta("field_salt"); err != nil || s != "" {
		j.salt = s
		return s, err
	}
	err := j.tx(func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO meta(key,value) VALUES('field_salt',?) ON CONFLICT(key) DO NOTHING`, NewToken()+NewToken())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		return j.appendEvent(tx, Event{Kind: EventMetaSet}, metaTouch("field_salt"))
	})
	if err != nil {
		return "", fmt.Errorf("journal: field salt: %w", err)
	}
	s, err := j.Meta("field_salt")
	if err != nil {
		return "", fmt.Errorf("journal: field salt: %w", err)
	}
	j.salt = s
	return s, nil
}

// ChangedFields names the fields whose digests differ between two values
// of the fields column, in the manifest's column order; none when either
// is empty (a row recorded before digests were kept) or they are equal.
func ChangedFields(old, now string) []string {
	if old == "" || now == "" || old == now {
		return nil
	}
	var a, b map[string]string
	if json.Unmarshal([]byte(old), &a) != nil || json.Unmarshal([]byte(now), &b) != nil {
		return nil
	}
	var out []string
	for _, f := range []string{FieldPath, FieldSHA256, FieldParticipantID, FieldReferralDate} {
		if a[f] != b[f] {
			out = append(out, f)
		}
	}
	return out
}

// SetRowFields records the digests of a row seen before they were kept
// (an earlier build's journal); a row that has them keeps them.
func (j *Journal) SetRowFields(manifest string, line int, fields string) error {
	err := j.backfill(manifest, line, `UPDATE rows SET fields=? WHERE manifest=? AND line=? AND fields=''`, fields)
	if err != nil {
		return fmt.Errorf("journal: row %d: %w", line, classify(err))
	}
	return nil
}

// SetAdmitKey records the admission key of a rejected row that has none
// (an earlier build's journal), so that the next rerun compares with it.
func (j *Journal) SetAdmitKey(manifest string, line int, key string) error {
	err := j.backfill(manifest, line, `UPDATE rows SET admit_key=? WHERE manifest=? AND line=? AND admit_key=''`, key)
	if err != nil {
		return fmt.Errorf("journal: row %d: %w", line, classify(err))
	}
	return nil
}

// backfill runs update (with value, manifest and line as its arguments)
// on a row and records it in the custody log when it changed the row.
func (j *Journal) backfill(manifest string, line int, update, value string) error {
	return j.appendTx(func(tx *sql.Tx) error {
		res, err := tx.Exec(update, value, manifest, line)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		return j.appendEvent(tx, Event{Kind: EventRowBackfilled, Manifest: manifest, Line: line}, rowTouch(manifest, line))
	})
}

// Readmission is the data of a row_readmitted event: the verdict the row
// had before a rerun admitted it again.
type Readmission struct {
	// Kind is "rejected" for a row refused at parsing or admission,
	// "doc" for a row whose document was refused while queued.
	Kind   string         `json:"kind"`
	State  outcome.State  `json:"state"`
	Reason outcome.Reason `json:"reason"`
	SHA256 string         `json:"sha256,omitempty"`
}

// Readmit lets a rerun admit again a row refused at parsing or admission,
// because the row, its file or the admission settings changed (the caller
// compared admission keys). It records the earlier verdict as a
// row_readmitted event, then:
//
//   - a rejected row is removed, so the caller admits it as a new row (it
//     may now name another source_id: a missing_field fixed);
//   - a row whose document was rejected while queued (its file vanished
//     or became unreadable between runs) puts the document back in the
//     queue, its attempts counted afresh.
//
// A conflict is never readmitted (ErrNotReadmittable), nor a row whose
// verdict is no longer the one the caller saw (a process beside this one
// moved it): the caller reads the row again.
func (j *Journal) Readmit(st RowStatus) error {
	return j.appendTx(func(tx *sql.Tx) error {
		var kind rowKind
		var reason, sha string
		var docID sql.NullInt64
		err := tx.QueryRow(`SELECT kind, reason, sha256, document_id FROM rows WHERE manifest=? AND line=?`+j.forUpdate(), st.Manifest, st.Line).
			Scan(&kind, &reason, &sha, &docID)
		if err != nil {
			return fmt.Errorf("line %d: %w", st.Line, err)
		}
		ev := Event{Kind: EventRowReadmitted, Manifest: st.Manifest, Line: st.Line, SourceID: st.SourceID}
		data := Readmission{Kind: string(kind), State: outcome.Rejected, SHA256: sha}
		switch kind {
		case kindRejected:
			data.Reason = outcome.Reason(reason)
			if data.Reason == outcome.Conflict || data.Reason != st.Reason {
				return ErrNotReadmittable
			}
			if _, err := tx.Exec(`DELETE FROM rows WHERE manifest=? AND line=?`, st.Manifest, st.Line); err != nil {
				return err
			}
		case kindDoc:
			ev.DocID = docID.Int64
			var state string
			if err := tx.QueryRow(`SELECT state, reason FROM documents WHERE id=?`+j.forUpdate(), docID.Int64).Scan(&state, &data.Reason); err != nil {
				return err
			}
			if state != string(outcome.Rejected) || data.Reason == outcome.Conflict || data.Reason == outcome.RejectedByPerson || data.Reason != st.Reason {
				return ErrNotReadmittable
			}
			if err := requeue(tx, docID.Int64); err != nil {
				return err
			}
			if _, err := tx.Exec(`UPDATE rows SET admit_key='' WHERE manifest=? AND line=?`, st.Manifest, st.Line); err != nil {
				return err
			}
		default:
			return ErrNotReadmittable
		}
		b, _ := json.Marshal(data)
		ev.Data = b
		touched := []touch{rowTouch(st.Manifest, st.Line)}
		if ev.DocID != 0 {
			touched = append(touched, docTouch(ev.DocID))
		}
		return j.appendEvent(tx, ev, touched...)
	})
}

// ErrNotReadmittable means Readmit or Requeue found the row in another
// state than the one they apply to.
var ErrNotReadmittable = errors.New("row cannot be admitted again")

// requeue puts a final document back in the queue to be read again. Its
// attempts are counted afresh: attempts_base takes the attempts counted so
// far, and the cap applies to those made since. The attempt numbers go
// on, so the new artifact never takes an earlier one's name.
func requeue(tx *sql.Tx, docID int64) error {
	_, err := tx.Exec(`UPDATE documents SET state=?, reason='', attempts_base=attempts-abandoned, next_attempt_at=0,
		mean_confidence=NULL, band='', artifact='', artifact_sha256='', artifact_size=NULL, content_sha256='', finished_at=NULL,
		lease_owner=NULL, lease_token=NULL, lease_expires=NULL WHERE id=?`, outcome.Queued, docID)
	return err
}

// RowChange is the data of a row_changed event: which fields of a row in
// review changed, the verdict they superseded, and the artifact of that
// reading, which stays on disk (verify checks it against this record).
type RowChange struct {
	Fields         []string       `json:"fields"`
	FromState      outcome.State  `json:"from_state"`
	FromReason     outcome.Reason `json:"from_reason"`
	Artifact       string         `json:"artifact,omitempty"`
	ArtifactSHA256 string         `json:"artifact_sha256,omitempty"`
	ArtifactSize   int64          `json:"artifact_size,omitempty"`
}

// Requeue sends the document of a row in review back to the queue because
// the row's fields changed (changed names them; fields is their new
// digest): the document is read again under what the row now says. A row
// whose document is still queued only takes the new digests. The change
// is recorded as a row_changed event. Any other row (done, rejected, a
// duplicate) is refused with ErrNotReadmittable.
func (j *Journal) Requeue(manifest string, line int, fields string, changed []string) error {
	return j.appendTx(func(tx *sql.Tx) error {
		var docID sql.NullInt64
		var kind rowKind
		var sourceID string
		if err := tx.QueryRow(`SELECT kind, source_id, document_id FROM rows WHERE manifest=? AND line=?`+j.forUpdate(), manifest, line).
			Scan(&kind, &sourceID, &docID); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		c := RowChange{Fields: slices.Clone(changed)}
		if err := tx.QueryRow(`SELECT state, reason, artifact, artifact_sha256, COALESCE(artifact_size,0) FROM documents WHERE id=?`+j.forUpdate(), docID.Int64).
			Scan(&c.FromState, &c.FromReason, &c.Artifact, &c.ArtifactSHA256, &c.ArtifactSize); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		switch {
		case kind != kindDoc:
			return ErrNotReadmittable
		case c.FromState == outcome.Review:
			if err := requeue(tx, docID.Int64); err != nil {
				return err
			}
		case c.FromState == outcome.Queued:
			// Not read yet (or being read): the reading to come
			// validates what the row now says.
			c.Artifact, c.ArtifactSHA256, c.ArtifactSize = "", "", 0
		default:
			return ErrNotReadmittable
		}
		if _, err := tx.Exec(`UPDATE rows SET fields=? WHERE manifest=? AND line=?`, fields, manifest, line); err != nil {
			return err
		}
		b, _ := json.Marshal(c)
		return j.appendEvent(tx, Event{Kind: EventRowChanged, Manifest: manifest, Line: line, DocID: docID.Int64, SourceID: sourceID, Data: b},
			rowTouch(manifest, line), docTouch(docID.Int64))
	})
}
