package standing

import (
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is what a monitor reads of a batch: its health (`refbatch
// status --check`) and the state of its notifications (status, report).

// The states of a batch's health.
const (
	HealthComplete = "complete" // every row is final
	HealthRunning  = "running"  // a live process works on it
	HealthWaiting  = "waiting"  // rows not final, no live process, progress within StallAfter
	HealthStalled  = "stalled"  // rows not final, no live process, no progress for StallAfter
)

// Health is a batch's health at Status.Now, for cron and monitors.
type Health struct {
	State string `json:"state"`
	// Stalled is true for HealthStalled only: the batch needs someone to
	// run it again.
	Stalled bool `json:"stalled"`
	// NotFinal counts rows not final, rows not recorded yet included.
	NotFinal int `json:"rows_not_final"`
	// NeedPerson counts the final rows that still need a person (see
	// Status.NeedPerson), by reason in NeedPersonReasons.
	NeedPerson        int                    `json:"need_person"`
	NeedPersonReasons map[outcome.Reason]int `json:"need_person_reasons"`
	// IdleSeconds is the time since the batch last recorded progress.
	IdleSeconds       float64 `json:"idle_seconds"`
	StallAfterSeconds float64 `json:"stall_after_seconds"`
}

// DefaultStallAfter is how long a batch with rows not final may record
// no progress before it is stalled (Health), and sends batch_stalled.
const DefaultStallAfter = 15 * time.Minute

// Health judges st: complete, running (a run is going or a live lease is
// held), else stalled once the batch recorded no progress for stallAfter
// (DefaultStallAfter when 0), waiting before that.
func (st *Status) Health(stallAfter time.Duration) Health {
	if stallAfter <= 0 {
		stallAfter = DefaultStallAfter
	}
	h := Health{NotFinal: st.Rows[outcome.Queued] + max(st.NotRecorded, 0), StallAfterSeconds: stallAfter.Seconds(),
		NeedPerson: st.NeedPerson, NeedPersonReasons: st.NeedPersonReasons}
	idle := time.Duration(0)
	if !st.LastProgress.IsZero() {
		idle = max(st.Now.Sub(st.LastProgress), 0)
	}
	h.IdleSeconds = round3(idle.Seconds())
	live := st.LiveRuns > 0 || st.Running > 0
	for _, l := range st.Leases {
		live = live || l.Live
	}
	switch {
	case st.State == "complete":
		h.State = HealthComplete
	case live:
		h.State = HealthRunning
	case idle >= stallAfter || st.LastProgress.IsZero():
		h.State, h.Stalled = HealthStalled, true
	default:
		h.State = HealthWaiting
	}
	return h
}

// NotifyStatus is how the batch's notifications stand: the events of
// the outbox, and per target that was tried, what reached it.
type NotifyStatus struct {
	Events  int            `json:"events"`
	Targets []TargetStatus `json:"targets"`
}

// TargetStatus is one target's deliveries.
type TargetStatus struct {
	Target    string `json:"target"`
	Delivered int    `json:"delivered"`
	// Pending counts the events not delivered to it yet.
	Pending  int `json:"pending"`
	Attempts int `json:"attempts"`
	// LastError is the latest failed attempt's, while an event is pending.
	LastError   string    `json:"last_error,omitempty"`
	LastAttempt time.Time `json:"last_attempt,omitzero"`
}

// readNotifications reads the outbox for the report.
func readNotifications(j *journal.Journal) ([]report.Notification, error) {
	entries, err := j.Outbox()
	if err != nil {
		return nil, err
	}
	var out []report.Notification
	for _, e := range entries {
		n := report.Notification{ID: e.ID, Type: e.Type, Created: e.Created.UTC(), Deliveries: []report.Delivery{}}
		for _, d := range e.Deliveries {
			n.Deliveries = append(n.Deliveries, report.Delivery{Target: d.Target, Attempts: d.Attempts,
				LastAttempt: utc(d.LastAttempt), Delivered: utc(d.Delivered), LastError: d.LastError})
		}
		out = append(out, n)
	}
	return out, nil
}

// notifyStatus sums the outbox per target for status.
func notifyStatus(j *journal.Journal) (NotifyStatus, error) {
	entries, err := j.Outbox()
	if err != nil {
		return NotifyStatus{}, err
	}
	s := NotifyStatus{Events: len(entries), Targets: []TargetStatus{}}
	index := map[string]int{}
	var lastFailed []time.Time
	for _, e := range entries {
		for _, d := range e.Deliveries {
			i, ok := index[d.Target]
			if !ok {
				i = len(s.Targets)
				index[d.Target] = i
				s.Targets = append(s.Targets, TargetStatus{Target: d.Target})
				lastFailed = append(lastFailed, time.Time{})
			}
			t := &s.Targets[i]
			t.Attempts += d.Attempts
			if d.Delivered.IsZero() && d.LastAttempt.After(lastFailed[i]) {
				t.LastError, lastFailed[i] = d.LastError, d.LastAttempt
			}
			if !d.Delivered.IsZero() {
				t.Delivered++
			}
			if d.LastAttempt.After(t.LastAttempt) {
				t.LastAttempt = d.LastAttempt.UTC()
			}
		}
	}
	for i := range s.Targets {
		s.Targets[i].Pending = s.Events - s.Targets[i].Delivered
	}
	return s, nil
}

// utc is t in UTC, zero kept zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
