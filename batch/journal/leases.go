package journal

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// Owner names a process that holds leases: host, pid, the process's start
// time (so a recycled pid is not mistaken for it) and a random suffix (so
// two runs inside one process are distinct).
type Owner string

// NewOwner returns an Owner for the calling process.
func NewOwner() Owner {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return Owner(fmt.Sprintf("%s/%d/%s/%s", host, pid, procStart(pid), NewToken()[:8]))
}

// procStart returns the start time of a process in clock ticks since boot
// (field 22 of /proc/PID/stat), or "" when it cannot be read.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces; fields restart after ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// dead reports whether the owner is a process on this host that no longer
// runs. An owner on another host is never declared dead: only its lease
// expiry frees its work.
func (o Owner) dead() bool {
	parts := strings.Split(string(o), "/")
	if len(parts) != 4 {
		return false
	}
	host, _ := os.Hostname()
	if parts[0] != host {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false
	}
	return procStart(pid) != parts[2]
}

// Lease is the right to work on one document, for one attempt.
type Lease struct {
	DocID     int64
	Owner     Owner
	Token     string
	Attempt   int   // 1-based attempt number
	AttemptID int64 // row in the attempts table
}

// MaxAbandoned is how many times a document may be in flight when its
// process dies before it goes to review as attempts_exhausted.
const MaxAbandoned = 20

// Policy bounds how often a document is tried.
type Policy struct {
	MaxAttempts int           // attempts that failed transiently (since the document was last requeued: attempts_base) before review attempts_exhausted
	LeaseTTL    time.Duration // how long a lease lives without renewal
}

// counted is how many attempts count against the cap: those since a
// person last sent the document back to the queue (attempts_base; a retry
// decision also sets abandoned back to 0), less the abandoned ones.
func counted(attempts, base, abandoned int) int { return attempts - base - abandoned }

// Claim takes a lease on a queued document and counts the attempt before any
// work is done. It returns ErrNotClaimable when the document is final, leased
// by a live owner, or in its retry backoff.
//
// A lease whose owner died (expired, or a dead process on this host) is
// taken over; that attempt is recorded as abandoned. Abandoned attempts do not
// count against MaxAttempts: the engine did not fail, the process running it
// was killed (an operator, the OOM killer, a reboot), and a weekend import
// killed ten times must end as if it had not been. A document abandoned
// MaxAbandoned times still goes to review as attempts_exhausted, so not even
// one that somehow kills its whole process can circulate forever.
func (j *Journal) Claim(docID int64, owner Owner, p Policy) (Lease, error) {
	var l Lease
	// Some refusals still write (taking over a dead lease, moving an
	// exhausted document to review), so they commit and report afterwards.
	claimed := false
	err := j.hotTx(func(tx *sql.Tx) error {
		var err error
		l, claimed, err = j.claimIn(tx, docID, owner, p)
		return err
	})
	if err != nil {
		return Lease{}, fmt.Errorf("journal: claiming document %d: %w", docID, err)
	}
	if !claimed {
		return Lease{}, ErrNotClaimable
	}
	return l, nil
}

// claimIn is Claim inside tx: ok is false when the document is not
// claimable, and tx may still have written (see Claim).
func (j *Journal) claimIn(tx *sql.Tx, docID int64, owner Owner, p Policy) (l Lease, ok bool, err error) {
	l = Lease{DocID: docID, Owner: owner, Token: NewToken()}
	now := j.now()
	var state outcome.State
	var attempts, abandoned, base int
	var leaseOwner, leaseToken sql.NullString
	var leaseExp sql.NullInt64
	var next int64
	err = tx.QueryRow(`SELECT state, attempts, abandoned, attempts_base, lease_owner, lease_token, lease_expires, next_attempt_at
		FROM documents WHERE id=?`+j.forUpdate(), docID).Scan(&state, &attempts, &abandoned, &base, &leaseOwner, &leaseToken, &leaseExp, &next)
	if err != nil {
		return l, false, err
	}
	if state != outcome.Queued {
		return l, false, nil
	}
	var touched []touch
	if leaseToken.Valid {
		if leaseExp.Int64 > ms(now) && !Owner(leaseOwner.String).dead() {
			return l, false, nil
		}
		cause := outcome.CauseLeaseExpired
		if Owner(leaseOwner.String).dead() {
			cause = outcome.CauseOwnerDied
		}
		var abandonedID int64
		err := tx.QueryRow(`UPDATE attempts SET ended_at=?, outcome=?, cause=? WHERE document_id=? AND token=? AND ended_at IS NULL RETURNING id`,
			ms(now), AttemptAbandoned, cause, docID, leaseToken.String).Scan(&abandonedID)
		switch {
		case err == nil:
			touched = append(touched, attemptTouch(abandonedID))
		case !errors.Is(err, sql.ErrNoRows):
			return l, false, err
		}
		abandoned++
		if _, err := tx.Exec(`UPDATE documents SET abandoned=?, lease_owner=NULL, lease_token=NULL, lease_expires=NULL WHERE id=?`,
			abandoned, docID); err != nil {
			return l, false, err
		}
	}
	ev := Event{Kind: EventAttemptClaimed, DocID: docID}
	touched = append(touched, docTouch(docID))
	if next > ms(now) {
		if leaseToken.Valid {
			// A dead lease was taken over: that wrote.
			ev.Kind = EventAttemptAbandoned
			return l, false, j.appendEvent(tx, ev, touched...)
		}
		return l, false, nil
	}
	if counted(attempts, base, abandoned) >= p.MaxAttempts || abandoned >= MaxAbandoned {
		_, err := tx.Exec(`UPDATE documents SET state=?, reason=?, finished_at=? WHERE id=?`,
			outcome.Review, outcome.AttemptsExhausted, ms(now), docID)
		if err != nil {
			return l, false, err
		}
		ev.Kind = EventExhausted
		return l, false, j.appendEvent(tx, ev, touched...)
	}
	l.Attempt = attempts + 1
	if _, err := tx.Exec(`UPDATE documents SET attempts=?, lease_owner=?, lease_token=?, lease_expires=?,
		started_at=COALESCE(started_at, ?) WHERE id=?`,
		l.Attempt, string(owner), l.Token, ms(now.Add(p.LeaseTTL)), ms(now), docID); err != nil {
		return l, false, err
	}
	err = tx.QueryRow(`INSERT INTO attempts(document_id, number, owner, token, started_at) VALUES(?,?,?,?,?) RETURNING id`,
		docID, l.Attempt, string(owner), l.Token, ms(now)).Scan(&l.AttemptID)
	if err != nil {
		return l, false, err
	}
	return l, true, j.appendEvent(tx, ev, append(touched, attemptTouch(l.AttemptID))...)
}

// current runs fn in a transaction only if l is still the document's
// lease, the document's row locked (on PostgreSQL) until it commits.
func (j *Journal) current(l Lease, fn func(tx *sql.Tx, now time.Time) error) error {
	return j.hotTx(func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRow(`SELECT id FROM documents WHERE id=? AND lease_token=? AND state=?`+j.forUpdate(), l.DocID, l.Token, outcome.Queued).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		return fn(tx, j.now())
	})
}

// Renew extends the lease; ErrLeaseLost when it is no longer current.
// It appends no event, so it takes no write lock beyond its document's
// row (leaseTx).
func (j *Journal) Renew(l Lease, ttl time.Duration) error {
	return j.leaseTx(func(tx *sql.Tx) error { return j.extend(tx, l, ttl) })
}

// extend moves l's expiry to ttl from now, only if l is still the
// document's lease: the update is its own check, so that a claim that
// takes the document over between a check and the update is not extended.
func (j *Journal) extend(tx *sql.Tx, l Lease, ttl time.Duration) error {
	res, err := tx.Exec(`UPDATE documents SET lease_expires=? WHERE id=? AND lease_token=? AND state=?`,
		ms(j.now().Add(ttl)), l.DocID, l.Token, outcome.Queued)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(ErrLeaseLost, err)
	}
	return nil
}

// PageMetric is what one recognised page cost.
type PageMetric struct {
	Page           int
	DPI            int
	Render, OCR    time.Duration
	Words          int
	MeanConfidence float64
}

// PageDone records a page's metrics and renews the lease in one
// transaction, which, like Renew's, locks only the document's row.
func (j *Journal) PageDone(l Lease, m PageMetric, ttl time.Duration) error {
	return j.leaseTx(func(tx *sql.Tx) error {
		if err := j.extend(tx, l, ttl); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO pages(attempt_id, document_id, page, dpi, render_ms, ocr_ms, words, mean_confidence, finished_at)
			VALUES(?,?,?,?,?,?,?,?,?) ON CONFLICT(attempt_id, page) DO UPDATE SET document_id=excluded.document_id, dpi=excluded.dpi,
			render_ms=excluded.render_ms, ocr_ms=excluded.ocr_ms, words=excluded.words, mean_confidence=excluded.mean_confidence,
			finished_at=excluded.finished_at`, l.AttemptID, l.DocID, m.Page, m.DPI,
			float64(m.Render.Microseconds())/1000, float64(m.OCR.Microseconds())/1000, m.Words, m.MeanConfidence, ms(j.now()))
		return err
	})
}

// Result is how an attempt ended with a verdict.
type Result struct {
	State          outcome.State // done, review or rejected
	Reason         outcome.Reason
	MeanConfidence float64
	Band           outcome.Band
	Artifact       string
	ArtifactSHA256 string
	// ArtifactSize is the artifact's size on disk as written (0: not
	// known, recorded as none).
	ArtifactSize int64
	// ContentSHA256 is the artifact's content_sha256, the hash of its text.
	ContentSHA256 string
	// Detail is what exactly a review verdict found ("a handwritten note
	// on page 3 was not transcribed: ..."), never document text or an
	// ID; DetailPages are the pages it names. Both are kept in the
	// attempt_finished event, "" and nil for none.
	Detail      string
	DetailPages []int
}

// Finish publishes an attempt's verdict, only if l is still current
// (ErrLeaseLost otherwise: the caller must then discard its artifact).
func (j *Journal) Finish(l Lease, r Result) error {
	if !r.State.Final() {
		return fmt.Errorf("journal: finish with non-final state %q", r.State)
	}
	return j.current(l, func(tx *sql.Tx, now time.Time) error {
		if _, err := tx.Exec(`UPDATE documents SET state=?, reason=?, mean_confidence=?, band=?, artifact=?, artifact_sha256=?, artifact_size=?, content_sha256=?,
			lease_owner=NULL, lease_token=NULL, lease_expires=NULL, finished_at=? WHERE id=?`,
			r.State, r.Reason, r.MeanConfidence, r.Band, r.Artifact, r.ArtifactSHA256, sizeOrNull(r.ArtifactSize), r.ContentSHA256, ms(now), l.DocID); err != nil {
			return err
		}
		// The verdict's reason goes into the attempt's cause column.
		if _, err := tx.Exec(`UPDATE attempts SET ended_at=?, outcome=?, cause=? WHERE id=?`, ms(now), AttemptOutcome(r.State), r.Reason, l.AttemptID); err != nil {
			return err
		}
		ev := Event{Kind: EventAttemptFinished, DocID: l.DocID}
		if r.Detail != "" {
			ev.Data, _ = json.Marshal(VerdictDetail{Reason: r.Reason, Detail: r.Detail, Pages: r.DetailPages})
		}
		return j.appendEvent(tx, ev, docTouch(l.DocID), attemptTouch(l.AttemptID))
	})
}

// Fail records a transient failure (cause: crash, oom, io, ...). The document
// goes back to the queue, claimable again at retryAt, or to review as
// attempts_exhausted when this was its last allowed attempt. exhausted
// reports which.
func (j *Journal) Fail(l Lease, cause outcome.Cause, retryAt time.Time, p Policy) (exhausted bool, err error) {
	err = j.current(l, func(tx *sql.Tx, now time.Time) error {
		exhausted = false // set afresh when the transaction runs again
		if _, err := tx.Exec(`UPDATE attempts SET ended_at=?, outcome=?, cause=? WHERE id=?`, ms(now), AttemptFailed, cause, l.AttemptID); err != nil {
			return err
		}
		var attempts, abandoned, base int
		if err := tx.QueryRow(`SELECT attempts, abandoned, attempts_base FROM documents WHERE id=?`, l.DocID).Scan(&attempts, &abandoned, &base); err != nil {
			return err
		}
		ev := Event{Kind: EventAttemptFailed, DocID: l.DocID}
		if counted(attempts, base, abandoned) >= p.MaxAttempts {
			exhausted = true
			ev.Kind = EventExhausted
			if _, err := tx.Exec(`UPDATE documents SET state=?, reason=?, lease_owner=NULL, lease_token=NULL, lease_expires=NULL, finished_at=? WHERE id=?`,
				outcome.Review, outcome.AttemptsExhausted, ms(now), l.DocID); err != nil {
				return err
			}
		} else if _, err := tx.Exec(`UPDATE documents SET next_attempt_at=?, lease_owner=NULL, lease_token=NULL, lease_expires=NULL WHERE id=?`,
			ms(retryAt), l.DocID); err != nil {
			return err
		}
		return j.appendEvent(tx, ev, docTouch(l.DocID), attemptTouch(l.AttemptID))
	})
	return exhausted, err
}

// Release gives a lease back without a verdict, because the run was
// interrupted: the attempt is recorded as interrupted and not counted.
func (j *Journal) Release(l Lease) error {
	err := j.current(l, func(tx *sql.Tx, now time.Time) error {
		if _, err := tx.Exec(`UPDATE attempts SET ended_at=?, outcome=? WHERE id=?`, ms(now), AttemptInterrupted, l.AttemptID); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE documents SET attempts=attempts-1, lease_owner=NULL, lease_token=NULL, lease_expires=NULL WHERE id=?`, l.DocID); err != nil {
			return err
		}
		return j.appendEvent(tx, Event{Kind: EventAttemptReleased, DocID: l.DocID}, docTouch(l.DocID), attemptTouch(l.AttemptID))
	})
	if errors.Is(err, ErrLeaseLost) {
		return nil
	}
	return err
}
