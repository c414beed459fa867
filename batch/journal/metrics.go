package journal

import (
	"database/sql"
	"fmt"
	"time"
)

// ReportRow is one manifest row joined with its document, for the report.
type ReportRow struct {
	Line           int
	SourceID       string
	State          State
	Reason         string
	SHA256         string
	Pages          int
	Attempts       int
	MeanConfidence float64
	Band           string
	Artifact       string
	TraceID        string
}

// ReportRows calls fn for every row of one manifest (every manifest when
// manifest is ""), in manifest order.
func (j *Journal) ReportRows(manifest string, fn func(ReportRow) error) error {
	rows, err := j.db.Query(`SELECT r.line, r.source_id, r.kind, r.reason, r.sha256,
			COALESCE(d.state,''), COALESCE(d.reason,''), COALESCE(d.pages,0), COALESCE(d.attempts,0),
			COALESCE(d.mean_confidence,0), COALESCE(d.band,''), COALESCE(d.artifact,''), COALESCE(d.trace_id,'')
		FROM rows r LEFT JOIN documents d ON d.id = r.document_id
		WHERE ?='' OR r.manifest=? ORDER BY r.manifest, r.line`, manifest, manifest)
	if err != nil {
		return fmt.Errorf("journal: listing rows: %w", err)
	}
	defer rows.Close()
	var out []ReportRow
	for rows.Next() {
		var r ReportRow
		var kind, docState, docReason string
		if err := rows.Scan(&r.Line, &r.SourceID, &kind, &r.Reason, &r.SHA256, &docState, &docReason,
			&r.Pages, &r.Attempts, &r.MeanConfidence, &r.Band, &r.Artifact, &r.TraceID); err != nil {
			return fmt.Errorf("journal: listing rows: %w", err)
		}
		switch kind {
		case "rejected":
			r.State = Rejected
			r.Pages, r.Attempts, r.MeanConfidence, r.Band, r.Artifact, r.TraceID = 0, 0, 0, "", "", ""
		case "duplicate":
			r.State, r.Reason, r.Attempts = Duplicate, "", 0
		default:
			r.State, r.Reason = State(docState), docReason
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	for _, r := range out {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Timings are the batch's measured durations, in seconds.
type Timings struct {
	PageOCR          []float64 // render + recognise, per page of finished attempts
	QueueAge         []float64 // admission to first claim, per document
	AdmissionToDone  []float64 // admission to done, per done document
	Retries          int       // attempts that failed transiently
	Pages            int       // pages recognised in finished attempts
	FirstAdmission   time.Time
	LastFinish       time.Time
	PageSecondsTotal float64
}

// Timings reads the batch's timings from the journal.
func (j *Journal) Timings() (Timings, error) {
	var t Timings
	q := func(query string, fn func(*sql.Rows) error) error {
		rows, err := j.db.Query(query)
		if err != nil {
			return fmt.Errorf("journal: timings: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := fn(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	err := q(`SELECT p.render_ms + p.ocr_ms FROM pages p JOIN attempts a ON a.id = p.attempt_id
		WHERE a.outcome IN ('done','review')`, func(r *sql.Rows) error {
		var v float64
		if err := r.Scan(&v); err != nil {
			return err
		}
		t.PageOCR = append(t.PageOCR, v/1000)
		t.PageSecondsTotal += v / 1000
		return nil
	})
	if err != nil {
		return t, err
	}
	t.Pages = len(t.PageOCR)
	err = q(`SELECT admitted_at, started_at, finished_at, state FROM documents`, func(r *sql.Rows) error {
		var admitted int64
		var started, finished sql.NullInt64
		var state string
		if err := r.Scan(&admitted, &started, &finished, &state); err != nil {
			return err
		}
		a := time.UnixMilli(admitted)
		if t.FirstAdmission.IsZero() || a.Before(t.FirstAdmission) {
			t.FirstAdmission = a
		}
		if started.Valid {
			t.QueueAge = append(t.QueueAge, float64(started.Int64-admitted)/1000)
		}
		if finished.Valid {
			f := time.UnixMilli(finished.Int64)
			if f.After(t.LastFinish) {
				t.LastFinish = f
			}
			if state == string(Done) {
				t.AdmissionToDone = append(t.AdmissionToDone, float64(finished.Int64-admitted)/1000)
			}
		}
		return nil
	})
	if err != nil {
		return t, err
	}
	err = j.db.QueryRow(`SELECT COUNT(*) FROM attempts WHERE outcome='failed'`).Scan(&t.Retries)
	return t, err
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
	res, err := j.db.Exec(`INSERT INTO runs(owner, started_at, settings, versions) VALUES(?,?,?,?)`,
		string(owner), ms(time.Now()), settings, versions)
	if err != nil {
		return 0, fmt.Errorf("journal: recording run: %w", classify(err))
	}
	return res.LastInsertId()
}

// EndRun records how a run ended.
func (j *Journal) EndRun(id int64, exit string, cpuSeconds float64, peakInflight int64) error {
	_, err := j.db.Exec(`UPDATE runs SET finished_at=?, exit=?, cpu_seconds=?, peak_inflight_bytes=? WHERE id=?`,
		ms(time.Now()), exit, cpuSeconds, peakInflight, id)
	if err != nil {
		return fmt.Errorf("journal: recording run end: %w", classify(err))
	}
	return nil
}

// RecordRunMemory records a run's peak resident memory, of the refbatch
// process and of its largest worker.
func (j *Journal) RecordRunMemory(id, parentRSS, workerRSS int64) error {
	_, err := j.db.Exec(`UPDATE runs SET peak_parent_rss=?, peak_worker_rss=? WHERE id=?`, parentRSS, workerRSS, id)
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
