package batch

import (
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// EventKind names what happened.
type EventKind string

// The events a Run reports as it goes.
const (
	EventAdmitted EventKind = "admitted" // a row reached the journal (any state)
	EventStarted  EventKind = "started"  // an engine began a document
	EventPageDone EventKind = "page_done"
	EventFinished EventKind = "finished" // a row reached a final state
)

// Event is one progress event. It carries IDs, states and timings only,
// never document text or participant IDs.
type Event struct {
	Kind     EventKind      `json:"event"`
	Time     time.Time      `json:"time"`
	Line     int            `json:"manifest_line,omitempty"`
	SourceID string         `json:"source_id,omitempty"`
	State    outcome.State  `json:"state,omitempty"`
	Reason   outcome.Reason `json:"reason,omitempty"`
	Page     int            `json:"page,omitempty"`
	Pages    int            `json:"pages,omitempty"`
	Elapsed  time.Duration  `json:"elapsed_ns,omitempty"`
	// Resumed is set on a finished event for a row that was already final
	// in the journal when this run started.
	Resumed bool `json:"resumed,omitempty"`
}

// Progress receives events. Implementations must be safe for concurrent use
// and fast: they run on the batch's goroutines.
type Progress interface {
	Event(Event)
}

// NopProgress ignores every event.
type NopProgress struct{}

// Event implements Progress.
func (NopProgress) Event(Event) {}
