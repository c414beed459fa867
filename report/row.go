package report

import (
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file holds what a Row tells beyond its state: its earlier
// verdicts, a person's decision, and whether it still needs a person.

// Open reports whether the row still needs a person (outcome.Open): in
// review, or rejected for a reason that asks for action and not dismissed
// by a person (its decision a dismissal).
func (r Row) Open() bool {
	return outcome.Open(r.State, r.Reason, r.Decision != nil && r.Decision.Action == dismissAction)
}

// HistoryEntry is one earlier verdict of a row: its state and reason, when
// it was superseded, and the journal event that superseded it
// (row_readmitted, row_changed, decision).
type HistoryEntry struct {
	State  outcome.State  `json:"state"`
	Reason outcome.Reason `json:"reason"`
	At     time.Time      `json:"at"`
	Event  string         `json:"event"`
}

// Decision is a person's decision about a document in review: accept
// (done), reject (rejected rejected_by_person) or retry (read again), who
// made it, on which host, when, and their note (their own words, never
// document text).
type Decision struct {
	Action string    `json:"action"`
	User   string    `json:"user"`
	Host   string    `json:"host"`
	At     time.Time `json:"at"`
	Note   string    `json:"note,omitempty"`
}

// Transcriptions counts the transcriptions people made of a row's
// document at the desk, and those of them withdrawn since: a withdrawn
// transcription stays in custody and is in no export.
type Transcriptions struct {
	Made      int `json:"made"`
	Withdrawn int `json:"withdrawn"`
}
