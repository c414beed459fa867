package journal

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file binds a manifest's rows to their source_id rather than to the
// line they were first read at (Rebind): a manifest is a spreadsheet, and
// people sort it, delete rows, insert them above others. Before a run
// streams a manifest, each row the journal holds is moved to the line its
// source_id is on now, so that every other part of the journal, which
// looks rows up by manifest and line, finds the row's own verdict there.
//
// A row whose source_id is no longer in the manifest is withdrawn: it
// keeps its verdict, its document and its artifact, and moves to a
// negative line (the rows table's key is the manifest and the line), out
// of the way of the lines the manifest now has. Withdrawn rows are listed
// (status, the report) but no longer count: not as rows needing a person,
// not in the queue, not in an export unless asked. A withdrawn row whose
// source_id comes back is moved back to its new line, as it was.
//
// Events name rows by their line at the time: readers that key events by
// line translate them through the moves (lineTracker).

// The events Rebind records.
const (
	// EventRowsMoved: rows of a manifest moved to other lines; data
	// "moves" lists each {"source_id", "from", "to"} (a negative from: a
	// withdrawn row back in the manifest).
	EventRowsMoved EventKind = "rows_moved"
	// EventRowWithdrawn: a row's source_id is no longer in its manifest;
	// data holds the line it had ("from"), its placeholder ("to", < 0) and
	// the verdict it keeps ("state", "reason").
	EventRowWithdrawn EventKind = "row_withdrawn"
)

// ManifestLine is one row of a manifest as it now stands: its line and
// the source_id written there ("" when the row has none).
type ManifestLine struct {
	Line     int
	SourceID string
}

// LineMove is one row moved by Rebind.
type LineMove struct {
	SourceID string `json:"source_id"`
	From     int    `json:"from"`
	To       int    `json:"to"`
}

// Withdrawal is the data of a row_withdrawn event.
type Withdrawal struct {
	From   int            `json:"from"`
	To     int            `json:"to"`
	State  outcome.State  `json:"state"`
	Reason outcome.Reason `json:"reason,omitempty"`
}

// Rebinding is what Rebind changed: the rows moved to another line, those
// back from withdrawal, and those withdrawn.
type Rebinding struct {
	Moved     []LineMove
	Restored  []LineMove
	Withdrawn []LineMove
}

// Changed reports whether Rebind moved any row.
func (b Rebinding) Changed() bool {
	return len(b.Moved)+len(b.Restored)+len(b.Withdrawn) > 0
}

// boundRow is a row of the journal as Rebind pairs it.
type boundRow struct {
	line     int
	sourceID string
	docID    int64
	state    outcome.State
	reason   outcome.Reason
}

// Rebind moves the journal's rows of manifest to the lines their
// source_ids have in lines (every row of the manifest, in any order), and
// withdraws those whose source_id it no longer has; see the top of this
// file. Several rows with one source_id are paired in their order, a row
// that kept its line first. It records what it did (events rows_moved and
// row_withdrawn) in one transaction, and changes nothing when every row
// is where it was.
func (j *Journal) Rebind(manifest string, lines []ManifestLine) (Rebinding, error) {
	var out Rebinding
	err := j.appendTx(func(tx *sql.Tx) error {
		have, err := boundRows(tx, manifest, j.forUpdate("r"))
		if err != nil {
			return err
		}
		out = planRebind(have, lines)
		if !out.Changed() {
			return nil
		}
		return j.applyRebind(tx, manifest, have, out)
	})
	if err != nil {
		return Rebinding{}, fmt.Errorf("journal: binding the manifest's rows to their source_id: %w", err)
	}
	return out, nil
}

// PlanRebind is what Rebind would change now, read without writing:
// nothing when every row is where the journal has it, which spares a
// rerun of an unedited manifest the admission hold.
func (j *Journal) PlanRebind(manifest string, lines []ManifestLine) (Rebinding, error) {
	have, err := boundRows(j.db, manifest, "")
	if err != nil {
		return Rebinding{}, fmt.Errorf("journal: binding the manifest's rows to their source_id: %w", err)
	}
	return planRebind(have, lines), nil
}

// boundRows reads the journal's rows of manifest, with lock (forUpdate)
// in a transaction that rebinds them.
func boundRows(q queryer, manifest, lock string) ([]boundRow, error) {
	rows, err := q.Query(`SELECT r.line, r.source_id, r.kind, r.reason, COALESCE(r.document_id,0), COALESCE(d.state,''), COALESCE(d.reason,'')
		FROM rows r LEFT JOIN documents d ON d.id = r.document_id WHERE r.manifest=? ORDER BY r.line`+lock, manifest)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []boundRow
	for rows.Next() {
		var b boundRow
		var kind rowKind
		var docState, docReason string
		if err := rows.Scan(&b.line, &b.sourceID, &kind, &b.reason, &b.docID, &docState, &docReason); err != nil {
			return nil, err
		}
		b.state, b.reason = kind.outcome(b.reason, docState, docReason)
		out = append(out, b)
	}
	return out, rows.Err()
}

// planRebind pairs the journal's rows (have) with the manifest's (want)
// by source_id: a row still at its line stays; the others of a source_id
// take its remaining lines in order, the rows in the manifest before the
// withdrawn ones (the latest withdrawn first); the rows left over are
// withdrawn, to placeholders below every line the journal holds, but a
// rejected row with no document whose line now holds a row nothing else
// took, which stays for the rerun rules to admit again.
func planRebind(have []boundRow, want []ManifestLine) Rebinding {
	var out Rebinding
	wantBy := map[string][]int{}
	for _, w := range want {
		wantBy[w.SourceID] = append(wantBy[w.SourceID], w.Line)
	}
	haveBy := map[string][]boundRow{}
	var ids []string
	low := 0
	for _, h := range have {
		if _, ok := haveBy[h.sourceID]; !ok {
			ids = append(ids, h.sourceID)
		}
		haveBy[h.sourceID] = append(haveBy[h.sourceID], h)
		low = min(low, h.line)
	}
	taken := map[int]bool{} // the manifest's lines a journal row takes
	var left []boundRow     // the rows in the manifest no line took
	for _, id := range ids {
		rows, lines := haveBy[id], slices.Clone(wantBy[id])
		slices.Sort(lines)
		var rest []boundRow
		for _, h := range rows {
			if i := slices.Index(lines, h.line); i >= 0 && h.line > 0 {
				lines = slices.Delete(lines, i, i+1)
				taken[h.line] = true
				continue
			}
			rest = append(rest, h)
		}
		// The rows in the manifest by line, then the withdrawn ones,
		// the latest withdrawn (the lowest placeholder) first.
		slices.SortStableFunc(rest, func(a, b boundRow) int {
			if (a.line > 0) != (b.line > 0) {
				if a.line > 0 {
					return -1
				}
				return 1
			}
			return a.line - b.line
		})
		for i, h := range rest {
			m := LineMove{SourceID: id, From: h.line}
			switch {
			case i < len(lines) && h.line > 0:
				m.To, taken[lines[i]] = lines[i], true
				out.Moved = append(out.Moved, m)
			case i < len(lines):
				m.To, taken[lines[i]] = lines[i], true
				out.Restored = append(out.Restored, m)
			case h.line > 0:
				left = append(left, h)
			}
		}
	}
	lines := map[int]bool{}
	for _, w := range want {
		lines[w.Line] = true
	}
	slices.SortFunc(left, func(a, b boundRow) int { return a.line - b.line })
	for _, h := range left {
		if h.docID == 0 && h.state == outcome.Rejected && lines[h.line] && !taken[h.line] {
			// A rejected row whose line now holds a row the journal has
			// not seen (its source_id fixed: a missing_field filled in)
			// stays, and the rerun admits it again as it always has.
			continue
		}
		low--
		out.Withdrawn = append(out.Withdrawn, LineMove{SourceID: h.sourceID, From: h.line, To: low})
	}
	return out
}

// applyRebind moves the rows b names in tx and records it: one
// row_withdrawn event per row withdrawn, then one rows_moved event for the
// others. Every row moving goes to a placeholder first, so that a row
// never lands on a line another has not left yet.
func (j *Journal) applyRebind(tx *sql.Tx, manifest string, have []boundRow, b Rebinding) error {
	all := slices.Concat(b.Withdrawn, b.Moved, b.Restored)
	low := 0
	for _, h := range have {
		low = min(low, h.line)
	}
	for _, m := range all {
		low = min(low, m.To)
	}
	byLine := map[int]boundRow{}
	for _, h := range have {
		byLine[h.line] = h
	}
	move := func(from, to int) error {
		_, err := tx.Exec(`UPDATE rows SET line=? WHERE manifest=? AND line=?`, to, manifest, from)
		return err
	}
	for i, m := range all {
		if err := move(m.From, low-1-i); err != nil {
			return err
		}
	}
	var touched []touch
	seen := map[string]bool{}
	add := func(t touch) {
		if k := t.table + t.keyJSON(); !seen[k] {
			seen[k] = true
			touched = append(touched, t)
		}
	}
	for i, m := range all {
		if err := move(low-1-i, m.To); err != nil {
			return err
		}
		add(rowTouch(manifest, m.From))
		add(rowTouch(manifest, m.To))
		if doc := byLine[m.From].docID; doc != 0 && m.To > 0 {
			// The document's line follows its row's, where its row owns it.
			res, err := tx.Exec(`UPDATE documents SET manifest_line=? WHERE id=? AND EXISTS
				(SELECT 1 FROM rows WHERE manifest=? AND line=? AND document_id=? AND kind=?)`, m.To, doc, manifest, m.To, doc, kindDoc)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n > 0 {
				add(docTouch(doc))
			}
		}
	}
	for _, m := range b.Withdrawn {
		h := byLine[m.From]
		data, _ := json.Marshal(Withdrawal{From: m.From, To: m.To, State: h.state, Reason: h.reason})
		ev := Event{Kind: EventRowWithdrawn, Manifest: manifest, Line: m.From, DocID: h.docID, SourceID: h.sourceID, Data: data}
		if err := j.appendEvent(tx, ev, rowTouch(manifest, m.From), rowTouch(manifest, m.To)); err != nil {
			return err
		}
	}
	moves := slices.Concat(b.Moved, b.Restored)
	if len(moves) == 0 {
		return nil
	}
	data, _ := json.Marshal(map[string][]LineMove{"moves": moves})
	return j.appendEvent(tx, Event{Kind: EventRowsMoved, Manifest: manifest, Data: data}, touched...)
}
