package standing

import (
	"math"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is `refbatch status`: how a batch stands, read from its journal
// opened read-only, so it works while another process runs the batch.

// StatusWindow is the span over which Status measures throughput: long
// enough to smooth one slow document, short enough to show a stall.
const StatusWindow = 5 * time.Minute

// Status is how a batch stands at one instant.
type Status struct {
	Out string `json:"out"`
	// Journal is the batch's PostgreSQL journal, its password left out;
	// "" for journal.db in Out.
	Journal string    `json:"journal,omitempty"`
	Now     time.Time `json:"now"`
	// State is "complete", "running" (a run is going) or "incomplete"
	// (rows left to do, and no run going).
	State     string           `json:"state"`
	Manifests []ManifestStatus `json:"manifests"`
	// Rows counts manifest rows per state; queued rows are admitted and
	// not final. Done, review, rejected, duplicate and queued are always
	// present.
	Rows map[outcome.State]int `json:"rows"`
	// NeedPerson counts the rows that still need a person, as run's exit
	// 4 and the notifications count them (outcome.Open): in review, or
	// rejected, neither needing no action nor dismissed.
	// NeedPersonReasons splits it by reason.
	NeedPerson        int                    `json:"need_person"`
	NeedPersonReasons map[outcome.Reason]int `json:"need_person_reasons"`
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
	// Readmitted counts the times a rerun admitted again a row it had
	// refused, once the row, its file or the admission settings changed;
	// Reread the times a row in review was sent back to be read because
	// its fields changed. The report shows each row's earlier verdicts.
	Readmitted int `json:"rows_readmitted"`
	Reread     int `json:"rows_reread"`
	// Withdrawn lists the rows deleted from their manifest since a run
	// read them: each keeps its verdict and its document, and is in no
	// other count.
	Withdrawn []journal.WithdrawnRow `json:"withdrawn"`
	// LastProgress is the latest thing the batch recorded (a row, an
	// attempt, a page, a run's start or end); Health measures a stall
	// from it.
	LastProgress time.Time `json:"last_progress,omitzero"`
	// Notifications are the outbox's events and their deliveries.
	Notifications NotifyStatus `json:"notifications"`
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

// ReadStatus reads how the batch at p stands now. It only reads, so it
// may run while other processes run the batch.
func ReadStatus(p layout.Place, now time.Time) (*Status, error) {
	j, p, err := layout.OpenJournal(p)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	snap, err := j.Snapshot(now, StatusWindow)
	if err != nil {
		return nil, err
	}
	ms := snap.Manifests
	st := &Status{Out: p.Out, Now: now, Rows: map[outcome.State]int{}, Leases: []LeaseStatus{}, Manifests: []ManifestStatus{},
		Running: snap.Running, Waiting: snap.Waiting, LiveRuns: snap.LiveRuns, LastPage: snap.LastPage, ETASeconds: -1}
	if p.Shared() {
		st.Journal = p.Describe()
	}
	for _, s := range outcome.States() {
		st.Rows[s] = 0
	}
	recorded := 0
	for s, n := range snap.Rows {
		st.Rows[s] += n
		recorded += n
	}
	for _, m := range ms {
		n := manifestRows(j, m.Manifest)
		st.Manifests = append(st.Manifests, ManifestStatus{Path: m.Manifest, Recorded: m.Rows, Rows: n})
		switch {
		case n < 0 || st.NotRecorded < 0:
			st.NotRecorded = -1
		default:
			st.NotRecorded += max(0, n-m.Rows)
		}
	}
	if err := st.readRows(j); err != nil {
		return nil, err
	}
	for _, n := range st.NeedPersonReasons {
		st.NeedPerson += n
	}
	if st.LastProgress, err = j.LatestRecorded(); err != nil {
		return nil, err
	}
	if st.Notifications, err = notifyStatus(j); err != nil {
		return nil, err
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
		st.PagesPerMinute = Round1(float64(snap.PagesInWindow) / window.Minutes())
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
	unfinished := st.Rows[outcome.Queued] > 0 || st.NotRecorded != 0 || len(ms) == 0
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

// countManifestRows counts a manifest's rows, -1 when it cannot be read,
// and its blank records.
func countManifestRows(path string) (rows, blank int) {
	st, err := manifest.ScanFile(path)
	if err != nil {
		return -1, 0
	}
	return st.Rows, st.Blank
}

// readRows reads what the rows' events and the open rows say: the rows
// admitted again and read again, the withdrawn rows, and the rows still
// needing a person.
func (st *Status) readRows(j *journal.Journal) error {
	err := j.Events(func(e journal.Event) error {
		switch e.Kind {
		case journal.EventRowReadmitted:
			st.Readmitted++
		case journal.EventRowChanged:
			st.Reread++
		}
		return nil
	}, journal.HistoryKinds...)
	if err != nil {
		return err
	}
	if st.Withdrawn, err = j.WithdrawnRows(); err != nil {
		return err
	}
	if st.Withdrawn == nil {
		st.Withdrawn = []journal.WithdrawnRow{}
	}
	if st.NeedPersonReasons, err = j.OpenRows(""); err != nil {
		return err
	}
	return nil
}
