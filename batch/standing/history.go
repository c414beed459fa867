package standing

import (
	"slices"
	"sort"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file derives the journal's history for the report: the timeline,
// where the time went, the runs. It reads whichever journal it is given:
// Run's own at the end of a run, a read-only one for `refbatch report`.

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
	sloMeasured      int // documents done, or admitted longer ago than the SLO
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

	end := func(a journal.AttemptSpan) time.Time { return attemptEnd(a, now) }
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

	h.addRuns(runs, ownerEnd, ownerLive, now)
	h.bound(firstAdmission, latest, now)

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
		if d.State == outcome.Done && !d.FinishedAt.IsZero() && d.FinishedAt.Sub(d.AdmittedAt) <= slo {
			within++
		}
		if d.State == outcome.Done || now.Sub(d.AdmittedAt) > slo {
			h.sloMeasured++ // on time or late: the others may still make it
		}
		for i, a := range atts {
			ready := d.AdmittedAt
			if i > 0 {
				p := atts[i-1]
				ready = p.EndedAt
				if p.Outcome == journal.AttemptAbandoned || ready.IsZero() {
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
	if h.sloMeasured > 0 {
		h.withinSLO = round3(float64(within) / float64(h.sloMeasured))
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

// attemptEnd is when an attempt stopped holding its document: its end; for
// one that never ended, now when it is live, else (its process died) its
// last sign of life.
func attemptEnd(a journal.AttemptSpan, now time.Time) time.Time {
	switch {
	case !a.EndedAt.IsZero():
		return a.EndedAt
	case a.Live:
		return now
	}
	return a.LastSeen
}

// bound sets the batch's start no later than its first admission, and its
// last activity no earlier than the journal's latest record (or now, while
// it is live).
func (h *history) bound(firstAdmission, latest, now time.Time) {
	if h.documents > 0 && (h.started.IsZero() || firstAdmission.Before(h.started)) {
		h.started = firstAdmission
	}
	h.lastActivity = later(h.lastActivity, latest)
	if h.live {
		h.lastActivity = later(h.lastActivity, now)
	}
}

// addRuns adds the runs' totals to h: their invocations, CPU, peaks, first
// start and last activity, and the wall time, the union of their spans, so
// that two processes sharing the batch count once and the pause between an
// interrupted run and its resumption not at all. A run not ended lasts
// until its owner's last attempt ended (ownerEnd), or until now when it
// may still run.
func (h *history) addRuns(runs []journal.Run, ownerEnd map[string]time.Time, ownerLive map[string]bool, now time.Time) {
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
