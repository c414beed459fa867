// Package report holds what a refbatch batch tells its reader: one Row per
// manifest row, the batch's settings and runs, a Summary of counts and
// latencies, a breakdown of where the engines' time went, and a Timeline
// of the queue. It renders a Report four ways:
//
//   - WriteJSON: report.json, machine-readable and schema-versioned
//     (SchemaVersion). Field names are part of the contract; fields may be
//     added, never renamed. ReadJSON reads it back.
//   - WriteCSV: report.csv, the rows for a spreadsheet.
//   - WriteText: the short plain summary printed at the end of a run.
//   - WriteHTML: report.html, one self-contained page with no scripts and
//     no network access (charts are inline SVG drawn here), readable on a
//     laptop and printable on A4. It leads with the work to do: the rows in
//     review, most urgent first, with the `refbatch review` commands that
//     decide them, and the rejected rows with how to fix each reason; the
//     charts follow. Each reason's explanation is declared once, in
//     explain.go.
//
// Render writes report.json, report.csv and report.html in one pass over
// the rows; the caller makes the three files appear atomically
// (batch.WriteReport), so a reader never sees half a report.
//
// A batch may have tens of thousands of rows. A Report can hold them (Rows)
// or leave them where they are and read them through its RowSource as it
// writes: report.json and report.csv are written a row at a time, and
// report.html lists at most 500 rows per listing (and says how many more
// report.csv has), so writing a report takes the same memory whatever the
// batch's size. A Summarizer counts streamed rows as Summarize counts a
// slice.
//
// A Report never holds document text or participant IDs: a Row identifies a
// document by its manifest line, source_id, SHA-256 and trace ID only. Keep
// it that way; report.html is meant to be mailed around.
//
// The caller builds the Report: Summarize (or a Summarizer) fills the
// counts from the rows, the caller fills timings and throughput,
// NewQuantiles turns latency samples into p50/p95/max and NewLogHistogram
// into a latency histogram.
package report

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// SchemaVersion is the version of report.json's shape written by this
// package. It changes only when a field changes meaning or disappears.
const SchemaVersion = 1

// finalStates are the final states in display order; a Summary always
// counts each of them.
func finalStates() []outcome.State {
	return slices.DeleteFunc(outcome.States(), func(s outcome.State) bool { return !s.Final() })
}

// Report is everything a run reports: its settings, one row per manifest
// row, and the batch's numbers.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	GeneratedAt   time.Time `json:"generated_at"`
	// Complete is false when the batch is unfinished or was interrupted:
	// some rows are not in a final state yet.
	Complete bool `json:"complete"`
	// InProgress is set when a run of the batch was still going when the
	// report was made (`refbatch report` during a run).
	InProgress bool `json:"in_progress"`
	Run        Run  `json:"run"`
	// ThisRun is the time of the run that prints the report as its
	// summary, beside the batch's (Run): not in the files, which are the
	// batch's.
	ThisRun *RunTime `json:"-"`
	// Runs lists every `refbatch run` that worked on the output folder,
	// oldest first.
	Runs     []Invocation `json:"runs"`
	Rows     []Row        `json:"rows"`
	Summary  Summary      `json:"summary"`
	Timeline Timeline     `json:"timeline"`
	// Custody is the batch root when the report was made: the hash of
	// the journal's custody log, which `refbatch verify --root` checks.
	// Absent for a journal an earlier build wrote.
	Custody *Custody `json:"custody,omitempty"`
	// Notifications lists the events the batch owes its receivers
	// (webhooks, a local command) and every attempt to deliver them, as
	// the journal's outbox held them when the report was made.
	Notifications []Notification `json:"notifications,omitempty"`

	// RowSource, when set, yields the rows in place of Rows, which is then
	// nil: the report of a large batch reads its rows from the journal
	// while the writers write them, and never holds them all. Each writer
	// calls it once. It is not part of report.json.
	RowSource RowSource `json:"-"`
}

// Custody is a batch root: the hash of the last event of the journal's
// custody log and the number of events it covers.
type Custody struct {
	Root   string `json:"root"`
	Events int64  `json:"events"`
	// Pending is how many events were committed and not yet chained
	// (a PostgreSQL journal: refbatch help scale-out), under no root yet.
	Pending int64 `json:"pending,omitempty"`
}

// Notification is one event of the outbox: its ID (the receiver
// deduplicates on it), type and time, and its deliveries per target.
type Notification struct {
	ID         string     `json:"id"`
	Type       string     `json:"type"`
	Created    time.Time  `json:"created"`
	Deliveries []Delivery `json:"deliveries"`
}

// Delivery is what happened to one event for one target, named by its
// scheme and host (or "cmd") and a digest: no URL path, no command line.
type Delivery struct {
	Target      string    `json:"target"`
	Attempts    int       `json:"attempts"`
	LastAttempt time.Time `json:"last_attempt,omitzero"`
	Delivered   time.Time `json:"delivered,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
}

// RowSource yields a report's rows in manifest order (by manifest, then
// line): it calls fn for each row, stops at the first error fn returns and
// returns it (or its own). It must yield the same rows at every call.
type RowSource func(fn func(Row) error) error

// eachRow calls fn for every row of r in manifest order: from RowSource
// when set, else from Rows, which it does not reorder in place.
func (r *Report) eachRow(fn func(Row) error) error {
	if r.RowSource != nil {
		return r.RowSource(fn)
	}
	rows := r.Rows
	if !slices.IsSortedFunc(rows, compareRows) {
		rows = sortedRows(rows)
	}
	for _, row := range rows {
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

// Status is "complete", "running" or "incomplete" (interrupted or not run
// to the end).
func (r *Report) Status() string {
	switch {
	case r.Complete:
		return "complete"
	case r.InProgress:
		return "running"
	}
	return "incomplete"
}

// Run describes the batch that produced a Report: its manifest, when its
// runs started and ended, and the time they took together.
type Run struct {
	// Manifest is the manifest reported on; empty when the report covers
	// several (Manifests lists them, and each Row names its own).
	Manifest  string   `json:"manifest"`
	Manifests []string `json:"manifests"`
	// StartedAt is the first run's start and FinishedAt the batch's last
	// recorded activity (the present, while a run is going).
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	// WallSeconds is the time some run was going (overlapping runs count
	// once); CPUSeconds adds up the runs' CPU time, engines included, of
	// the runs that recorded it (a killed run cannot).
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	// Encrypted tells whether artifacts were written with age.
	Encrypted bool `json:"encrypted"`
	// Recipients are the age public keys the batch's artifacts are
	// encrypted to, as the journal records them, sorted. Empty for a
	// plaintext batch, and for an encrypted one whose journal is from
	// before they were recorded (its next run records them).
	Recipients []string `json:"recipients"`
	// Settings holds the effective flags (workers, dpi, caps...).
	Settings map[string]string `json:"settings"`
	// Versions holds refbatch's and the engines' versions.
	Versions map[string]string `json:"versions"`
}

// RunTime is the time one run took: its wall clock and CPU, engines
// included.
type RunTime struct {
	WallSeconds float64
	CPUSeconds  float64
}

// Invocation is one `refbatch run` process as the journal recorded it.
type Invocation struct {
	// Owner names the process: host/pid/start/random.
	Owner     string    `json:"owner"`
	StartedAt time.Time `json:"started_at"`
	// FinishedAt is absent for a run still going or one that was killed.
	FinishedAt        time.Time `json:"finished_at,omitzero"`
	Exit              string    `json:"exit"`
	CPUSeconds        float64   `json:"cpu_seconds"`
	PeakInflightBytes int64     `json:"peak_inflight_bytes"`
}

// Row is what happened to one manifest row. It identifies the document by
// line, source_id, hash and trace ID only, never by its text or participant.
type Row struct {
	// Manifest is set only in a report over several manifests.
	Manifest       string         `json:"manifest,omitempty"`
	ManifestLine   int            `json:"manifest_line"`
	SourceID       string         `json:"source_id"`
	State          outcome.State  `json:"state"`
	Reason         outcome.Reason `json:"reason"`
	SHA256         string         `json:"sha256"`
	Pages          int            `json:"pages"`
	MeanConfidence float64        `json:"mean_confidence"`
	Band           outcome.Band   `json:"band"`
	Attempts       int            `json:"attempts"`
	Artifact       string         `json:"artifact"`
	TraceID        string         `json:"trace_id"`
	// Detail is what exactly refused a rejected row ("image object 5 is
	// 9000×9000 px, 81 Mpx, over the 50 Mpx cap"), naming no path and no
	// participant; Advice is the fix chosen from it (Advice). Both are
	// absent when admission recorded no detail. A row in review has a
	// Detail when its verdict says more than its reason: for handwriting,
	// the pages of the note ("a handwritten note on page 3 was not
	// transcribed: read it in the scan"), never its words.
	Detail string `json:"detail,omitempty"`
	Advice string `json:"advice,omitempty"`
	// History holds the row's earlier verdicts, oldest first, when a
	// rerun or a person changed it: a rejection a rerun admitted again
	// once fixed, a review a changed row sent back to be read.
	History []HistoryEntry `json:"history,omitempty"`
	// Decision is the latest decision a person made about the row's
	// document in review (refbatch review); absent when none did.
	Decision *Decision `json:"decision,omitempty"`
	// Transcriptions is absent when no one transcribed the document.
	Transcriptions *Transcriptions `json:"transcriptions,omitempty"`
	// Withdrawn is set for a row whose source_id is no longer in its
	// manifest: deleted from it since a run read it. It keeps its state
	// and its document, ManifestLine is the line it last had, and it is
	// in no count of the summary but Withdrawn.
	Withdrawn bool `json:"withdrawn,omitempty"`
}

// Summary holds the batch's numbers.
type Summary struct {
	Rows int `json:"rows"`
	// BlankRows counts the manifest records skipped because every field
	// was empty (a spreadsheet's trailing ",,,,," lines): they are not
	// rows and are in no other count.
	BlankRows int `json:"blank_rows"`
	// Withdrawn counts the rows deleted from their manifest since a run
	// read them (Row.Withdrawn), which no other count includes.
	Withdrawn int `json:"withdrawn,omitempty"`
	// States counts rows per state; done, review, rejected and duplicate
	// are always present.
	States map[outcome.State]int `json:"states"`
	// Reasons counts rows per reason code, over all states.
	Reasons map[outcome.Reason]int `json:"reasons"`
	// NeedPerson counts the rows that still need a person (Row.Open):
	// run exits 4 while it is not 0. NeedPersonReasons splits it by
	// reason.
	NeedPerson        int                    `json:"need_person"`
	NeedPersonReasons map[outcome.Reason]int `json:"need_person_reasons"`
	// Pages counts the pages of the documents that went through OCR
	// (done and review rows), so that PagesPerMinute measures OCR work;
	// StatePages splits them by state.
	Pages      int                   `json:"pages"`
	StatePages map[outcome.State]int `json:"pages_by_state"`
	// Documents counts the documents admitted for OCR (rows that were
	// neither rejected at admission nor duplicates).
	Documents int `json:"documents"`
	// PagesPerMinute is Pages over the batch's wall time.
	PagesPerMinute float64 `json:"pages_per_minute"`

	// OCRPageSeconds is render plus recognition per page, over the pages
	// of attempts that reached a verdict; OCRPageHistogram is its
	// distribution.
	OCRPageSeconds   Quantiles `json:"ocr_page_seconds"`
	OCRPageHistogram []Bucket  `json:"ocr_page_histogram"`
	// QueueAgeSeconds is how long a document had been waiting when an
	// engine claimed it, per claim: since admission for a first attempt,
	// since the previous attempt ended (backoff included) for a retry.
	QueueAgeSeconds Quantiles `json:"queue_age_seconds"`
	// AdmissionToStartSeconds is admission to first claim, per document.
	AdmissionToStartSeconds Quantiles `json:"admission_to_start_seconds"`
	// TimeBreakdown splits the time of the attempts that reached a verdict
	// into phases, so that a slow disk (claim to first page, handoff) and a
	// slow recogniser (recognise) look different.
	TimeBreakdown []Phase `json:"time_breakdown"`

	// Retries counts attempts that failed transiently.
	Retries int `json:"retries"`
	// PeakInflightBytes is the most source bytes held by the engines at
	// once, as the runs measured it (or, when no run lived to record it,
	// the timeline's upper bound).
	PeakInflightBytes int64 `json:"peak_inflight_bytes"`
	// PeakParentRSSBytes and PeakWorkerRSSBytes are the peak resident
	// memory of the refbatch process and of its largest worker process,
	// the most any run of the batch measured (absent when none did).
	PeakParentRSSBytes int64 `json:"peak_parent_rss_bytes,omitempty"`
	PeakWorkerRSSBytes int64 `json:"peak_worker_rss_bytes,omitempty"`

	SLOSeconds float64 `json:"slo_seconds"`
	// WithinSLO is the share (0..1) of the SLOMeasured documents that
	// reached done within SLOSeconds of their admission.
	WithinSLO float64 `json:"within_slo"`
	// SLOMeasured counts the admitted documents the SLO has a verdict on:
	// done, on time or late, or admitted longer than SLOSeconds ago and
	// not done (late). A document in review younger than that is not
	// counted yet; with none, WithinSLO says nothing.
	SLOMeasured int `json:"slo_measured"`

	// ConfidenceBands are the thresholds of the bands: a document's mean
	// word confidence at or above High is high, at or above Low medium,
	// below Low it is low and goes to review.
	ConfidenceBands Bands `json:"confidence_bands"`
}

// Bands are the confidence band thresholds, in percent.
type Bands struct {
	High float64 `json:"high"`
	Low  float64 `json:"low"`
}

// Phase is one part of the time documents took, from claim to verdict.
type Phase struct {
	// Name is one of the Phase* constants.
	Name string `json:"phase"`
	// Clock is "wall" for the phases that follow one another from claim to
	// verdict (they add up to each attempt's time), "engine" for the
	// engines' work on the pages, which may run on several engines at once.
	Clock string `json:"clock"`
	// Seconds adds the phase up over every document.
	Seconds float64 `json:"seconds"`
	// PerDocument summarises it per document.
	PerDocument Quantiles `json:"per_document"`
}

// The phases of an attempt that reached a verdict.
const (
	// PhaseStart (wall) is from the claim to the first page's render:
	// reading and hashing the source, waiting for a free engine, opening
	// the document in it.
	PhaseStart = "claim_to_first_page"
	// PhasePages (wall) is from the first page's render to the last page
	// recorded: every page, on one engine or several, and the journal's
	// commit of each.
	PhasePages = "pages"
	// PhaseHandoff (wall) is from the last page to the verdict: validation,
	// encryption, writing, fsync, rename, re-hash and the journal commit.
	PhaseHandoff = "handoff"
	// PhaseRender (engine) is MuPDF rendering pages to images.
	PhaseRender = "render"
	// PhaseRecognise (engine) is Tesseract recognising them.
	PhaseRecognise = "recognise"
)

// Clocks of a Phase.
const (
	ClockWall   = "wall"
	ClockEngine = "engine"
)

// compareRows orders rows by manifest, then line.
func compareRows(a, b Row) int {
	return cmp.Or(strings.Compare(a.Manifest, b.Manifest), a.ManifestLine-b.ManifestLine)
}

// sortedRows returns a copy of rows in manifest order (by manifest, then
// line, when a report covers several).
func sortedRows(rows []Row) []Row {
	out := slices.Clone(rows)
	if out == nil {
		out = []Row{}
	}
	slices.SortStableFunc(out, compareRows)
	return out
}

// orderedStates lists the states in display order: the final states first,
// then any other (unfinished) state found in counts, sorted.
func orderedStates(counts map[outcome.State]int) []outcome.State {
	states := finalStates()
	var others []outcome.State
	for st := range counts {
		if !st.Final() {
			others = append(others, st)
		}
	}
	slices.Sort(others)
	return append(states, others...)
}
