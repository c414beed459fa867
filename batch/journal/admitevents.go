package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// settleRows gives each row admitNew inserted its verdict, in one
// statement: a document's or a duplicate's row its document and fields,
// a conflict's neither (as Admit records them).
func (j *Journal) settleRows(tx *sql.Tx, as []Admission, decided []admitted) error {
	n := len(decided)
	mans, kinds, reasons, fields := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	lines, docs := make([]int64, n), make([]int64, n)
	for k, d := range decided {
		a := as[d.i]
		mans[k], lines[k], kinds[k], docs[k] = a.Manifest, int64(a.Line), string(d.kind), d.doc
		if d.kind == kindRejected {
			reasons[k] = string(outcome.Conflict)
		} else {
			fields[k] = a.Fields
		}
	}
	_, err := tx.Exec(`UPDATE rows r SET kind=u.kind, reason=u.reason, document_id=NULLIF(u.doc, 0), fields=u.fields
		FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[]) AS u(manifest, line, kind, reason, doc, fields)
		WHERE r.manifest=u.manifest AND r.line=u.line`, mans, lines, kinds, reasons, docs, fields)
	return err
}

// queueAdmissions appends the event of each row decided, as Admit
// appends it (a document's row records the document and the row, the
// others the row), into pending in one statement after reading the rows
// and documents they record in two.
func (j *Journal) queueAdmissions(tx *sql.Tx, as []Admission, decided []admitted, now int64) error {
	n := len(decided)
	mans, lines, ids := make([]string, n), make([]int64, n), []int64{}
	for k, d := range decided {
		mans[k], lines[k] = as[d.i].Manifest, int64(as[d.i].Line)
		if d.newDoc {
			ids = append(ids, d.doc)
		}
	}
	recs := map[string]json.RawMessage{} // by table and key
	read := func(table, where string, args ...any) error {
		tb := tableNamed(table)
		return readRows(tx, tb, where, args, false, func(row map[string]any) error {
			b, err := json.Marshal(row)
			recs[table+custodyKey(tb, row)] = b
			return err
		})
	}
	if err := read("rows", `(manifest, line) IN (SELECT * FROM unnest(?::text[], ?::bigint[]))`, mans, lines); err != nil {
		return err
	}
	if len(ids) > 0 {
		if err := read("documents", `id = ANY(?::bigint[])`, ids); err != nil {
			return err
		}
	}
	record := func(t touch) custodyRecord {
		r := custodyRecord{Table: t.table, Key: json.RawMessage(t.keyJSON()), Row: json.RawMessage("null")}
		if b, ok := recs[t.table+string(r.Key)]; ok {
			r.Row = b
		}
		return r
	}
	ats, kinds, datas, tails, srcs := make([]int64, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	docs := make([]int64, n)
	for k, d := range decided {
		a := as[d.i]
		e := Event{At: time.UnixMilli(now), Kind: EventRowAdmitted, Manifest: a.Manifest, Line: a.Line, DocID: d.doc, SourceID: a.SourceID}
		touched := []touch{rowTouch(a.Manifest, a.Line)}
		switch {
		case d.newDoc:
			touched = []touch{docTouch(d.doc), rowTouch(a.Manifest, a.Line)}
		case d.kind == kindRejected:
			e.Kind = EventRowRejected
		}
		rs := make([]custodyRecord, len(touched))
		for i, t := range touched {
			rs[i] = record(t)
		}
		b, err := json.Marshal(rs)
		if err != nil {
			return err
		}
		if e.Data, err = json.Marshal(map[string]json.RawMessage{"custody": b}); err != nil {
			return err
		}
		ats[k], kinds[k], datas[k], tails[k], srcs[k], docs[k] = ms(e.At), string(e.Kind), string(e.Data), string(eventTail(e)), a.SourceID, d.doc
	}
	var last int64
	err := tx.QueryRow(`WITH q AS (INSERT INTO pending(at, kind, manifest, line, document_id, source_id, data, tail)
		SELECT u.at, u.kind, u.manifest, u.line, NULLIF(u.doc, 0), u.source_id, u.data, u.tail
		FROM unnest(?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[])
			WITH ORDINALITY AS u(at, kind, manifest, line, doc, source_id, data, tail, i)
		ORDER BY u.i RETURNING seq) SELECT max(seq) FROM q`,
		ats, kinds, mans, lines, docs, srcs, datas, tails).Scan(&last)
	if err != nil {
		return err
	}
	if j.holdsCustody(tx) {
		_, err = callSeal(context.Background(), tx, nil)
		return err
	}
	j.queued.Store(tx, last)
	return nil
}
