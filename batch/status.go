package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report"
)

// This file reads an output folder from outside a run: Status for
// `refbatch status`, ReportFromJournal for `refbatch report`, and the
// journal-derived parts of every report (the timeline, where the time went,
// the runs). Both open the journal read-only, so they work while another
// process runs the batch.

// StatusWindow is the span over which Status measures throughput: long
// enough to smooth one slow document, short enough to show a stall.
const StatusWindow = 5 * time.Minute

// ErrNoJournal means the folder holds no journal: it is not an output
// folder, or no run has started in it.
var ErrNoJournal = errors.New("no journal in the output folder")

// Status is how a batch stands at one instant.
type Status struct {
	Out string    `json:"out"`
	Now time.Time `json:"now"`
	// State is "complete", "running" (a run is going) or "incomplete"
	// (rows left to do, and no run going).
	State     string           `json:"state"`
	Manifests []ManifestStatus `json:"manifests"`
	// Rows counts manifest rows per state; queued rows are admitted and
	// not final. Done, review, rejected, duplicate and queued are always
	// present.
	Rows map[string]int `json:"rows"`
	// NotRecorded counts manifest rows the journal has not seen yet (the
	// run streams the manifest); -1 when a manifest could not be read.
	NotRecorded int `json:"rows_not_recorded"`
	// Running documents are held by a live lease; Waiting ones are queued
	// for an engine (never claimed, in a retry backoff, or left by a
	// process that died).
	Running int `json:"running"`
	Waiting int `json:"waiting"`
	// OldestWaitingSeconds is the age since admission of the document
	// waiting longest; 0 when none waits.
	OldestWaitingSeconds float64       `json:"oldest_waiting_seconds"`
	Leases               []LeaseStatus `json:"leases"`
	// PagesPerMinute is measured over WindowSeconds before Now (shorter
	// for a batch younger than StatusWindow).
	PagesPerMinute float64 `json:"pages_per_minute"`
	WindowSeconds  float64 `json:"window_seconds"`
	// RemainingPages are the pages of the queued documents plus, estimated
	// from the pages per row so far, those of rows not recorded yet
	// (Estimated tells).
	RemainingPages int  `json:"remaining_pages"`
	Estimated      bool `json:"remaining_pages_estimated"`
	// ETASeconds is RemainingPages at PagesPerMinute; -1 when unknown
	// (nothing was recognised in the window).
	ETASeconds float64 `json:"eta_seconds"`
	// LiveRuns counts runs going now.
	LiveRuns int `json:"live_runs"`
	// LastPage is when the last page was recognised; zero if none was.
	LastPage time.Time `json:"last_page,omitzero"`
}

// ManifestStatus is one manifest the folder took.
type ManifestStatus struct {
	Path     string `json:"path"`
	Recorded int    `json:"rows_recorded"`
	// Rows is the manifest's row count now, -1 when it cannot be read.
	Rows int `json:"rows"`
}

// LeaseStatus is one process holding leases.
type LeaseStatus struct {
	// Owner is host/pid/start/random of the `refbatch run` process.
	Owner     string `json:"owner"`
	Documents int    `json:"documents"`
	// Live is false when its leases expired or its process is gone: the
	// documents are claimable again.
	Live bool `json:"live"`
	// ExpiresInSeconds is the time left on its latest lease (negative
	// once expired).
	ExpiresInSeconds float64 `json:"expires_in_seconds"`
}

// openJournal opens out's journal read-only.
func openJournal(out string) (*journal.Journal, error) {
	path := filepath.Join(out, JournalFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoJournal, path)
	}
	return journal.OpenReadOnly(path)
}

// ReadStatus reads how the batch in out stands now. It only reads, so it
// may run while another process runs the batch.
func ReadStatus(out string, now time.Time) (*Status, error) {
	j, err := openJournal(out)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	snap, err := j.Snapshot(now, StatusWindow)
	if err != nil {
		return nil, err
	}
	ms, err := j.Manifests()
	if err != nil {
		return nil, err
	}
	st := &Status{Out: out, Now: now, Rows: map[string]int{}, Leases: []LeaseStatus{}, Manifests: []ManifestStatus{},
		Running: snap.Running, Waiting: snap.Waiting, LiveRuns: snap.LiveRuns, LastPage: snap.LastPage, ETASeconds: -1}
	for _, s := range []string{"done", "review", "rejected", "duplicate", "queued"} {
		st.Rows[s] = 0
	}
	recorded := 0
	for s, n := range snap.Rows {
		st.Rows[string(s)] += n
		recorded += n
	}
	for _, m := range ms {
		n := countManifestRows(m.Manifest)
		st.Manifests = append(st.Manifests, ManifestStatus{Path: m.Manifest, Recorded: m.Rows, Rows: n})
		switch {
		case n < 0 || st.NotRecorded < 0:
			st.NotRecorded = -1
		default:
			st.NotRecorded += max(0, n-m.Rows)
		}
	}
	if !snap.OldestWaiting.IsZero() {
		st.OldestWaitingSeconds = round3(now.Sub(snap.OldestWaiting).Seconds())
	}
	for _, l := range snap.Leases {
		st.Leases = append(st.Leases, LeaseStatus{Owner: l.Owner, Documents: l.Documents, Live: l.Live,
			ExpiresInSeconds: round3(l.Expires.Sub(now).Seconds())})
	}

	window := StatusWindow
	if !snap.FirstAdmission.IsZero() {
		window = min(window, now.Sub(snap.FirstAdmission))
	}
	st.WindowSeconds = round3(window.Seconds())
	if window > 0 {
		st.PagesPerMinute = round1(float64(snap.PagesInWindow) / window.Minutes())
	}
	st.RemainingPages = snap.RemainingPages
	if st.NotRecorded > 0 && recorded > 0 {
		// Rows not recorded yet will be admitted (or not) like the rows so
		// far: estimate their pages at the pages admitted per row.
		st.RemainingPages += int(math.Round(float64(st.NotRecorded) * float64(snap.DocumentPages) / float64(recorded)))
		st.Estimated = true
	}
	if st.PagesPerMinute > 0 {
		st.ETASeconds = round3(float64(st.RemainingPages) / st.PagesPerMinute * 60)
	}
	unfinished := st.Rows["queued"] > 0 || st.NotRecorded != 0 || len(ms) == 0
	switch {
	case snap.LiveRuns > 0 || snap.Running > 0:
		st.State = "running"
	case unfinished:
		st.State = "incomplete"
	default:
		st.State = "complete"
	}
	return st, nil
}

// countManifestRows counts a manifest's records, -1 when it cannot be read.
func countManifestRows(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	r, err := manifest.NewReader(f)
	if err != nil {
		return -1
	}
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			return -1
		}
		n++
	}
}

// ReportFromJournal builds the report of the batch in out from its journal
// alone, as `refbatch report` does, also while a run is going or after one
// was interrupted (the report says so). It covers every manifest the
// folder took, or only manifestPath when it is not empty. Settings and the
// SLO are the latest run's, as it recorded them; engine versions the latest
// a run recorded, else those of the report.json already in out.
func ReportFromJournal(out, manifestPath string, now time.Time) (*report.Report, error) {
	j, err := openJournal(out)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	info := ReportInfo{Manifest: manifestPath, Now: now}
	runs, err := j.Runs()
	if err != nil {
		return nil, err
	}
	// The latest run's settings: the ones the batch goes on with.
	for _, r := range slices.Backward(runs) {
		if json.Unmarshal([]byte(r.Settings), &info.Settings) == nil && len(info.Settings) > 0 {
			break
		}
	}
	if d, err := time.ParseDuration(info.Settings["slo"]); err == nil {
		info.SLO = d
	}
	info.Versions = latestVersions(j)
	if len(info.Versions) == 0 {
		// Runs that did not record their engine versions in the journal
		// still named them in the report they wrote.
		if old, err := report.ReadJSON(filepath.Join(out, report.JSONFile)); err == nil {
			info.Versions = old.Run.Versions
		}
	}
	enc, err := j.Meta("artifacts")
	if err != nil {
		return nil, err
	}
	info.Encrypted = enc == "age"
	return BuildReport(j, info)
}

// history is what the journal's timestamps say about a batch.
type history struct {
	timeline         report.Timeline
	phases           []report.Phase
	queueAge         []float64
	admissionToStart []float64
	peakInflight     int64
	peakParentRSS    int64
	peakWorkerRSS    int64
	withinSLO        float64
	documents        int
	runs             []report.Invocation
	started          time.Time
	lastActivity     time.Time
	wall             time.Duration
	cpu              float64
	live             bool
}

// timelinePoints is how many instants the timeline samples: about one per
// 8 pixels of the chart, and a few kilobytes of JSON.
const timelinePoints = 120

// readHistory derives the timeline, the time breakdown, the queue ages and
// the runs' totals from the journal. It reads the documents and their
// attempts twice, one document at a time: first for who held them until
// when (the runs' ends and the timeline's span depend on it), then for the
// rest. What it keeps grows with the batch only by a number or two per
// document for the quantiles.
func readHistory(j *journal.Journal, now time.Time, slo time.Duration) (history, error) {
	var h history
	runs, err := j.Runs()
	if err != nil {
		return h, err
	}
	latest, err := j.LatestRecorded()
	if err != nil {
		return h, err
	}

	// An attempt holds its document from its claim to its end; one that
	// never ended holds it until now when it is live, else (its process
	// died) until its last sign of life.
	end := func(a journal.AttemptSpan) time.Time {
		switch {
		case !a.EndedAt.IsZero():
			return a.EndedAt
		case a.Live:
			return now
		}
		return a.LastSeen
	}
	ownerEnd := map[string]time.Time{}
	ownerLive := map[string]bool{}
	var firstAdmission time.Time
	attempts, verdicts := 0, 0
	err = j.History(now, func(d journal.DocSpan, atts []journal.AttemptSpan) error {
		h.documents++
		if firstAdmission.IsZero() || d.AdmittedAt.Before(firstAdmission) {
			firstAdmission = d.AdmittedAt
		}
		for _, a := range atts {
			attempts++
			if reachedVerdict(a) {
				verdicts++
			}
			h.live = h.live || a.Live
			ownerLive[a.Owner] = ownerLive[a.Owner] || a.Live
			if e := end(a); e.After(ownerEnd[a.Owner]) {
				ownerEnd[a.Owner] = e
			}
		}
		return nil
	})
	if err != nil {
		return h, err
	}

	// Runs: wall time is the union of their spans, so that two processes
	// sharing the batch count once and the pause between an interrupted
	// run and its resumption not at all.
	type span struct{ from, to time.Time }
	var spans []span
	for _, r := range runs {
		inv := report.Invocation{Owner: r.Owner, StartedAt: r.StartedAt.UTC(), Exit: r.Exit,
			CPUSeconds: round3(r.CPUSeconds), PeakInflightBytes: r.PeakInflightBytes}
		to := r.FinishedAt
		if to.IsZero() {
			// Not ended: going on, or killed, when it ended with its last
			// sign of life.
			to = later(r.StartedAt, ownerEnd[r.Owner])
			if journal.Owner(r.Owner).MayRun(ownerLive[r.Owner]) {
				to, h.live = now, true
			}
		} else {
			inv.FinishedAt = r.FinishedAt.UTC()
		}
		h.runs = append(h.runs, inv)
		h.cpu += r.CPUSeconds
		h.peakInflight = max(h.peakInflight, r.PeakInflightBytes)
		h.peakParentRSS = max(h.peakParentRSS, r.PeakParentRSS)
		h.peakWorkerRSS = max(h.peakWorkerRSS, r.PeakWorkerRSS)
		spans = append(spans, span{r.StartedAt, to})
		if h.started.IsZero() || r.StartedAt.Before(h.started) {
			h.started = r.StartedAt
		}
		h.lastActivity = later(h.lastActivity, to)
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	var cur span
	for i, s := range spans {
		switch {
		case i == 0:
			cur = s
		case !s.from.After(cur.to):
			cur.to = later(cur.to, s.to)
		default:
			h.wall += cur.to.Sub(cur.from)
			cur = s
		}
	}
	if len(spans) > 0 {
		h.wall += cur.to.Sub(cur.from)
	}
	if h.documents > 0 && (h.started.IsZero() || firstAdmission.Before(h.started)) {
		h.started = firstAdmission
	}
	h.lastActivity = later(h.lastActivity, latest)
	if h.live {
		h.lastActivity = later(h.lastActivity, now)
	}

	// Per document: admission to first claim, and the SLO share. Per
	// claim: how long the document had waited, since admission for a
	// first attempt, since the previous attempt ended for a retry (its
	// last sign of life, for one whose process died).
	h.admissionToStart = make([]float64, 0, h.documents)
	h.queueAge = make([]float64, 0, attempts)
	phases := newPhaseTotals(verdicts)
	tl := newTimelineSampler(h.started, h.lastActivity, h.documents)
	within := 0
	err = j.History(now, func(d journal.DocSpan, atts []journal.AttemptSpan) error {
		if !d.StartedAt.IsZero() {
			h.admissionToStart = append(h.admissionToStart, d.StartedAt.Sub(d.AdmittedAt).Seconds())
		}
		if d.State == journal.Done && !d.FinishedAt.IsZero() && d.FinishedAt.Sub(d.AdmittedAt) <= slo {
			within++
		}
		for i, a := range atts {
			ready := d.AdmittedAt
			if i > 0 {
				p := atts[i-1]
				ready = p.EndedAt
				if p.Outcome == "abandoned" || ready.IsZero() {
					ready = p.LastSeen
				}
			}
			h.queueAge = append(h.queueAge, max(0, a.StartedAt.Sub(ready).Seconds()))
			if reachedVerdict(a) {
				phases.add(a)
			}
		}
		tl.add(d, atts, end)
		return nil
	})
	if err != nil {
		return h, err
	}
	if h.documents > 0 {
		h.withinSLO = round3(float64(within) / float64(h.documents))
	}
	h.phases = phases.summary()
	var derived int64
	h.timeline, derived = tl.timeline()
	if h.peakInflight == 0 {
		// No run lived to record its peak (killed): the journal's spans
		// give an upper bound, since a document waiting for byte budget
		// after its claim counts as held.
		h.peakInflight = derived
	}
	return h, nil
}

// reachedVerdict tells an attempt that read its pages and ended done or
// review: the attempts whose time splits into phases.
func reachedVerdict(a journal.AttemptSpan) bool {
	return (a.Outcome == journal.AttemptDone || a.Outcome == journal.AttemptReview) && a.Pages > 0 && !a.EndedAt.IsZero()
}

// phaseTotals collects each phase's time per attempt.
type phaseTotals struct{ per map[string][]float64 }

// newPhaseTotals makes room for n attempts.
func newPhaseTotals(n int) *phaseTotals {
	p := &phaseTotals{per: map[string][]float64{}}
	for _, ph := range phaseOrder {
		p.per[ph.name] = make([]float64, 0, n)
	}
	return p
}

var phaseOrder = []struct{ name, clock string }{
	{report.PhaseStart, report.ClockWall}, {report.PhasePages, report.ClockWall}, {report.PhaseHandoff, report.ClockWall},
	{report.PhaseRender, report.ClockEngine}, {report.PhaseRecognise, report.ClockEngine},
}

// add splits an attempt that reached a verdict into phases. The first
// page's render began its own render and recognition time before it was
// recorded. Timestamps are to the millisecond and engine times to the
// microsecond, so a phase can come out a hair below zero: it counts as
// zero.
func (p *phaseTotals) add(a journal.AttemptSpan) {
	firstStart := a.FirstPage.Add(-a.FirstPageCost)
	parts := map[string]time.Duration{
		report.PhaseStart:     firstStart.Sub(a.StartedAt),
		report.PhasePages:     a.LastPage.Sub(firstStart),
		report.PhaseHandoff:   a.EndedAt.Sub(a.LastPage),
		report.PhaseRender:    a.Render,
		report.PhaseRecognise: a.Recognise,
	}
	for name, d := range parts {
		p.per[name] = append(p.per[name], max(0, d.Seconds()))
	}
}

func (p *phaseTotals) summary() []report.Phase {
	if len(p.per[report.PhaseRender]) == 0 {
		return []report.Phase{}
	}
	out := make([]report.Phase, 0, len(phaseOrder))
	for _, ph := range phaseOrder {
		total := 0.0
		for _, v := range p.per[ph.name] {
			total += v
		}
		out = append(out, report.Phase{Name: ph.name, Clock: ph.clock, Seconds: round3(total), PerDocument: roundQ(report.NewQuantiles(p.per[ph.name]))})
	}
	return out
}

// timelineSampler samples the batch at timelinePoints instants from start
// to last, fed one document at a time: documents queued, running and
// finished, the oldest queued document's age and the source bytes of the
// documents running. Its memory is the samples', whatever the batch's size.
type timelineSampler struct {
	tl     report.Timeline
	at     []time.Time // the instants sampled
	points []report.TimelinePoint
	// finishedFrom[k] counts the documents finished from sample k on,
	// summed into the points at the end.
	finishedFrom []int
	oldest       []time.Time // the oldest queued admission per sample
}

// newTimelineSampler samples from start to last; with no documents or no
// start the timeline has no points.
func newTimelineSampler(start, last time.Time, documents int) *timelineSampler {
	s := &timelineSampler{tl: report.Timeline{Points: []report.TimelinePoint{}}}
	if documents == 0 || start.IsZero() {
		return s
	}
	s.tl.Start, s.tl.End = start.UTC(), later(last, start).UTC()
	span := s.tl.End.Sub(s.tl.Start)
	n := timelinePoints
	if span <= 0 {
		n = 1
	}
	s.at = make([]time.Time, n)
	s.points = make([]report.TimelinePoint, n)
	s.finishedFrom = make([]int, n+1)
	s.oldest = make([]time.Time, n)
	for k := range n {
		t := s.tl.Start
		if n > 1 {
			t = s.tl.Start.Add(time.Duration(float64(span) * float64(k) / float64(n-1)))
		}
		s.at[k] = t
		s.points[k].Seconds = round3(t.Sub(s.tl.Start).Seconds())
	}
	return s
}

// add places one document at every sample: not admitted yet, queued,
// running (an attempt holds it: claimed, not yet ended; a live attempt
// runs to the present) or finished.
func (s *timelineSampler) add(d journal.DocSpan, atts []journal.AttemptSpan, end func(journal.AttemptSpan) time.Time) {
	n := len(s.at)
	// The samples are in time order: the document counts from its
	// admission on, and is finished from its end on.
	from := sort.Search(n, func(k int) bool { return !d.AdmittedAt.After(s.at[k]) })
	done := n
	if !d.FinishedAt.IsZero() {
		done = max(from, sort.Search(n, func(k int) bool { return !d.FinishedAt.After(s.at[k]) }))
	}
	s.finishedFrom[done]++
	for k := from; k < done; k++ {
		t := s.at[k]
		running := false
		for _, a := range atts {
			if !a.StartedAt.After(t) && (a.Live || end(a).After(t)) {
				running = true
				break
			}
		}
		p := &s.points[k]
		if running {
			p.Running++
			p.InflightBytes += d.Size
			continue
		}
		p.Queued++
		if s.oldest[k].IsZero() || d.AdmittedAt.Before(s.oldest[k]) {
			s.oldest[k] = d.AdmittedAt
		}
	}
}

// timeline returns the samples and the peak of the source bytes running.
func (s *timelineSampler) timeline() (report.Timeline, int64) {
	var peak int64
	finished := 0
	for k := range s.points {
		finished += s.finishedFrom[k]
		p := &s.points[k]
		p.Finished = finished
		if !s.oldest[k].IsZero() {
			p.OldestQueuedSeconds = round3(s.at[k].Sub(s.oldest[k]).Seconds())
		}
		peak = max(peak, p.InflightBytes)
	}
	s.tl.Points = append(s.tl.Points, s.points...)
	return s.tl, peak
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// parseFloat reads a number recorded in the settings, or def.
func parseFloat(s string, def float64) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return def
	}
	return v
}
