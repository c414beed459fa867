package journal

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is the custody log: the events table as a hash chain that
// covers every fact the other tables hold.
//
// Every write that changes a covered table appends, in the same
// transaction, one event whose data carries the changed table rows as they
// stand after the write ("custody": a list of {"table", "key", "row"},
// row null for a deleted one). Replaying the events in order, the last
// row recorded for each key is the table's content: that is how Verify
// derives the batch state from the log and finds any row edited, deleted
// or inserted behind it.
//
// Each event's hash covers the previous event's hash and the event's
// fields, so no event can be edited, removed, inserted or moved without
// changing every hash after it. The hash of the last event is the batch
// root: pinned by an auditor, it stays valid while the batch goes on,
// because later events only extend the chain.
//
// The encoding (EventHash) is a run of netstrings (length, ':', bytes,
// ','), in this order:
//
//	"refbatch-event-1", prev, id, at, kind, manifest, line, document_id, source_id, data
//
// where prev is the previous event's hash in lowercase hex (64 zeros for
// the first event), id, at (Unix milliseconds), line and document_id
// (0 for none) are decimal, and data is the event's data column byte for
// byte. The hash is the lowercase hex SHA-256 of that string.

// ZeroHash is the prev of a chain's first event, and the root of an empty
// log.
var ZeroHash = strings.Repeat("0", 64)

// EventHash is an event's hash, chained to prev (see the encoding above).
func EventHash(prev string, e Event) string {
	h := sha256.Sum256(append(netstrings("refbatch-event-1", prev, strconv.FormatInt(e.ID, 10)), eventTail(e)...))
	return hex.EncodeToString(h[:])
}

// eventTail is the end of e's encoding, after its id: what the event
// brings, whatever comes before it in the chain.
func eventTail(e Event) []byte {
	return netstrings(strconv.FormatInt(ms(e.At), 10), string(e.Kind), e.Manifest, strconv.Itoa(e.Line),
		strconv.FormatInt(e.DocID, 10), e.SourceID, string(e.Data))
}

// netstrings encodes each of parts as length, ':', bytes, ','.
func netstrings(parts ...string) []byte {
	var b []byte
	for _, s := range parts {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
		b = append(b, ',')
	}
	return b
}

// custodyTable is one table the log covers: its key and the columns the
// events record. Columns left out change without an event and are not
// custody: a lease's token and expiry (renewed every page), a run's
// measurements (CPU, memory). The pages table (per-page timings) is left
// out whole.
type custodyTable struct {
	name string
	key  []string
	cols []string
}

var custodyTables = []custodyTable{
	{"meta", []string{"key"}, []string{"key", "value"}},
	{"runs", []string{"id"}, []string{"id", "owner", "started_at", "finished_at", "exit", "settings", "versions"}},
	{"documents", []string{"id"}, []string{"id", "source_id", "sha256", "path", "manifest_line", "size", "pages",
		"state", "reason", "attempts", "abandoned", "attempts_base", "retry_policy", "next_attempt_at", "trace_id",
		"mean_confidence", "band", "artifact", "artifact_sha256", "artifact_size", "content_sha256", "admitted_at", "started_at", "finished_at"}},
	{"rows", []string{"manifest", "line"}, []string{"manifest", "line", "source_id", "kind", "reason", "sha256",
		"document_id", "recorded_at", "admit_key", "fields"}},
	{"attempts", []string{"id"}, []string{"id", "document_id", "number", "owner", "started_at", "ended_at", "outcome", "cause"}},
}

func tableNamed(name string) *custodyTable {
	for i := range custodyTables {
		if custodyTables[i].name == name {
			return &custodyTables[i]
		}
	}
	return nil
}

// touch names one table row an event records.
type touch struct {
	table string
	key   []any
}

func docTouch(id int64) touch                  { return touch{"documents", []any{id}} }
func rowTouch(manifest string, line int) touch { return touch{"rows", []any{manifest, int64(line)}} }
func attemptTouch(id int64) touch              { return touch{"attempts", []any{id}} }
func runTouch(id int64) touch                  { return touch{"runs", []any{id}} }
func metaTouch(key string) touch               { return touch{"meta", []any{key}} }
func (t touch) keyJSON() string                { b, _ := json.Marshal(t.key); return string(b) }
func custodyKey(tb *custodyTable, row map[string]any) string {
	key := make([]any, len(tb.key))
	for i, k := range tb.key {
		key[i] = row[k]
	}
	return touch{tb.name, key}.keyJSON()
}

// custodyRecord is one table row as an event records it.
type custodyRecord struct {
	Table string          `json:"table"`
	Key   json.RawMessage `json:"key"`
	Row   json.RawMessage `json:"row"` // null: the row was deleted
}

// queryer is what reads a table row: a transaction or the database.
type queryer interface {
	Query(string, ...any) (*sql.Rows, error)
}

// laterColumns are the covered columns added after the custody log
// began (schema version 6), by table. An event recorded before a column
// was added holds no value for it: the row it records has the column's
// NULL (see withLaterColumns), and a journal of an earlier version, read
// as it is, reads it as NULL (sizeless).
var laterColumns = map[string][]string{"documents": {"artifact_size"}}

// readRows calls fn with every row of tb that matches where (a SQL
// condition on args, "" for all), as column name to value. With
// sizeless, the columns of laterColumns are read as NULL: the journal is
// of a version before them.
func readRows(q queryer, tb *custodyTable, where string, args []any, sizeless bool, fn func(map[string]any) error) error {
	sel := tb.cols
	if sizeless {
		sel = slices.Clone(tb.cols)
		for i, c := range sel {
			if slices.Contains(laterColumns[tb.name], c) {
				sel[i] = `NULL AS ` + c
			}
		}
	}
	query := `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + tb.name
	if where != "" {
		query += ` WHERE ` + where
	}
	rows, err := q.Query(query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]any, len(tb.cols))
	ptrs := make([]any, len(tb.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		row := make(map[string]any, len(tb.cols))
		for i, c := range tb.cols {
			if b, ok := vals[i].([]byte); ok {
				vals[i] = string(b)
			}
			row[c] = vals[i]
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return rows.Err()
}

// record reads the row t names as it stands in tx.
func record(tx queryer, t touch) (custodyRecord, error) {
	tb := tableNamed(t.table)
	conds := make([]string, len(tb.key))
	for i, k := range tb.key {
		conds[i] = k + "=?"
	}
	r := custodyRecord{Table: t.table, Key: json.RawMessage(t.keyJSON()), Row: json.RawMessage("null")}
	err := readRows(tx, tb, strings.Join(conds, " AND "), t.key, false, func(row map[string]any) error {
		b, err := json.Marshal(row)
		r.Row = b
		return err
	})
	return r, err
}

// recordEach reads the rows touched as they stand in tx, one statement
// each.
func recordEach(tx queryer, touched []touch) ([]custodyRecord, error) {
	recs := make([]custodyRecord, 0, len(touched))
	for _, t := range touched {
		r, err := record(tx, t)
		if err != nil {
			return nil, fmt.Errorf("reading %s for the custody log: %w", t.table, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// withCustody returns data (a JSON object, or empty) with the records of
// the rows touched added under "custody".
func (j *Journal) withCustody(tx queryer, data json.RawMessage, touched []touch) (json.RawMessage, error) {
	records := recordEach
	if j.pg {
		records = recordAll
	}
	if len(touched) == 0 {
		return data, nil
	}
	obj := map[string]json.RawMessage{}
	if len(data) > 0 {
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("event data: %w", err)
		}
	}
	recs, err := records(tx, touched)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return nil, err
	}
	obj["custody"] = b
	return json.Marshal(obj)
}

// lastEvent is the chain's end inside tx: the last event's ID and hash
// (0 and ZeroHash for an empty log).
func lastEvent(q interface {
	QueryRow(string, ...any) *sql.Row
}) (int64, string, error) {
	var id int64
	var hash string
	err := q.QueryRow(`SELECT id, hash FROM events ORDER BY id DESC LIMIT 1`).Scan(&id, &hash)
	if err == sql.ErrNoRows {
		return 0, ZeroHash, nil
	}
	return id, hash, err
}

// Root is the custody log's end: the batch root, the hash of its last
// event, and how many events it holds.
type Root struct {
	Hash   string `json:"root"`
	Events int64  `json:"events"`
}

// Root returns the batch root. A journal an earlier build wrote, with no
// chained events, has none: Hash is "".
func (j *Journal) Root() (Root, error) {
	if j.legacy {
		return Root{}, nil
	}
	j.settle()
	id, hash, err := lastEvent(j.db)
	if err != nil {
		return Root{}, fmt.Errorf("journal: reading the batch root: %w", err)
	}
	return Root{Hash: hash, Events: id}, nil
}

// sealLegacy brings a journal an earlier build wrote (schema from) under
// the custody log, inside the migration's transaction: its events, as
// they are, are chained in order, then one journal_migrated event records
// every covered row as it stands. From there on the log covers the batch
// as any other; what happened before the migration is trusted as the
// journal held it.
func (j *Journal) sealLegacy(tx *sql.Tx, from int) error {
	rows, err := tx.Query(`SELECT id, at, kind, manifest, line, COALESCE(document_id,0), source_id, data FROM events ORDER BY id`)
	if err != nil {
		return err
	}
	var events []Event
	for rows.Next() {
		var e Event
		var at sql.NullInt64
		var data string
		if err := rows.Scan(&e.ID, &at, &e.Kind, &e.Manifest, &e.Line, &e.DocID, &e.SourceID, &data); err != nil {
			rows.Close()
			return err
		}
		e.At, e.Data = time.UnixMilli(at.Int64), json.RawMessage(data)
		events = append(events, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	prev := ZeroHash
	for i, e := range events {
		// Renumbered from 1 without gaps, as the chain numbers events.
		e.ID = int64(i + 1)
		prev = EventHash(prev, e)
		if _, err := tx.Exec(`UPDATE events SET id=?, hash=? WHERE id=?`, e.ID, prev, events[i].ID); err != nil {
			return fmt.Errorf("chaining event %d: %w", events[i].ID, err)
		}
	}
	var touched []touch
	for i := range custodyTables {
		tb := &custodyTables[i]
		err := readRows(tx, tb, "", nil, false, func(row map[string]any) error {
			key := make([]any, len(tb.key))
			for k, c := range tb.key {
				key[k] = row[c]
			}
			touched = append(touched, touch{tb.name, key})
			return nil
		})
		if err != nil {
			return err
		}
	}
	data, _ := json.Marshal(map[string]int{"from_schema": from})
	return j.appendEvent(tx, Event{Kind: EventJournalMigrated, Data: data}, touched...)
}
