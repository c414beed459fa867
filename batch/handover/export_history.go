package handover

import (
	"github.com/refbatch/refbatch/batch/export"
	"github.com/refbatch/refbatch/batch/journal"
)

// provHistory is what a document's provenance.json tells of what persons
// and reruns decided about it.
type provHistory struct {
	decisions  []export.Decision
	amendments []export.Amendment
}

// docHistory reads every document's decisions and amendments from the
// journal's events (they are few: one per row a person or a rerun
// decided).
func docHistory(j *journal.Journal) (map[int64]*provHistory, error) {
	out := map[int64]*provHistory{}
	of := func(id int64) *provHistory {
		if out[id] == nil {
			out[id] = &provHistory{}
		}
		return out[id]
	}
	decisions, err := j.Decisions()
	if err != nil {
		return nil, err
	}
	for _, d := range decisions {
		if d.DocID == 0 {
			continue
		}
		h := of(d.DocID)
		h.decisions = append(h.decisions, export.Decision{Action: string(d.Action), User: d.User, Host: d.Host, At: d.At.UTC(),
			Note: d.Note, FromState: string(d.FromState), FromReason: string(d.FromReason)})
	}
	revalidations, err := j.Revalidations()
	if err != nil {
		return nil, err
	}
	for _, rv := range revalidations {
		h := of(rv.DocID)
		h.amendments = append(h.amendments, export.Amendment{Event: string(rv.Kind), At: rv.At.UTC(), User: rv.User, Host: rv.Host,
			Fields: rv.Fields, FromState: string(rv.FromState), FromReason: string(rv.FromReason), State: string(rv.State), Reason: string(rv.Reason)})
	}
	return out, nil
}
