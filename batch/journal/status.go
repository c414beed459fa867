package journal

import (
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file holds the journal's read side for people watching a batch:
// `refbatch status` (Snapshot), the report's timeline (History), the list
// of manifests a folder took (Manifests) and the latest recorded instant
// (LatestRecorded). They only read, so they work while another process
// runs the batch: SQLite's WAL gives each query a consistent snapshot
// without blocking the writer.

// ManifestRows is one manifest the journal has rows of.
type ManifestRows struct {
	Manifest string
	Rows     int       // rows recorded
	LastLine int       // highest line recorded
	Last     time.Time // when its latest row was recorded
}

// Manifests lists the manifests the journal has rows of, the one whose
// rows were recorded most recently last.
func (j *Journal) Manifests() ([]ManifestRows, error) { return manifestsIn(j.db) }

func manifestsIn(q queryer) ([]ManifestRows, error) {
	rows, err := q.Query(`SELECT manifest, COALESCE(SUM(CASE WHEN line > 0 THEN 1 ELSE 0 END),0), MAX(line), MAX(recorded_at)
		FROM rows GROUP BY manifest ORDER BY MAX(recorded_at), manifest`)
	if err != nil {
		return nil, fmt.Errorf("journal: listing manifests: %w", err)
	}
	defer rows.Close()
	var out []ManifestRows
	for rows.Next() {
		var m ManifestRows
		var last sql.NullInt64
		if err := rows.Scan(&m.Manifest, &m.Rows, &m.LastLine, &last); err != nil {
			return nil, fmt.Errorf("journal: listing manifests: %w", err)
		}
		m.Last = fromMS(last)
		out = append(out, m)
	}
	return out, rows.Err()
}

// LeaseHolder is one owner holding leases on queued documents.
type LeaseHolder struct {
	Owner     string
	Documents int
	// Expires is the latest expiry among its leases.
	Expires time.Time
	// Live is false when every lease has expired or the owner is a process
	// on this host that no longer runs: its documents are claimable again.
	Live bool
}

// Snapshot is how a batch stands at one instant.
type Snapshot struct {
	Now time.Time
	// Rows counts manifest rows per state, over every manifest; a row whose
	// document is not final counts as queued. Withdrawn counts apart the
	// rows no longer in their manifest (Rebind).
	Rows      map[outcome.State]int
	Withdrawn int
	// Documents not final, split into those held by a live lease (running)
	// and the rest (waiting: never claimed, in a retry backoff, or left by
	// a dead owner).
	Running, Waiting int
	// OldestWaiting is the admission time of the longest-waiting document,
	// zero when none waits.
	OldestWaiting time.Time
	// RemainingPages are the pages of the documents not final.
	RemainingPages int
	// Documents and DocumentPages count every document admitted and its
	// pages, for estimating the pages of rows not admitted yet.
	Documents, DocumentPages int
	// Leases lists the owners of leases on queued documents, live first.
	Leases []LeaseHolder
	// PagesInWindow counts pages recognised since Now minus the window
	// given to Snapshot; FirstAdmission bounds the window for a young batch.
	PagesInWindow  int
	FirstAdmission time.Time
	LastPage       time.Time
	// LiveRuns counts recorded runs that have not ended and whose process
	// may still run (Owner.MayRun): on another host, one that holds a
	// live lease or beat its heartbeat within HeartbeatTTL.
	LiveRuns int
	// Manifests are the manifests' rows recorded, read with the counts
	// above: a row recorded between two reads would count in one only.
	Manifests []ManifestRows
}

// Snapshot reads the batch's state at now, counting the pages recognised
// in the window before now.
func (j *Journal) Snapshot(now time.Time, window time.Duration) (Snapshot, error) {
	s := Snapshot{Now: now, Rows: map[outcome.State]int{}}
	wrap := func(err error) error { return fmt.Errorf("journal: status: %w", err) }
	// One read transaction: every count below comes from the same instant
	// even while another process writes.
	tx, err := j.readTx()
	if err != nil {
		return s, wrap(err)
	}
	defer tx.Rollback()

	if err := s.countRows(tx); err != nil {
		return s, wrap(err)
	}
	if s.Manifests, err = manifestsIn(tx); err != nil {
		return s, wrap(err)
	}
	var first sql.NullInt64
	if err := tx.QueryRow(`SELECT COUNT(*), COALESCE(SUM(pages),0), MIN(admitted_at) FROM documents`).Scan(&s.Documents, &s.DocumentPages, &first); err != nil {
		return s, wrap(err)
	}
	s.FirstAdmission = fromMS(first)
	holders, err := s.readQueue(tx, now)
	if err != nil {
		return s, wrap(err)
	}
	var last sql.NullInt64
	if err := tx.QueryRow(`SELECT COALESCE(SUM(CASE WHEN finished_at >= ? THEN 1 ELSE 0 END),0), MAX(finished_at) FROM pages`, ms(now.Add(-window))).Scan(&s.PagesInWindow, &last); err != nil {
		return s, wrap(err)
	}
	s.LastPage = fromMS(last)
	if err := s.countLiveRuns(tx, now, holders); err != nil {
		return s, wrap(err)
	}
	return s, nil
}

// countRows counts the manifest's rows per state into s.Rows.
func (s *Snapshot) countRows(tx *sql.Tx) error {
	rows, err := tx.Query(`SELECT r.kind, COALESCE(d.state,''), r.line < 0, COUNT(*) FROM rows r LEFT JOIN documents d ON d.id = r.document_id GROUP BY 1, 2, 3`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var kind rowKind
		var state outcome.State
		var withdrawn bool
		var n int
		if err := rows.Scan(&kind, &state, &withdrawn, &n); err != nil {
			return err
		}
		if withdrawn {
			s.Withdrawn += n
			continue
		}
		switch kind {
		case kindRejected:
			s.Rows[outcome.Rejected] += n
		case kindDuplicate:
			s.Rows[outcome.Duplicate] += n
		default:
			s.Rows[state] += n
		}
	}
	return rows.Err()
}

// readQueue reads the queued documents at now: the pages left, the
// documents running and waiting, the oldest waiting, and who holds their
// leases (s.Leases, live holders first), which it returns by owner too.
func (s *Snapshot) readQueue(tx *sql.Tx, now time.Time) (map[string]*LeaseHolder, error) {
	holders := map[string]*LeaseHolder{}
	rows, err := tx.Query(`SELECT pages, admitted_at, COALESCE(lease_owner,''), lease_token IS NOT NULL, COALESCE(lease_expires,0) FROM documents d WHERE state=?
		AND EXISTS (SELECT 1 FROM rows r WHERE r.document_id=d.id AND r.kind=? AND r.line > 0)`, outcome.Queued, kindDoc)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pages int
		var admitted, expires int64
		var owner string
		var leased bool
		if err := rows.Scan(&pages, &admitted, &owner, &leased, &expires); err != nil {
			return nil, err
		}
		s.RemainingPages += pages
		live := leased && expires > ms(now) && !Owner(owner).dead()
		if leased {
			h := holders[owner]
			if h == nil {
				h = &LeaseHolder{Owner: owner}
				holders[owner] = h
			}
			h.Documents++
			h.Live = h.Live || live
			if e := time.UnixMilli(expires); e.After(h.Expires) {
				h.Expires = e
			}
		}
		if live {
			s.Running++
			continue
		}
		s.Waiting++
		if a := time.UnixMilli(admitted); s.OldestWaiting.IsZero() || a.Before(s.OldestWaiting) {
			s.OldestWaiting = a
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, h := range holders {
		s.Leases = append(s.Leases, *h)
	}
	slices.SortFunc(s.Leases, func(a, b LeaseHolder) int {
		if a.Live != b.Live {
			if a.Live {
				return -1
			}
			return 1
		}
		return b.Documents - a.Documents
	})
	return holders, nil
}

// countLiveRuns counts the runs not ended whose process may still run.
func (s *Snapshot) countLiveRuns(tx *sql.Tx, now time.Time, holders map[string]*LeaseHolder) error {
	rows, err := tx.Query(`SELECT owner, COALESCE(heartbeat_at,0) FROM runs WHERE finished_at IS NULL`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var owner string
		var beat int64
		if err := rows.Scan(&owner, &beat); err != nil {
			return err
		}
		h := holders[owner]
		if Owner(owner).MayRun((h != nil && h.Live) || beat > ms(now.Add(-HeartbeatTTL))) {
			s.LiveRuns++
		}
	}
	return rows.Err()
}

// DocSpan is one document's life in the journal.
type DocSpan struct {
	ID         int64
	Size       int64
	Pages      int
	State      outcome.State
	AdmittedAt time.Time
	StartedAt  time.Time // first claim; zero if never claimed
	FinishedAt time.Time // zero while not final
}

// AttemptSpan is one attempt's time holding a document.
type AttemptSpan struct {
	DocID     int64
	Number    int
	Owner     string
	StartedAt time.Time
	// EndedAt is zero for an attempt that never ended: still running, or
	// its process died and nobody has taken the document over yet.
	EndedAt time.Time
	Outcome AttemptOutcome
	// Cause is the outcome.Cause of a failed or abandoned attempt, and
	// the verdict's outcome.Reason of one that ended with a verdict.
	Cause string
	// LastSeen is the attempt's last sign of life before its end: its
	// latest recognised page, else its start.
	LastSeen time.Time
	// Live is set for an attempt that has not ended and still holds the
	// document's lease, unexpired, with an owner that may still run.
	Live bool
	// The pages it recognised: how many, when the first and the last were
	// recorded, the render and recognition time over all of them (engine
	// time: pages may run on several engines at once), and the render plus
	// recognition time of the first recorded.
	Pages               int
	FirstPage, LastPage time.Time
	Render, Recognise   time.Duration
	FirstPageCost       time.Duration
}

// History calls fn for every document, in the order they were admitted,
// with its attempts, oldest first, for drawing a batch's timeline and
// splitting its time into phases. It streams one query and holds one
// document at a time, whatever the batch's size: fn runs while the query
// is open and must not use the journal (it has one connection), and the
// attempts slice is reused from one call to the next.
func (j *Journal) History(now time.Time, fn func(DocSpan, []AttemptSpan) error) error {
	wrap := func(err error) error { return fmt.Errorf("journal: history: %w", err) }
	// Documents come in id order, each with its attempts in id order (the
	// attempts_document index holds them so) and each attempt with its
	// pages added up: no sort of the whole batch, in Go or in SQLite.
	rows, err := j.db.Query(`SELECT d.id, d.size, d.pages, d.state, d.admitted_at, d.started_at, d.finished_at,
			a.id, COALESCE(a.number,0), COALESCE(a.owner,''), a.started_at, a.ended_at, COALESCE(a.outcome,''), COALESCE(a.cause,''),
			a.ended_at IS NULL AND d.lease_token = a.token AND COALESCE(d.lease_expires,0) > ?,
			COUNT(p.page), MIN(p.finished_at), MAX(p.finished_at), COALESCE(SUM(p.render_ms),0), COALESCE(SUM(p.ocr_ms),0),
			COALESCE((SELECT render_ms + ocr_ms FROM pages WHERE attempt_id = a.id ORDER BY finished_at, page LIMIT 1),0)
		FROM documents d
		LEFT JOIN attempts a ON a.document_id = d.id
		LEFT JOIN pages p ON p.attempt_id = a.id
		GROUP BY d.id, a.id
		ORDER BY d.id, a.id`, ms(now))
	if err != nil {
		return wrap(err)
	}
	defer rows.Close()
	msDur := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	var doc DocSpan
	var atts []AttemptSpan
	have := false
	for rows.Next() {
		var d DocSpan
		var a AttemptSpan
		var admitted, started, finished, attemptID, aStarted, aEnded, first, last sql.NullInt64
		var held sql.NullBool
		var render, ocr, firstCost float64
		if err := rows.Scan(&d.ID, &d.Size, &d.Pages, &d.State, &admitted, &started, &finished,
			&attemptID, &a.Number, &a.Owner, &aStarted, &aEnded, &a.Outcome, &a.Cause, &held,
			&a.Pages, &first, &last, &render, &ocr, &firstCost); err != nil {
			return wrap(err)
		}
		if have && d.ID != doc.ID {
			if err := fn(doc, atts); err != nil {
				return err
			}
			clear(atts)
			atts = atts[:0]
		}
		if !have || d.ID != doc.ID {
			d.AdmittedAt, d.StartedAt, d.FinishedAt = fromMS(admitted), fromMS(started), fromMS(finished)
			doc, have = d, true
		}
		if !attemptID.Valid {
			continue // a document never claimed
		}
		a.DocID = d.ID
		a.StartedAt, a.EndedAt = fromMS(aStarted), fromMS(aEnded)
		a.FirstPage, a.LastPage = fromMS(first), fromMS(last)
		a.Render, a.Recognise, a.FirstPageCost = msDur(render), msDur(ocr), msDur(firstCost)
		a.LastSeen = a.StartedAt
		if a.LastPage.After(a.LastSeen) {
			a.LastSeen = a.LastPage
		}
		a.Live = held.Bool && !Owner(a.Owner).dead()
		atts = append(atts, a)
	}
	if err := rows.Err(); err != nil {
		return wrap(err)
	}
	if have {
		return fn(doc, atts)
	}
	return nil
}

// MayRun reports whether the process o names may still be running. On this
// host the process table tells; of another host's process only a live
// lease or a recent heartbeat speaks, so the caller says whether o has
// one.
func (o Owner) MayRun(holdsLiveLease bool) bool {
	if o.dead() {
		return false
	}
	host, _ := os.Hostname()
	return holdsLiveLease || strings.HasPrefix(string(o), host+"/")
}

// LatestRecorded returns the latest timestamp the journal holds of anything
// that happened (rows recorded, documents finished, attempts, pages, runs),
// zero for an empty journal. A report of an interrupted batch ends there.
func (j *Journal) LatestRecorded() (time.Time, error) {
	var v sql.NullInt64
	err := j.db.QueryRow(`SELECT MAX(t) FROM (
		SELECT MAX(recorded_at) AS t FROM rows
		UNION ALL SELECT MAX(finished_at) FROM documents
		UNION ALL SELECT MAX(COALESCE(ended_at, started_at)) FROM attempts
		UNION ALL SELECT MAX(finished_at) FROM pages
		UNION ALL SELECT MAX(COALESCE(finished_at, started_at)) FROM runs) AS latest`).Scan(&v)
	if err != nil {
		return time.Time{}, fmt.Errorf("journal: latest timestamp: %w", err)
	}
	return fromMS(v), nil
}
