package standing

import (
	"encoding/json"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is each row's history in the report: its earlier verdicts,
// read from the journal's events.

type rowKey struct {
	manifest string
	line     int
}

// rowHistory reads the earlier verdicts of manifest's rows (of every
// manifest when empty) from the journal's events. Events are few (one per
// row admitted again, read again or decided), so they are held at once.
func rowHistory(j *journal.Journal, manifest string) (map[rowKey][]report.HistoryEntry, error) {
	out := map[rowKey][]report.HistoryEntry{}
	// Events name a row by its line then: find it where it is now.
	lineNow, err := j.LineNow()
	if err != nil {
		return nil, err
	}
	err = j.Events(func(e journal.Event) error {
		if manifest != "" && e.Manifest != manifest {
			return nil
		}
		var d struct {
			State      outcome.State  `json:"state"`
			Reason     outcome.Reason `json:"reason"`
			FromState  outcome.State  `json:"from_state"`
			FromReason outcome.Reason `json:"from_reason"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return nil
		}
		h := report.HistoryEntry{State: d.FromState, Reason: d.FromReason, At: e.At.UTC(), Event: string(e.Kind)}
		if h.State == "" {
			h.State, h.Reason = d.State, d.Reason
		}
		if h.State == "" {
			return nil
		}
		k := rowKey{e.Manifest, lineNow(e)}
		out[k] = append(out[k], h)
		return nil
	}, journal.HistoryKinds...)
	return out, err
}
