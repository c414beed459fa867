package journal

import (
	"encoding/json"
	"fmt"
	"strings"
)

// recordAll reads the rows touched as they stand in tx, as recordEach
// does, in one statement: a round trip for an event however many rows
// it records, where each is one on PostgreSQL. Each row is a subquery
// left-joined to one row, with a column that says whether it exists (a
// deleted row records null):
//
//	SELECT t0.present, t0.<cols>, t1.present, t1.<cols>, ...
//	FROM (SELECT 1 AS one) x
//	LEFT JOIN (SELECT 1 AS present, <cols> FROM <table> WHERE <key>) t0 ON 1=1
//	...
//
// The columns come back in the types the table's own read gives them, so
// the records are byte for byte those of recordEach.
func recordAll(tx queryer, touched []touch) ([]custodyRecord, error) {
	if len(touched) == 1 {
		return recordEach(tx, touched)
	}
	var sel, from []string
	var args []any
	n := 0
	for i, t := range touched {
		tb := tableNamed(t.table)
		alias := fmt.Sprintf("t%d", i)
		conds := make([]string, len(tb.key))
		for k, c := range tb.key {
			conds[k] = c + "=?"
		}
		sel = append(sel, alias+".present")
		for _, c := range tb.cols {
			sel = append(sel, alias+"."+c)
		}
		from = append(from, `LEFT JOIN (SELECT 1 AS present, `+strings.Join(tb.cols, ", ")+` FROM `+tb.name+
			` WHERE `+strings.Join(conds, " AND ")+`) `+alias+` ON 1=1`)
		args = append(args, t.key...)
		n += 1 + len(tb.cols)
	}
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rows, err := tx.Query(`SELECT `+strings.Join(sel, ", ")+` FROM (SELECT 1 AS one) x `+strings.Join(from, " "), args...)
	if err != nil {
		return nil, fmt.Errorf("reading the rows for the custody log: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("reading the rows for the custody log: %w", err)
		}
		return nil, fmt.Errorf("reading the rows for the custody log: no row")
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("reading the rows for the custody log: %w", err)
	}
	recs := make([]custodyRecord, 0, len(touched))
	at := 0
	for _, t := range touched {
		tb := tableNamed(t.table)
		r := custodyRecord{Table: t.table, Key: json.RawMessage(t.keyJSON()), Row: json.RawMessage("null")}
		if vals[at] != nil {
			row := make(map[string]any, len(tb.cols))
			for i, c := range tb.cols {
				v := vals[at+1+i]
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				row[c] = v
			}
			b, err := json.Marshal(row)
			if err != nil {
				return nil, err
			}
			r.Row = b
		}
		recs = append(recs, r)
		at += 1 + len(tb.cols)
	}
	return recs, rows.Close()
}
