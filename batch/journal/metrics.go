package journal

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// ReportRow is one manifest row joined with its document, for the report.
type ReportRow struct {
	Manifest       string
	Line           int
	SourceID       string
	State          outcome.State
	Reason         outcome.Reason
	SHA256         string
	Pages          int
	Attempts       int
	MeanConfidence float64
	Band           outcome.Band
	Artifact       string
	TraceID        string
	// Detail is the refusal's detail of a rejected row (RejectDetail),
	// or what exactly the verdict of a row in review found (Result's
	// Detail: the pages of a handwritten note not transcribed); "" when
	// none was recorded. DetailPages are the pages a review detail names.
	Detail      string
	DetailPages []int
	// Decision is the latest decision a person made about the row's
	// document, or the dismissal of a row rejected before it had one; nil
	// when none did (and for duplicate rows).
	Decision *Decision
	// Withdrawn is set for a row whose source_id is no longer in its
	// manifest (Rebind): Line is then the line it last had, and
	// JournalLine its placeholder. JournalLine is the line events name
	// the row by (see LineNow); Line otherwise.
	Withdrawn   bool
	JournalLine int
	// Transcriptions counts the transcriptions people made of the row's
	// document and their withdrawals.
	Transcriptions TranscriptionCount
}

// ReportRows calls fn for every row of one manifest (every manifest when
// manifest is ""), in manifest order: by manifest, then line. The rows are
// streamed from one query, never held, so fn runs while the query is open
// and must not use the journal (it has one connection).
func (j *Journal) ReportRows(manifest string, fn func(ReportRow) error) error {
	j.settle()
	// A rejected row with no document has its dismissal (if any) as its
	// decision: read them first, as fn runs while the query is open.
	ds, err := readDismissals(j.db)
	if err != nil {
		return fmt.Errorf("journal: listing rows: %w", err)
	}
	details, err := j.rejectionDetails()
	if err != nil {
		return fmt.Errorf("journal: listing rows: %w", err)
	}
	verdicts, err := reviewDetails(j.db)
	if err != nil {
		return fmt.Errorf("journal: listing rows: %w", err)
	}
	moves, err := readLineTracker(j.db)
	if err != nil {
		return fmt.Errorf("journal: listing rows: %w", err)
	}
	transcribed, err := documentTranscriptions(j.db)
	if err != nil {
		return fmt.Errorf("journal: listing rows: %w", err)
	}
	rows, err := j.db.Query(`SELECT r.manifest, r.line, r.source_id, r.kind, r.reason, r.sha256,
			COALESCE(d.state,''), COALESCE(d.reason,''), COALESCE(d.pages,0), COALESCE(d.attempts,0),
			COALESCE(d.mean_confidence,0), COALESCE(d.band,''), COALESCE(d.artifact,''), COALESCE(d.trace_id,''),
			e.at, COALESCE(e.data,''), COALESCE(d.id,0)
		FROM rows r LEFT JOIN documents d ON d.id = r.document_id
		LEFT JOIN events e ON e.id = (SELECT MAX(id) FROM events WHERE kind=? AND document_id = r.document_id)
		WHERE ?='' OR r.manifest=? ORDER BY r.manifest, r.line`, EventDecision, manifest, manifest)
	if err != nil {
		return fmt.Errorf("journal: listing rows: %w", err)
	}
	defer rows.Close()
	// One ReportRow is reused; the strings it holds are fresh per row.
	var r ReportRow
	var kind rowKind
	var docState, docReason, decision string
	var decidedAt sql.NullInt64
	var docID int64
	for rows.Next() {
		if err := rows.Scan(&r.Manifest, &r.Line, &r.SourceID, &kind, &r.Reason, &r.SHA256, &docState, &docReason,
			&r.Pages, &r.Attempts, &r.MeanConfidence, &r.Band, &r.Artifact, &r.TraceID, &decidedAt, &decision, &docID); err != nil {
			return fmt.Errorf("journal: listing rows: %w", err)
		}
		r.Decision, r.Detail, r.DetailPages, r.Transcriptions = nil, "", nil, transcribed[docID]
		if decision != "" && kind == kindDoc {
			d, err := parseDecision(decision, decidedAt)
			if err != nil {
				return fmt.Errorf("journal: listing rows: line %d: %w", r.Line, err)
			}
			r.Decision = &d
		}
		if outcome.State(docState) == outcome.Rejected || kind == kindRejected {
			r.Detail = details[rowKey(r.Manifest, r.Line)]
		} else if v, ok := verdicts[docID]; ok && kind == kindDoc {
			r.Detail, r.DetailPages = v.Detail, v.Pages
		}
		switch kind {
		case kindRejected:
			r.State = outcome.Rejected
			r.Decision = ds.latest(r.Manifest, r.Line, 0, r.Reason)
			r.Pages, r.Attempts, r.MeanConfidence, r.Band, r.Artifact, r.TraceID = 0, 0, 0, "", "", ""
		case kindDuplicate:
			r.State, r.Reason, r.Attempts = outcome.Duplicate, "", 0
		default:
			r.State, r.Reason = outcome.State(docState), outcome.Reason(docReason)
		}
		r.Withdrawn, r.JournalLine = r.Line < 0, r.Line
		if r.Withdrawn {
			r.Line = moves.withdrawnFrom[rowKey(r.Manifest, r.Line)]
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("journal: listing rows: %w", err)
	}
	return nil
}

// Timings are the batch's measured durations, in seconds.
type Timings struct {
	PageOCR          []float64 // render + recognise, per page of finished attempts
	Retries          int       // attempts that failed transiently
	Pages            int       // pages recognised in finished attempts
	FirstAdmission   time.Time
	LastFinish       time.Time
	PageSecondsTotal float64
}

// Timings reads the batch's timings from the journal. PageOCR holds one
// number per page (8 bytes); nothing else grows with the batch.
func (j *Journal) Timings() (Timings, error) {
	var t Timings
	wrap := func(err error) error { return fmt.Errorf("journal: timings: %w", err) }
	const verdictPages = `FROM pages p JOIN attempts a ON a.id = p.attempt_id WHERE a.outcome IN (?,?)`
	var n int
	if err := j.db.QueryRow(`SELECT COUNT(*) `+verdictPages, AttemptDone, AttemptReview).Scan(&n); err != nil {
		return t, wrap(err)
	}
	t.PageOCR = make([]float64, 0, n)
	rows, err := j.db.Query(`SELECT p.render_ms + p.ocr_ms `+verdictPages, AttemptDone, AttemptReview)
	if err != nil {
		return t, wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			return t, wrap(err)
		}
		t.PageOCR = append(t.PageOCR, v/1000)
		t.PageSecondsTotal += v / 1000
	}
	if err := rows.Err(); err != nil {
		return t, wrap(err)
	}
	rows.Close()
	t.Pages = len(t.PageOCR)
	var first, last sql.NullInt64
	if err := j.db.QueryRow(`SELECT MIN(admitted_at), MAX(finished_at) FROM documents`).Scan(&first, &last); err != nil {
		return t, wrap(err)
	}
	t.FirstAdmission, t.LastFinish = fromMS(first), fromMS(last)
	if err := j.db.QueryRow(`SELECT COUNT(*) FROM attempts WHERE outcome=?`, AttemptFailed).Scan(&t.Retries); err != nil {
		return t, wrap(err)
	}
	return t, nil
}

// Run is one `refbatch run` invocation as recorded in the journal.
type Run struct {
	ID                int64
	Owner             string
	StartedAt         time.Time
	FinishedAt        time.Time
	Exit              string
	Settings          string // JSON
	Versions          string // JSON
	CPUSeconds        float64
	PeakInflightBytes int64
	PeakParentRSS     int64 // bytes
	PeakWorkerRSS     int64 // bytes, the largest worker's
}

// StartRun records the start of a run.
func (j *Journal) StartRun(owner Owner, settings, versions string) (int64, error) {
	var id int64
	err := j.tx(func(tx *sql.Tx) error {
		err := tx.QueryRow(`INSERT INTO runs(owner, started_at, settings, versions) VALUES(?,?,?,?) RETURNING id`,
			string(owner), ms(j.now()), settings, versions).Scan(&id)
		if err != nil {
			return err
		}
		return j.appendEvent(tx, Event{Kind: EventRunStarted}, runTouch(id))
	})
	if err != nil {
		return 0, fmt.Errorf("journal: recording run: %w", err)
	}
	return id, nil
}

// EndRun records how a run ended and, in the same transaction, the
// outbox's events about it when end is given (see RunEnd).
func (j *Journal) EndRun(id int64, exit string, cpuSeconds float64, peakInflight int64, end ...RunEnd) error {
	err := j.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE runs SET finished_at=?, exit=?, cpu_seconds=?, peak_inflight_bytes=? WHERE id=?`,
			ms(j.now()), exit, cpuSeconds, peakInflight, id); err != nil {
			return err
		}
		if err := j.appendEvent(tx, Event{Kind: EventRunEnded}, runTouch(id)); err != nil {
			return err
		}
		for _, e := range end {
			if err := j.runEndNotices(tx, id, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("journal: recording run end: %w", err)
	}
	return nil
}

// SetRunVersions records the engine versions a run used, as JSON, so that
// a report regenerated later from the journal can name them.
func (j *Journal) SetRunVersions(id int64, versions string) error {
	err := j.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE runs SET versions=? WHERE id=?`, versions, id); err != nil {
			return err
		}
		return j.appendEvent(tx, Event{Kind: EventRunVersions}, runTouch(id))
	})
	if err != nil {
		return fmt.Errorf("journal: recording run versions: %w", err)
	}
	return nil
}

// RecordRunMemory records a run's peak resident memory, of the refbatch
// process and of its largest worker.
func (j *Journal) RecordRunMemory(id, parentRSS, workerRSS int64) error {
	err := j.execWaiting(`UPDATE runs SET peak_parent_rss=?, peak_worker_rss=? WHERE id=?`, parentRSS, workerRSS, id)
	if err != nil {
		return fmt.Errorf("journal: recording run memory: %w", classify(err))
	}
	return nil
}

// Runs returns every recorded run, oldest first.
func (j *Journal) Runs() ([]Run, error) {
	rows, err := j.db.Query(`SELECT id, owner, started_at, finished_at, exit, settings, versions, cpu_seconds, peak_inflight_bytes, peak_parent_rss, peak_worker_rss FROM runs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("journal: listing runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var start, end sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Owner, &start, &end, &r.Exit, &r.Settings, &r.Versions, &r.CPUSeconds, &r.PeakInflightBytes, &r.PeakParentRSS, &r.PeakWorkerRSS); err != nil {
			return nil, err
		}
		r.StartedAt, r.FinishedAt = fromMS(start), fromMS(end)
		out = append(out, r)
	}
	return out, rows.Err()
}

// rejectionDetails are the details of the rows' latest refusals, by row
// (rowKey). Only rejected rows have one, so they are as few as those.
func (j *Journal) rejectionDetails() (map[string]string, error) {
	detail := `COALESCE(` + j.jsonText("data", "detail") + `,'')`
	moves, err := readLineTracker(j.db)
	if err != nil {
		return nil, err
	}
	rows, err := j.db.Query(`SELECT id, manifest, line, `+detail+` FROM events WHERE kind=? AND `+detail+` <> '' ORDER BY id`, EventRowRejected)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var m, d string
		var line int
		var id int64
		if err := rows.Scan(&id, &m, &line, &d); err != nil {
			return nil, err
		}
		out[rowKey(m, moves.now(id, m, line))] = d
	}
	return out, rows.Err()
}
