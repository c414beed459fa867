package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// Doc is a document as the journal knows it.
type Doc struct {
	ID             int64
	SourceID       string
	SHA256         string
	Path           string
	Line           int
	Size           int64
	Pages          int
	State          outcome.State
	Reason         outcome.Reason
	Attempts       int
	Abandoned      int
	LeaseOwner     string
	LeaseExpires   time.Time
	NextAttemptAt  time.Time
	TraceID        string
	MeanConfidence float64
	Band           outcome.Band
	Artifact       string
	ArtifactSHA256 string
	// ArtifactSize is the artifact's size on disk as it was written: a
	// reader refuses a file of another size unread. 0 when none was
	// recorded (an artifact published before the journal recorded sizes,
	// schema version 6): a reader bounds it by its pages instead.
	ArtifactSize int64
	// ContentSHA256 is the artifact's content_sha256 as published ("" for
	// an artifact an earlier build published).
	ContentSHA256 string
	AdmittedAt    time.Time
	StartedAt     time.Time
	FinishedAt    time.Time
	// AttemptsBase is Attempts when a person last sent the document back
	// to the queue (a retry decision): the attempt cap counts from it.
	AttemptsBase int
	// RetryPolicy is the page policy (page.Policy's JSON) a retry decision
	// set for the document's next reading; "" reads it under the run's.
	RetryPolicy string
}

const docColumns = `id, source_id, sha256, path, manifest_line, size, pages, state, reason,
	attempts, abandoned, COALESCE(lease_owner,''), lease_expires, next_attempt_at, trace_id,
	COALESCE(mean_confidence,0), band, artifact, artifact_sha256, admitted_at, started_at, finished_at,
	attempts_base, retry_policy, content_sha256, COALESCE(artifact_size,0)`

// docColumns is docColumns as this journal reads them: a journal of a
// version before artifact sizes (sizeless) reads each as 0.
func (j *Journal) docColumns() string {
	if j.sizeless {
		return strings.Replace(docColumns, `COALESCE(artifact_size,0)`, `0`, 1)
	}
	return docColumns
}

type scanner interface{ Scan(...any) error }

func scanDoc(s scanner) (Doc, error) {
	var d Doc
	var leaseExp, next, admitted, started, finished sql.NullInt64
	err := s.Scan(&d.ID, &d.SourceID, &d.SHA256, &d.Path, &d.Line, &d.Size, &d.Pages, &d.State, &d.Reason,
		&d.Attempts, &d.Abandoned, &d.LeaseOwner, &leaseExp, &next, &d.TraceID,
		&d.MeanConfidence, &d.Band, &d.Artifact, &d.ArtifactSHA256, &admitted, &started, &finished,
		&d.AttemptsBase, &d.RetryPolicy, &d.ContentSHA256, &d.ArtifactSize)
	d.LeaseExpires, d.NextAttemptAt = fromMS(leaseExp), fromMS(next)
	d.AdmittedAt, d.StartedAt, d.FinishedAt = fromMS(admitted), fromMS(started), fromMS(finished)
	return d, err
}

// Document returns the document with the given id.
func (j *Journal) Document(id int64) (Doc, error) {
	d, err := scanDoc(j.db.QueryRow(`SELECT `+j.docColumns()+` FROM documents WHERE id=?`, id))
	if err != nil {
		return d, fmt.Errorf("journal: document %d: %w", id, err)
	}
	return d, nil
}

// DocumentBySource returns the document with the given source_id; ok is
// false when there is none.
func (j *Journal) DocumentBySource(sourceID string) (d Doc, ok bool, err error) {
	d, err = scanDoc(j.db.QueryRow(`SELECT `+j.docColumns()+` FROM documents WHERE source_id=?`, sourceID))
	if errors.Is(err, sql.ErrNoRows) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("journal: document %s: %w", sourceID, err)
	}
	return d, true, nil
}

// Documents calls fn for every document in manifest order.
func (j *Journal) Documents(fn func(Doc) error) error {
	return j.documents(`SELECT `+j.docColumns()+` FROM documents ORDER BY manifest_line`, fn)
}

// QueuedDocuments calls fn for every document not yet final. On a resumed
// batch of thousands these are few: the query touches only them.
func (j *Journal) QueuedDocuments(fn func(Doc) error) error {
	return j.documents(`SELECT `+j.docColumns()+` FROM documents WHERE state=? ORDER BY manifest_line`, fn, outcome.Queued)
}

// StreamDocuments calls fn for every document in manifest order, as
// Documents does, but straight from the query, one document at a time: its
// memory does not grow with the batch. fn runs while the query is open and
// must not use the journal (it has one connection).
func (j *Journal) StreamDocuments(fn func(Doc) error) error {
	rows, err := j.db.Query(`SELECT ` + j.docColumns() + ` FROM documents ORDER BY manifest_line`)
	if err != nil {
		return fmt.Errorf("journal: listing documents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDoc(rows)
		if err != nil {
			return fmt.Errorf("journal: listing documents: %w", err)
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("journal: listing documents: %w", err)
	}
	return nil
}

func (j *Journal) documents(query string, fn func(Doc) error, args ...any) error {
	rows, err := j.db.Query(query, args...)
	if err != nil {
		return fmt.Errorf("journal: listing documents: %w", err)
	}
	defer rows.Close()
	var docs []Doc
	for rows.Next() {
		d, err := scanDoc(rows)
		if err != nil {
			return fmt.Errorf("journal: listing documents: %w", err)
		}
		docs = append(docs, d)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	// fn runs after the query is closed: with one connection, fn may
	// itself use the journal.
	for _, d := range docs {
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

// Admission is what admission learned about a row whose file passed.
type Admission struct {
	Manifest string
	Line     int
	SourceID string
	SHA256   string
	Path     string
	Size     int64
	Pages    int
	// Fields is the row's field digests (Digest); "" records none.
	Fields string
}

// RowStatus is how a manifest row stands in the journal.
type RowStatus struct {
	Manifest string
	Line     int
	SourceID string
	State    outcome.State // the row's own state: rejected, duplicate, or its document's
	Reason   outcome.Reason
	SHA256   string
	DocID    int64 // 0 for a rejected row
	// AdmitKey is the admission key of a row rejected at parsing or
	// admission, "" when none was recorded (an earlier build, a conflict).
	AdmitKey string
	// Fields is the digests of an admitted row's fields (Digest), ""
	// when none were recorded (an earlier build).
	Fields string
}

// Row returns the status of the row at a manifest line; ok is false when the
// journal has not seen that line.
func (j *Journal) Row(manifest string, line int) (st RowStatus, ok bool, err error) {
	var kind rowKind
	var docID sql.NullInt64
	var docState, docReason sql.NullString
	err = j.db.QueryRow(`SELECT r.manifest, r.line, r.source_id, r.kind, r.reason, r.sha256, r.document_id, d.state, d.reason,
		r.admit_key, r.fields
		FROM rows r LEFT JOIN documents d ON d.id = r.document_id WHERE r.manifest=? AND r.line=?`, manifest, line).
		Scan(&st.Manifest, &st.Line, &st.SourceID, &kind, &st.Reason, &st.SHA256, &docID, &docState, &docReason,
			&st.AdmitKey, &st.Fields)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("journal: row %d: %w", line, err)
	}
	st.DocID = docID.Int64
	st.State, st.Reason = kind.outcome(st.Reason, docState.String, docReason.String)
	return st, true, nil
}

// outcome is the state and reason of a row of kind k: a rejected row's
// own reason, a duplicate's none, a document's its document's.
func (k rowKind) outcome(rowReason outcome.Reason, docState, docReason string) (outcome.State, outcome.Reason) {
	switch k {
	case kindRejected:
		return outcome.Rejected, rowReason
	case kindDuplicate:
		return outcome.Duplicate, ""
	}
	return outcome.State(docState), outcome.Reason(docReason)
}

// Reject records a row refused by parsing or admission, with its
// admission key (what decided the verdict; a rerun admits the row again
// only when it changed, see Readmit). A row recorded earlier keeps its
// first verdict, unless it owned a document still queued: then the
// document is rejected too (its file changed or vanished between runs, so
// it cannot be trusted).
func (j *Journal) Reject(manifest string, line int, sourceID, sha256 string, reason outcome.Reason, key string) error {
	return j.RejectDetail(manifest, line, sourceID, sha256, reason, key, "")
}

// RejectDetail is Reject with the refusal's detail ("image object 5 is
// 9000×9000 px, 81 Mpx, ..."), kept in the row_rejected event's data: it
// must name no path and no participant ID.
func (j *Journal) RejectDetail(manifest string, line int, sourceID, sha256 string, reason outcome.Reason, key, detail string) error {
	return j.hotTx(func(tx *sql.Tx) error {
		var oldSource string
		var kind rowKind
		var docID sql.NullInt64
		ev := Event{Kind: EventRowRejected, Manifest: manifest, Line: line, SourceID: sourceID}
		if detail != "" {
			ev.Data, _ = json.Marshal(map[string]string{"detail": detail})
		}
		err := tx.QueryRow(`SELECT source_id, kind, document_id FROM rows WHERE manifest=? AND line=?`+j.forUpdate(), manifest, line).
			Scan(&oldSource, &kind, &docID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.Exec(`INSERT INTO rows(manifest, line, source_id, kind, reason, sha256, recorded_at, admit_key) VALUES(?,?,?,?,?,?,?,?)`,
				manifest, line, sourceID, kindRejected, reason, sha256, ms(j.now()), key)
			if err != nil {
				return err
			}
			return j.appendEvent(tx, ev, rowTouch(manifest, line))
		case err != nil:
			return err
		case oldSource != sourceID:
			return fmt.Errorf("line %d: journal has source_id %q: %w", line, oldSource, ErrManifestChanged)
		case kind == kindDoc:
			res, err := tx.Exec(`UPDATE documents SET state=?, reason=?, lease_owner=NULL, lease_token=NULL, lease_expires=NULL, finished_at=?
				WHERE id=? AND state=?`, outcome.Rejected, reason, ms(j.now()), docID.Int64, outcome.Queued)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return nil
			}
			if _, err = tx.Exec(`UPDATE rows SET admit_key=? WHERE manifest=? AND line=?`, key, manifest, line); err != nil {
				return err
			}
			ev.DocID = docID.Int64
			return j.appendEvent(tx, ev, docTouch(docID.Int64), rowTouch(manifest, line))
		}
		return nil
	})
}

// Unfinished returns how many documents are not yet in a final state, and
// how many of those are leased by a live owner.
func (j *Journal) Unfinished() (queued, leased int, err error) {
	now := ms(j.now())
	err = j.db.QueryRow(`SELECT COUNT(*), COALESCE(SUM(CASE WHEN lease_token IS NOT NULL AND lease_expires > ? THEN 1 ELSE 0 END),0) FROM documents WHERE state=?`, now, outcome.Queued).
		Scan(&queued, &leased)
	if err != nil {
		return 0, 0, fmt.Errorf("journal: counting unfinished documents: %w", err)
	}
	return queued, leased, nil
}

// LeasedByOther reports whether the document is held by a live lease of an
// owner other than o: one that has not expired and whose process, when on
// this host, still runs.
func (d Doc) LeasedByOther(o Owner, now time.Time) bool {
	if d.LeaseOwner == "" || Owner(d.LeaseOwner) == o {
		return false
	}
	return d.LeaseExpires.After(now) && !Owner(d.LeaseOwner).dead()
}
