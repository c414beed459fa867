package journal

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/refbatch/refbatch/report/outcome"
)

// Admit records a row whose file passed admission and returns its status:
//
//   - a new source_id creates a queued document owned by this row;
//   - the same source_id with the same bytes as an earlier row's document
//     makes this row a duplicate of it (no second OCR);
//   - the same source_id with different bytes rejects this row as conflict;
//     the first document is never overwritten;
//   - a row seen before returns its recorded status. If it owns a document
//     still queued whose bytes have since changed, that document is rejected
//     as conflict.
func (j *Journal) Admit(a Admission) (RowStatus, error) {
	// fresh: a new document's row as written, read no more after the commit.
	var fresh *RowStatus
	err := j.hotTx(func(tx *sql.Tx) error {
		fresh = nil
		return j.admitIn(tx, a, &fresh)
	})
	if err != nil {
		return RowStatus{}, fmt.Errorf("journal: admitting line %d: %w", a.Line, err)
	}
	if fresh != nil {
		return *fresh, nil
	}
	st, _, err := j.Row(a.Manifest, a.Line)
	return st, err
}

// admitIn is Admit's write in tx; it sets *fresh to the row's status
// when it made a new document.
func (j *Journal) admitIn(tx *sql.Tx, a Admission, fresh **RowStatus) error {
	now := ms(j.now())
	var oldSource string
	var kind rowKind
	var docID sql.NullInt64
	err := tx.QueryRow(`SELECT source_id, kind, document_id FROM rows WHERE manifest=? AND line=?`+j.forUpdate(), a.Manifest, a.Line).
		Scan(&oldSource, &kind, &docID)
	if err == nil {
		if oldSource != a.SourceID {
			return fmt.Errorf("line %d: journal has source_id %q: %w", a.Line, oldSource, ErrManifestChanged)
		}
		if kind != kindDoc {
			return nil
		}
		res, err := tx.Exec(`UPDATE documents SET state=?, reason=?, lease_owner=NULL, lease_token=NULL, lease_expires=NULL, finished_at=?
			WHERE id=? AND state=? AND sha256<>?`, outcome.Rejected, outcome.Conflict, now, docID.Int64, outcome.Queued, a.SHA256)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil
		}
		return j.appendEvent(tx, Event{Kind: EventRowRejected, Manifest: a.Manifest, Line: a.Line, DocID: docID.Int64, SourceID: a.SourceID},
			docTouch(docID.Int64), rowTouch(a.Manifest, a.Line))
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	ev := Event{Kind: EventRowAdmitted, Manifest: a.Manifest, Line: a.Line, SourceID: a.SourceID}
	var existing int64
	var existingSHA string
	err = tx.QueryRow(`SELECT id, sha256 FROM documents WHERE source_id=?`, a.SourceID).Scan(&existing, &existingSHA)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		var id int64
		err := tx.QueryRow(`INSERT INTO documents(source_id, sha256, path, manifest_line, size, pages, state, trace_id, admitted_at)
			VALUES(?,?,?,?,?,?,?,?,?) RETURNING id`, a.SourceID, a.SHA256, a.Path, a.Line, a.Size, a.Pages, outcome.Queued, NewToken(), now).Scan(&id)
		if err != nil {
			return err
		}
		_, err = tx.Exec(`INSERT INTO rows(manifest, line, source_id, kind, sha256, document_id, recorded_at, fields) VALUES(?,?,?,?,?,?,?,?)`,
			a.Manifest, a.Line, a.SourceID, kindDoc, a.SHA256, id, now, a.Fields)
		if err != nil {
			return err
		}
		ev.DocID = id
		*fresh = &RowStatus{Manifest: a.Manifest, Line: a.Line, SourceID: a.SourceID, State: outcome.Queued, SHA256: a.SHA256,
			DocID: id, Fields: a.Fields}
		return j.appendEvent(tx, ev, docTouch(id), rowTouch(a.Manifest, a.Line))
	case err != nil:
		return err
	case existingSHA == a.SHA256:
		_, err = tx.Exec(`INSERT INTO rows(manifest, line, source_id, kind, sha256, document_id, recorded_at, fields) VALUES(?,?,?,?,?,?,?,?)`,
			a.Manifest, a.Line, a.SourceID, kindDuplicate, a.SHA256, existing, now, a.Fields)
		if err != nil {
			return err
		}
		ev.DocID = existing
		return j.appendEvent(tx, ev, rowTouch(a.Manifest, a.Line))
	default:
		_, err = tx.Exec(`INSERT INTO rows(manifest, line, source_id, kind, reason, sha256, recorded_at) VALUES(?,?,?,?,?,?,?)`,
			a.Manifest, a.Line, a.SourceID, kindRejected, outcome.Conflict, a.SHA256, now)
		if err != nil {
			return err
		}
		ev.Kind = EventRowRejected
		return j.appendEvent(tx, ev, rowTouch(a.Manifest, a.Line))
	}
}
