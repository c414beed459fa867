// Package report holds what a refbatch run tells its reader: one Row per
// manifest row, the Run's settings and timings, and a Summary of counts and
// latencies (DESIGN.md §6). It renders a Report three ways:
//
//   - WriteJSON: report.json, machine-readable and schema-versioned
//     (SchemaVersion). Field names are part of the contract; fields may be
//     added, never renamed. ReadJSON reads it back.
//   - WriteText: the short plain summary printed at the end of a run.
//   - WriteHTML: report.html, one self-contained page with no scripts and
//     no network access, readable on a laptop and printable on A4.
//
// WriteFiles writes report.json and report.html into the output folder
// atomically, so a reader never sees half a report.
//
// A Report never holds document text or participant IDs: a Row identifies a
// document by its manifest line, source_id, SHA-256 and trace ID only. Keep
// it that way; report.html is meant to be mailed around.
//
// The caller builds the Report: Summarize fills the counts from the rows,
// the caller fills timings and throughput, NewQuantiles turns latency
// samples into p50/p95/max.
package report

import (
	"math"
	"slices"
	"time"
)

// SchemaVersion is the version of report.json's shape written by this
// package. It changes only when a field changes meaning or disappears.
const SchemaVersion = 1

// The final states of DESIGN.md §4; a Summary always counts each of them.
const (
	stateDone      = "done"
	stateReview    = "review"
	stateRejected  = "rejected"
	stateDuplicate = "duplicate"
)

// finalStates is the order in which states are shown.
var finalStates = []string{stateDone, stateReview, stateRejected, stateDuplicate}

// Report is everything a run reports: its settings, one row per manifest
// row, and the batch's numbers.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	GeneratedAt   time.Time `json:"generated_at"`
	// Complete is false when the batch is unfinished or was interrupted:
	// some rows are not in a final state yet.
	Complete bool    `json:"complete"`
	Run      Run     `json:"run"`
	Rows     []Row   `json:"rows"`
	Summary  Summary `json:"summary"`
}

// Run describes the run that produced a Report.
type Run struct {
	Manifest    string    `json:"manifest"`
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`
	WallSeconds float64   `json:"wall_seconds"`
	CPUSeconds  float64   `json:"cpu_seconds"`
	// Encrypted tells whether artifacts were written with age.
	Encrypted bool `json:"encrypted"`
	// Settings holds the effective flags (workers, dpi, caps...).
	Settings map[string]string `json:"settings"`
	// Versions holds refbatch's and the engines' versions.
	Versions map[string]string `json:"versions"`
}

// Row is what happened to one manifest row. It identifies the document by
// line, source_id, hash and trace ID only, never by its text or participant.
type Row struct {
	ManifestLine   int     `json:"manifest_line"`
	SourceID       string  `json:"source_id"`
	State          string  `json:"state"`
	Reason         string  `json:"reason"`
	SHA256         string  `json:"sha256"`
	Pages          int     `json:"pages"`
	MeanConfidence float64 `json:"mean_confidence"`
	Band           string  `json:"band"`
	Attempts       int     `json:"attempts"`
	Artifact       string  `json:"artifact"`
	TraceID        string  `json:"trace_id"`
}

// Quantiles summarises a set of latency samples in seconds.
type Quantiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	Max float64 `json:"max"`
}

// NewQuantiles returns the nearest-rank p50, p95 and maximum of samples:
// the p-th percentile is the smallest sample with at least p% of the samples
// at or below it, so every value reported is one that was measured. NaN and
// infinite samples are dropped (JSON cannot carry them). No samples give the
// zero Quantiles. samples is not modified.
func NewQuantiles(samples []float64) Quantiles {
	s := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return Quantiles{}
	}
	slices.Sort(s)
	return Quantiles{
		N:   len(s),
		P50: s[nearestRank(50, len(s))-1],
		P95: s[nearestRank(95, len(s))-1],
		Max: s[len(s)-1],
	}
}

// nearestRank is ceil(p/100 * n), in integers so that p95 of 20 samples is
// exactly rank 19.
func nearestRank(p, n int) int {
	return max(1, (p*n+99)/100)
}

// Summary holds the batch's numbers.
type Summary struct {
	Rows int `json:"rows"`
	// States counts rows per state; done, review, rejected and duplicate
	// are always present.
	States map[string]int `json:"states"`
	// Reasons counts rows per reason code, over all states.
	Reasons map[string]int `json:"reasons"`
	// Pages counts the pages of the documents that went through OCR
	// (done and review rows), so that PagesPerMinute measures OCR work.
	Pages          int     `json:"pages"`
	PagesPerMinute float64 `json:"pages_per_minute"`

	OCRPageSeconds          Quantiles `json:"ocr_page_seconds"`
	QueueAgeSeconds         Quantiles `json:"queue_age_seconds"`
	AdmissionToStartSeconds Quantiles `json:"admission_to_start_seconds"`

	Retries           int   `json:"retries"`
	PeakInflightBytes int64 `json:"peak_inflight_bytes"`

	SLOSeconds float64 `json:"slo_seconds"`
	// WithinSLO is the share (0..1) of admitted documents that reached done
	// within SLOSeconds.
	WithinSLO float64 `json:"within_slo"`
}

// Summarize counts rows per state and per reason and adds up the pages of
// the done and review rows. It fills Rows, States, Reasons and Pages; the
// caller fills the rest. Duplicate rows share the first row's document, so
// their pages are not counted again; rejected rows took no OCR.
func Summarize(rows []Row) Summary {
	s := Summary{
		Rows:    len(rows),
		States:  make(map[string]int, len(finalStates)),
		Reasons: make(map[string]int),
	}
	for _, st := range finalStates {
		s.States[st] = 0
	}
	for _, r := range rows {
		s.States[r.State]++
		if r.Reason != "" {
			s.Reasons[r.Reason]++
		}
		if r.State == stateDone || r.State == stateReview {
			s.Pages += r.Pages
		}
	}
	return s
}

// sortedRows returns a copy of rows in manifest order.
func sortedRows(rows []Row) []Row {
	out := slices.Clone(rows)
	if out == nil {
		out = []Row{}
	}
	slices.SortStableFunc(out, func(a, b Row) int { return a.ManifestLine - b.ManifestLine })
	return out
}

// orderedStates lists the states in display order: the final states first,
// then any other (unfinished) state found in counts, sorted.
func orderedStates(counts map[string]int) []string {
	states := slices.Clone(finalStates)
	var others []string
	for st := range counts {
		if !slices.Contains(finalStates, st) {
			others = append(others, st)
		}
	}
	slices.Sort(others)
	return append(states, others...)
}
