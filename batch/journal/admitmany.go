package journal

import (
	"database/sql"
	"fmt"
	"slices"
	"strconv"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file is admission by the batch (AdmitMany): on PostgreSQL the
// rows new to the journal, however many, are written by one transaction
// of a fixed number of statements (admitNew), where Admit takes about
// eight round trips a row; a manifest streamed on a network of half a
// millisecond's round trip admitted about 200 rows a second one at a
// time, fewer than the workers of a big batch finish.
//
// Two processes may admit the same manifest at once (one stalled past
// its admission hold, the other took it over): each line is inserted
// ON CONFLICT DO NOTHING before anything else of it is written, so a
// line is the first inserter's, whose transaction the other's insert
// waits for, and the other admits it as Admit does a line recorded
// already. A document is inserted the same way on its source_id, in
// source_id order, so that two admitters never wait for each other's
// documents in a cycle.

// AdmitBatch is the most rows AdmitMany writes in one transaction.
const AdmitBatch = 64

// AdmitMany records rows as Admit does each, and returns their statuses
// in order: up to AdmitBatch of them in one transaction.
func (j *Journal) AdmitMany(as []Admission) ([]RowStatus, error) {
	out := make([]RowStatus, len(as))
	for start := 0; start < len(as); start += AdmitBatch {
		end := min(start+AdmitBatch, len(as))
		if err := j.admitChunk(as[start:end], out[start:end]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// admitChunk admits as (AdmitBatch at most) into out.
func (j *Journal) admitChunk(as []Admission, out []RowStatus) error {
	fresh := make([]*RowStatus, len(as))
	wrote := make([]bool, len(as))
	var err error
	if j.pg {
		err = j.hotTx(func(tx *sql.Tx) error {
			clear(fresh)
			clear(wrote)
			return j.admitNew(tx, as, fresh, wrote)
		})
	} else {
		// SQLite: row by row, in one transaction (one disk sync).
		err = j.appendTx(func(tx *sql.Tx) error {
			clear(fresh)
			for i, a := range as {
				if err := j.admitIn(tx, a, &fresh[i]); err != nil {
					return fmt.Errorf("line %d: %w", a.Line, err)
				}
				wrote[i] = true
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("journal: admitting %d rows: %w", len(as), err)
	}
	for i, a := range as {
		switch {
		case fresh[i] != nil:
			out[i] = *fresh[i]
		case wrote[i]:
			// A duplicate or a conflict, as recorded.
			st, _, err := j.Row(a.Manifest, a.Line)
			if err != nil {
				return err
			}
			out[i] = st
		default:
			// Recorded before, by this process or another: as Admit
			// finds a line seen before.
			st, err := j.Admit(a)
			if err != nil {
				return err
			}
			out[i] = st
		}
	}
	return nil
}

// lineKey names a manifest's line in the maps of admitNew.
func lineKey(manifest string, line int64) string {
	return manifest + "\x00" + strconv.FormatInt(line, 10)
}

// admitted is what admitNew decided for one row it inserted.
type admitted struct {
	i      int
	kind   rowKind
	doc    int64 // 0: none
	newDoc bool  // the row made its document
}

// admitNew writes in tx, on PostgreSQL, the rows of as that no
// transaction recorded before, and their documents and events, setting
// wrote for each and fresh for those that made a document. Its round
// trips are the same for one row as for AdmitBatch.
func (j *Journal) admitNew(tx *sql.Tx, as []Admission, fresh []*RowStatus, wrote []bool) error {
	now := ms(j.now())
	owned, err := j.insertRows(tx, as, now)
	if err != nil {
		return err
	}
	if len(owned) == 0 {
		return nil
	}
	made, docs, err := j.insertDocuments(tx, as, owned, now)
	if err != nil {
		return err
	}
	var decided []admitted
	for _, i := range owned {
		a := as[i]
		d, ok := docs[a.SourceID]
		maker, madeHere := made[a.SourceID]
		switch {
		case !ok:
			return fmt.Errorf("line %d: its document is in no table", a.Line)
		case madeHere && maker == i:
			decided = append(decided, admitted{i: i, kind: kindDoc, doc: d.id, newDoc: true})
		case d.sha256 == a.SHA256:
			decided = append(decided, admitted{i: i, kind: kindDuplicate, doc: d.id})
		default:
			decided = append(decided, admitted{i: i, kind: kindRejected})
		}
		wrote[i] = true
	}
	if err := j.settleRows(tx, as, decided); err != nil {
		return err
	}
	if err := j.queueAdmissions(tx, as, decided, now); err != nil {
		return err
	}
	for _, d := range decided {
		if d.newDoc {
			a := as[d.i]
			fresh[d.i] = &RowStatus{Manifest: a.Manifest, Line: a.Line, SourceID: a.SourceID, State: outcome.Queued, SHA256: a.SHA256,
				DocID: d.doc, Fields: a.Fields}
		}
	}
	return nil
}

// insertRows inserts the lines of as no transaction recorded before, as
// conflicts for now (settleRows gives each its verdict), and returns
// their indexes in as, in order.
func (j *Journal) insertRows(tx *sql.Tx, as []Admission, now int64) ([]int, error) {
	n := len(as)
	mans, srcs, shas, fields := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	lines := make([]int64, n)
	at := make(map[string]int, n)
	for i, a := range as {
		mans[i], lines[i], srcs[i], shas[i], fields[i] = a.Manifest, int64(a.Line), a.SourceID, a.SHA256, a.Fields
		if _, dup := at[lineKey(a.Manifest, lines[i])]; !dup {
			at[lineKey(a.Manifest, lines[i])] = i
		}
	}
	rows, err := tx.Query(`INSERT INTO rows(manifest, line, source_id, kind, reason, sha256, recorded_at, fields)
		SELECT u.manifest, u.line, u.source_id, ?, ?, u.sha256, ?, u.fields
		FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS u(manifest, line, source_id, sha256, fields, i)
		ORDER BY u.i
		ON CONFLICT (manifest, line) DO NOTHING RETURNING manifest, line`,
		kindRejected, outcome.Conflict, now, mans, lines, srcs, shas, fields)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var owned []int
	for rows.Next() {
		var m string
		var line int64
		if err := rows.Scan(&m, &line); err != nil {
			return nil, err
		}
		owned = append(owned, at[lineKey(m, line)])
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(owned)
	return owned, nil
}

// docOf is a document as admission compares a row with it.
type docOf struct {
	id     int64
	sha256 string
}

// insertDocuments inserts a document for each source_id of the rows
// owned (indexes in as) that has none, from the first of its rows, and
// returns which row made each (made) and the document of every source_id
// of owned (docs).
func (j *Journal) insertDocuments(tx *sql.Tx, as []Admission, owned []int, now int64) (made map[string]int, docs map[string]docOf, err error) {
	first := map[string]int{}
	var order []string
	for _, i := range owned {
		if _, ok := first[as[i].SourceID]; !ok {
			first[as[i].SourceID] = i
			order = append(order, as[i].SourceID)
		}
	}
	slices.Sort(order)
	n := len(order)
	shas, paths, traces := make([]string, n), make([]string, n), make([]string, n)
	lines, sizes, pages := make([]int64, n), make([]int64, n), make([]int64, n)
	for k, s := range order {
		a := as[first[s]]
		shas[k], paths[k], traces[k] = a.SHA256, a.Path, NewToken()
		lines[k], sizes[k], pages[k] = int64(a.Line), a.Size, int64(a.Pages)
	}
	rows, err := tx.Query(`INSERT INTO documents(source_id, sha256, path, manifest_line, size, pages, state, trace_id, admitted_at)
		SELECT u.source_id, u.sha256, u.path, u.line, u.size, u.pages, ?, u.trace, ?
		FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[]) WITH ORDINALITY AS u(source_id, sha256, path, line, size, pages, trace, i)
		WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.source_id=u.source_id)
		ORDER BY u.i
		ON CONFLICT (source_id) DO NOTHING RETURNING id, source_id`,
		outcome.Queued, now, order, shas, paths, lines, sizes, pages, traces)
	if err != nil {
		return nil, nil, err
	}
	made, docs = map[string]int{}, map[string]docOf{}
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			rows.Close()
			return nil, nil, err
		}
		made[s], docs[s] = first[s], docOf{id, as[first[s]].SHA256}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(made) == len(order) {
		return made, docs, nil
	}
	// The source_ids another row, in the journal already, made. (They
	// are left out of the insert above, which would draw an id for each
	// and leave gaps in the documents' ids that Admit does not.)
	var others []string
	for _, s := range order {
		if _, ok := made[s]; !ok {
			others = append(others, s)
		}
	}
	rows, err = tx.Query(`SELECT id, source_id, sha256 FROM documents WHERE source_id = ANY(?::text[])`, others)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var d docOf
		var s string
		if err := rows.Scan(&d.id, &s, &d.sha256); err != nil {
			return nil, nil, err
		}
		docs[s] = d
	}
	return made, docs, rows.Err()
}
