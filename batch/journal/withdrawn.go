package journal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file reads what Rebind left: where a row an event named by its
// line then is now (LineNow), and the rows and documents withdrawn from
// their manifests.

// lineTracker follows rows through the moves Rebind recorded, so that an
// event naming a row by the line it had then finds the row where it is
// now.
type lineTracker struct {
	moves []moveEvent
	// withdrawnFrom is the line each withdrawn row had, by its
	// placeholder (rowKey).
	withdrawnFrom map[string]int
}

type moveEvent struct {
	id       int64
	manifest string
	to       map[int]int
}

// readLineTracker reads every move from the events (they are few: one
// per rerun that moved rows, one per row withdrawn).
func readLineTracker(q queryer) (lineTracker, error) {
	t := lineTracker{withdrawnFrom: map[string]int{}}
	rows, err := q.Query(`SELECT id, kind, manifest, data FROM events WHERE kind IN (?,?) ORDER BY id`, EventRowsMoved, EventRowWithdrawn)
	if err != nil {
		return t, err
	}
	defer rows.Close()
	for rows.Next() {
		var e moveEvent
		var kind EventKind
		var data string
		if err := rows.Scan(&e.id, &kind, &e.manifest, &data); err != nil {
			return t, err
		}
		var d struct {
			Moves []LineMove `json:"moves"`
			Withdrawal
		}
		if err := json.Unmarshal([]byte(data), &d); err != nil {
			return t, fmt.Errorf("event %d: %w", e.id, err)
		}
		e.to = map[int]int{}
		if kind == EventRowWithdrawn {
			d.Moves = []LineMove{{From: d.From, To: d.To}}
			t.withdrawnFrom[rowKey(e.manifest, d.To)] = d.From
		}
		for _, m := range d.Moves {
			e.to[m.From] = m.To
		}
		t.moves = append(t.moves, e)
	}
	return t, rows.Err()
}

// now returns the line, now, of the row that was at line of manifest
// when event id was recorded.
func (t lineTracker) now(id int64, manifest string, line int) int {
	i, _ := slices.BinarySearchFunc(t.moves, id+1, func(m moveEvent, id int64) int { return int(m.id - id) })
	for _, m := range t.moves[i:] {
		if m.manifest != manifest {
			continue
		}
		if to, ok := m.to[line]; ok {
			line = to
		}
	}
	return line
}

// LineNow returns the line, now, of the row that event e named by its
// line then (e.Line), following the rows moved since; a negative line is
// a withdrawn row's placeholder.
func (j *Journal) LineNow() (func(e Event) int, error) {
	t, err := readLineTracker(j.db)
	if err != nil {
		return nil, fmt.Errorf("journal: reading the rows' moves: %w", err)
	}
	return func(e Event) int { return t.now(e.ID, e.Manifest, e.Line) }, nil
}

// WithdrawnRow is a row no longer in its manifest (Rebind), with the
// line it last had and the verdict it keeps.
type WithdrawnRow struct {
	Manifest string         `json:"manifest"`
	Line     int            `json:"manifest_line"`
	SourceID string         `json:"source_id"`
	State    outcome.State  `json:"state"`
	Reason   outcome.Reason `json:"reason,omitempty"`
}

// WithdrawnRows lists the withdrawn rows of every manifest, by manifest
// and the line they last had.
func (j *Journal) WithdrawnRows() ([]WithdrawnRow, error) {
	wrap := func(err error) error { return fmt.Errorf("journal: listing the withdrawn rows: %w", err) }
	t, err := readLineTracker(j.db)
	if err != nil {
		return nil, wrap(err)
	}
	rows, err := j.db.Query(`SELECT r.manifest, r.line, r.source_id, r.kind, r.reason, COALESCE(d.state,''), COALESCE(d.reason,'')
		FROM rows r LEFT JOIN documents d ON d.id = r.document_id WHERE r.line < 0`)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	var out []WithdrawnRow
	for rows.Next() {
		var w WithdrawnRow
		var kind rowKind
		var state, reason string
		if err := rows.Scan(&w.Manifest, &w.Line, &w.SourceID, &kind, &w.Reason, &state, &reason); err != nil {
			return nil, wrap(err)
		}
		w.State, w.Reason = kind.outcome(w.Reason, state, reason)
		w.Line = t.withdrawnFrom[rowKey(w.Manifest, w.Line)]
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err)
	}
	slices.SortFunc(out, func(a, b WithdrawnRow) int {
		if a.Manifest != b.Manifest {
			return strings.Compare(a.Manifest, b.Manifest)
		}
		return a.Line - b.Line
	})
	return out, nil
}

// WithdrawnDocuments returns the documents whose every row was withdrawn
// from its manifest (Rebind): no row in a manifest owns or duplicates
// them any more.
func (j *Journal) WithdrawnDocuments() (map[int64]bool, error) {
	rows, err := j.db.Query(`SELECT DISTINCT document_id FROM rows r WHERE r.line < 0 AND document_id IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM rows o WHERE o.document_id = r.document_id AND o.line > 0)`)
	if err != nil {
		return nil, fmt.Errorf("journal: listing the withdrawn documents: %w", err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("journal: listing the withdrawn documents: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}
