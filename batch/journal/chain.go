package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ChainProblem is one place where the custody log, or a table against it,
// shows a rewrite: an event whose hash does not follow, a gap in the
// numbering, a table row the log does not hold as it stands.
type ChainProblem struct {
	// Subject names what disagrees, in words: "event 12 (attempt_finished,
	// document R-0003)", "document R-0003 (id 3)", "manifest line 5".
	Subject  string
	SourceID string
	Detail   string
}

// Chain is what CheckChain found: the batch root it recomputed, every
// problem, and every earlier root (the recomputed hash of each event), so
// that a root pinned before the batch went on can be found. The roots are
// recomputed from the events' content, never read from their stored
// hashes: a journal whose hashes were rewritten to hide an edit has
// another root than the one pinned before.
type Chain struct {
	Root Root
	// Legacy is true for a journal an earlier build wrote, read without
	// migrating it: it has no custody log to check.
	Legacy bool
	// Pending is how many events were committed and not yet chained (on
	// PostgreSQL: a process stopped between a commit and its seal, or
	// one is under way): replayed after the chain, in the order they
	// will be chained, and under no root until then.
	Pending  int64
	Problems []ChainProblem
	roots    map[string]int64
}

// Position returns the number of the event whose hash is root: root was
// the batch root after that many events.
func (c *Chain) Position(root string) (int64, bool) {
	n, ok := c.roots[strings.ToLower(root)]
	return n, ok
}

// CheckChain recomputes the custody log's hash chain and derives from it
// every covered table's content, then compares each table with it, row by
// row. It reads only; the events are streamed, the derived rows held (a
// few hundred bytes each).
func (j *Journal) CheckChain() (*Chain, error) {
	c := &Chain{roots: map[string]int64{}}
	if j.legacy {
		c.Legacy = true
		return c, nil
	}
	j.settle()
	derived := map[string]map[string]json.RawMessage{}
	for _, tb := range custodyTables {
		derived[tb.name] = map[string]json.RawMessage{}
	}
	// On PostgreSQL the log, the events not yet chained and the tables
	// are read in one snapshot, so that a seal or a write under way
	// meanwhile shows in all or none of them.
	var q snapshot = j.db
	if j.pg {
		tx, err := j.readTx()
		if err != nil {
			return nil, fmt.Errorf("journal: reading the custody log: %w", err)
		}
		defer tx.Rollback()
		q = tx
	}
	rows, err := q.QueryContext(j.readContext(), `SELECT id, at, kind, manifest, line, COALESCE(document_id,0), source_id, data, hash FROM events ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("journal: reading the custody log: %w", err)
	}
	defer rows.Close()
	// prev is the stored hash of the event before, against which each
	// event's own hash is checked (so that one edit is one problem);
	// root is the chain recomputed from the events' content alone, which
	// is what the batch root and the earlier roots are.
	prev, root, last := ZeroHash, ZeroHash, int64(0)
	for rows.Next() {
		var e Event
		var at sql.NullInt64
		var data string
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.Manifest, &e.Line, &e.DocID, &e.SourceID, &data, &e.Hash); err != nil {
			return nil, fmt.Errorf("journal: reading the custody log: %w", err)
		}
		e.At, e.Data = fromMS(at), json.RawMessage(data)
		if e.ID != last+1 {
			c.Problems = append(c.Problems, ChainProblem{Subject: e.subject(), SourceID: e.SourceID,
				Detail: fmt.Sprintf("follows event %d: events %d to %d are missing", last, last+1, e.ID-1)})
		}
		got := EventHash(prev, e)
		if got != e.Hash {
			c.Problems = append(c.Problems, ChainProblem{Subject: e.subject(), SourceID: e.SourceID,
				Detail: "its content or place does not match its hash: edited, inserted or moved"})
		}
		if root == prev {
			root = got // the chain so far is the stored one
		} else {
			root = EventHash(root, e)
		}
		prev, last = e.Hash, e.ID
		c.roots[root] = e.ID
		c.Root = Root{Hash: root, Events: e.ID}
		replay(e, derived, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("journal: reading the custody log: %w", err)
	}
	rows.Close()
	if last == 0 {
		c.Root = Root{Hash: ZeroHash}
	}
	if err := j.replayPending(q, derived, c); err != nil {
		return nil, err
	}
	for i := range custodyTables {
		if err := j.compareTable(q, &custodyTables[i], derived[custodyTables[i].name], c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// snapshot is what CheckChain reads through: the database, or on
// PostgreSQL a repeatable read transaction.
type snapshot interface {
	queryer
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// replay applies the custody records of e to the rows derived so far.
func replay(e Event, derived map[string]map[string]json.RawMessage, c *Chain) {
	var d struct {
		Custody []custodyRecord `json:"custody"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		c.Problems = append(c.Problems, ChainProblem{Subject: e.subject(), SourceID: e.SourceID, Detail: "its data is not a JSON object"})
		return
	}
	for _, r := range d.Custody {
		t, ok := derived[r.Table]
		if !ok {
			continue
		}
		if string(r.Row) == "null" {
			delete(t, string(r.Key))
		} else {
			t[string(r.Key)] = r.Row
		}
	}
}

// replayPending replays, after the chain, the events of a PostgreSQL
// journal committed and not yet chained (seal.go), in the order they
// will be chained, and counts them in c.Pending.
func (j *Journal) replayPending(q snapshot, derived map[string]map[string]json.RawMessage, c *Chain) error {
	if !j.pg || j.noPending {
		return nil
	}
	rows, err := q.QueryContext(j.readContext(), `SELECT at, kind, manifest, line, COALESCE(document_id,0), source_id, data FROM pending ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("journal: reading the events not yet chained: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e Event
		var at sql.NullInt64
		var data string
		if err := rows.Scan(&at, &e.Kind, &e.Manifest, &e.Line, &e.DocID, &e.SourceID, &data); err != nil {
			return fmt.Errorf("journal: reading the events not yet chained: %w", err)
		}
		e.At, e.Data = fromMS(at), json.RawMessage(data)
		c.Pending++
		replay(e, derived, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("journal: reading the events not yet chained: %w", err)
	}
	return nil
}

// compareTable compares tb's rows with those the log derived (which it
// empties), adding a problem for each row edited, inserted or deleted
// behind the log.
func (j *Journal) compareTable(q snapshot, tb *custodyTable, derived map[string]json.RawMessage, c *Chain) error {
	ctx := j.readContext()
	err := readRows(q, tb, "", nil, j.sizeless, func(row map[string]any) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := custodyKey(tb, row)
		want, ok := derived[key]
		delete(derived, key)
		got, err := json.Marshal(row)
		if err != nil {
			return err
		}
		if ok && string(got) != string(want) {
			want = withLaterColumns(tb, want)
		}
		switch {
		case !ok:
			c.Problems = append(c.Problems, problem(tb, row, "in the journal's "+tb.name+" table, not in the custody log: inserted"))
		case string(got) != string(want):
			c.Problems = append(c.Problems, problem(tb, row, "differs from the custody log: "+diff(got, want)))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("journal: checking %s against the custody log: %w", tb.name, err)
	}
	for _, key := range slices.Sorted(maps.Keys(derived)) {
		var row map[string]any
		json.Unmarshal(derived[key], &row)
		c.Problems = append(c.Problems, problem(tb, row, "in the custody log, missing from the journal's "+tb.name+" table: deleted"))
	}
	return nil
}

// withLaterColumns is row (a table row as an event recorded it) with
// each of the table's laterColumns it lacks as NULL: an event recorded
// before the column was added says nothing of it, and the row has it
// NULL (a later event that sets it records it). A row that lacks none is
// returned as it is.
func withLaterColumns(tb *custodyTable, row json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(row, &obj) != nil || obj == nil {
		return row
	}
	added := false
	for _, c := range laterColumns[tb.name] {
		if _, ok := obj[c]; !ok {
			obj[c], added = json.RawMessage("null"), true
		}
	}
	if !added {
		return row
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return row
	}
	return b
}

func problem(tb *custodyTable, row map[string]any, detail string) ChainProblem {
	p := ChainProblem{Detail: detail}
	p.SourceID, _ = row["source_id"].(string)
	switch tb.name {
	case "documents":
		p.Subject = fmt.Sprintf("document %s (id %v)", p.SourceID, row["id"])
	case "rows":
		p.Subject = fmt.Sprintf("manifest line %v", row["line"])
		if p.SourceID != "" {
			p.Subject += " (" + p.SourceID + ")"
		}
	case "attempts":
		p.Subject = fmt.Sprintf("attempt %v of document id %v", row["number"], row["document_id"])
	case "runs":
		p.Subject = fmt.Sprintf("run %v", row["id"])
	case "meta":
		p.Subject = fmt.Sprintf("batch setting %v", row["key"])
	}
	return p
}

// diff names the columns in which two rows (JSON objects) differ, with the
// journal's value and the log's.
func diff(got, want []byte) string {
	var g, w map[string]any
	json.Unmarshal(got, &g)
	json.Unmarshal(want, &w)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(g)) {
		gb, _ := json.Marshal(g[k])
		wb, _ := json.Marshal(w[k])
		if string(gb) != string(wb) {
			out = append(out, fmt.Sprintf("%s is %s, the log says %s", k, gb, wb))
		}
	}
	return strings.Join(out, "; ")
}

// subject names an event in words.
func (e Event) subject() string {
	s := fmt.Sprintf("event %d (%s", e.ID, e.Kind)
	switch {
	case e.SourceID != "":
		s += ", document " + e.SourceID
	case e.DocID != 0:
		s += fmt.Sprintf(", document id %d", e.DocID)
	}
	if e.Line != 0 {
		s += fmt.Sprintf(", manifest line %d", e.Line)
	}
	return s + ")"
}
