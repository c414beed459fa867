package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// independentRoot recomputes a journal's batch root from the custody topic's
// description of the custody log alone, without refbatch's code: each
// event's hash is the SHA-256 of the netstrings of "refbatch-event-1",
// the previous hash (64 zeros first), id, at, kind, manifest, line,
// document_id (0 for none), source_id and data. It also checks each
// stored hash on the way.
func independentRoot(t *testing.T, db *sql.DB) (string, int64) {
	t.Helper()
	rows, err := db.Query(`SELECT id, at, kind, manifest, line, COALESCE(document_id, 0), source_id, data, hash FROM events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	prev, n := strings.Repeat("0", 64), int64(0)
	for rows.Next() {
		var id, at, line, doc int64
		var kind, manifest, source, data, stored string
		if err := rows.Scan(&id, &at, &kind, &manifest, &line, &doc, &source, &data, &stored); err != nil {
			t.Fatal(err)
		}
		prev, n = chainHash(prev, fmt.Sprint(id), fmt.Sprint(at), kind, manifest, fmt.Sprint(line), fmt.Sprint(doc), source, data), id
		if prev != stored {
			t.Fatalf("event %d: recomputed %s, stored %s", id, prev, stored)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return prev, n
}

// chainHash is an event's hash as the custody topic describes it: the SHA-256 of
// the netstrings of "refbatch-event-1", prev and the event's fields.
func chainHash(prev string, fields ...string) string {
	var pre strings.Builder
	for _, f := range append([]string{"refbatch-event-1", prev}, fields...) {
		fmt.Fprintf(&pre, "%d:%s,", len(f), f)
	}
	sum := sha256.Sum256([]byte(pre.String()))
	return hex.EncodeToString(sum[:])
}

func openDB(t *testing.T, out string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestCustodyRoot: the batch root run prints is the one the journal's
// events recompute to, independently of refbatch's code; a root pinned
// after the first run still verifies after a later run added work, and
// so does the root log; every rewrite of the journal's history, or of a
// table behind it, is a journal_rewritten finding naming the row.
func TestCustodyRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, rootLog := filepath.Join(dir, "out"), filepath.Join(dir, "roots.jsonl")
	// Tiny referrals read with tinyFlags: the custody log is the point,
	// not the text.
	var rows [][4]string
	for i := range 6 {
		rows = append(rows, tinyRow(t, dir, fmt.Sprintf("C-%d", i), 760+i))
	}
	manifest := writeRows(t, dir, rows[:3])
	run := func() string {
		t.Helper()
		r := refbatch(t, nil, runArgs(out, "--root", dir, "--root-log", rootLog, manifest)...)
		if r.code != 0 && r.code != exitNeedsPerson {
			t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
		}
		rep := readReport(t, out)
		if rep.Custody == nil || !strings.Contains(r.stdout, "batch root "+rep.Custody.Root) {
			t.Fatalf("run printed no batch root, or not the report's:\n%s", r.stdout)
		}
		got, n := independentRoot(t, openDB(t, out))
		if got != rep.Custody.Root || n != rep.Custody.Events {
			t.Fatalf("independent root %s after %d events, report %+v", got, n, rep.Custody)
		}
		return got
	}
	pinned := run()
	writeRows(t, dir, rows) // three more rows: the batch goes on
	root := run()
	if root == pinned {
		t.Fatal("the second run added no event")
	}
	for _, args := range [][]string{{"--root", pinned}, {"--root", root}, {"--root-log", rootLog}} {
		v := refbatch(t, nil, append([]string{"verify", "--out", out}, args...)...)
		if v.code != 0 || !strings.Contains(v.stdout, "verified, no findings") {
			t.Fatalf("verify %v: exit %d\n%s%s", args, v.code, v.stdout, v.stderr)
		}
	}

	var doc, artifact string
	if err := openDB(t, out).QueryRow(`SELECT source_id, artifact FROM documents WHERE artifact<>'' ORDER BY id LIMIT 1`).Scan(&doc, &artifact); err != nil {
		t.Fatal(err)
	}
	tampers := []struct {
		name  string
		sql   []string
		files func(t *testing.T, out string)
		names string // what the finding must name
	}{
		{name: "state changed", sql: []string{`UPDATE documents SET state='review', reason='low_confidence' WHERE source_id='` + doc + `'`}, names: "document " + doc},
		{name: "row deleted", sql: []string{`DELETE FROM rows WHERE line=3`}, names: "manifest line 3"},
		{name: "row inserted", sql: []string{`INSERT INTO rows(manifest, line, source_id, kind, reason, sha256, recorded_at)
			SELECT manifest, 99, 'R-9999', 'rejected', 'not_pdf', '', recorded_at FROM rows LIMIT 1`}, names: "manifest line 99"},
		{name: "artifact and its hash changed", files: func(t *testing.T, out string) {
			forged := []byte(`{"pages":[]}`)
			if err := os.WriteFile(filepath.Join(out, artifact), forged, 0o600); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(forged)
			if _, err := openDB(t, out).Exec(`UPDATE documents SET artifact_sha256=? WHERE source_id=?`, hex.EncodeToString(sum[:]), doc); err != nil {
				t.Fatal(err)
			}
		}, names: "document " + doc},
		{name: "event reordered", sql: []string{
			`UPDATE events SET id=-5 WHERE id=5`, `UPDATE events SET id=5 WHERE id=6`, `UPDATE events SET id=6 WHERE id=-5`}, names: "event 5"},
		{name: "settings changed", sql: []string{`UPDATE runs SET settings=json_set(settings, '$.dpi', 600) WHERE id=1`}, names: "run 1"},
		{name: "event deleted", sql: []string{`DELETE FROM events WHERE id=7`}, names: "events 7 to 7 are missing"},
		{name: "decision forged", files: func(t *testing.T, out string) {
			forgeDecision(t, openDB(t, out), doc)
		}, names: "the pinned root " + root + " is not in the custody log"},
	}
	for _, tc := range tampers {
		t.Run(tc.name, func(t *testing.T) {
			cp := filepath.Join(t.TempDir(), "out")
			copyDir(t, out, cp)
			for _, q := range tc.sql {
				if _, err := openDB(t, cp).Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if tc.files != nil {
				tc.files(t, cp)
			}
			v := refbatch(t, nil, "verify", "--out", cp, "--root", root)
			if v.code != exitFailure || !strings.Contains(v.stdout, "journal_rewritten") || !strings.Contains(v.stdout, tc.names) {
				t.Fatalf("verify: exit %d, want 1 and journal_rewritten naming %q:\n%s%s", v.code, tc.names, v.stdout, v.stderr)
			}
		})
	}
}

// forgeDecision rewrites history as a forger who read the custody topic would:
// a person's acceptance of doc inserted before the last event, the
// document's state set to match, and every hash from there recomputed, so
// that the chain and the tables agree again.
func forgeDecision(t *testing.T, db *sql.DB, doc string) {
	t.Helper()
	var last int64
	if err := db.QueryRow(`SELECT MAX(id) FROM events`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	var docRow string
	var docID int64
	err := db.QueryRow(`SELECT id, json_object('id', id, 'source_id', source_id) FROM documents WHERE source_id=?`, doc).Scan(&docID, &docRow)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE events SET id=id+1000000 WHERE id>=` + fmt.Sprint(last),
		`UPDATE events SET id=id-1000000+1 WHERE id>=1000000`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := json.Marshal(map[string]any{"action": "accept", "user": "forger"})
	if _, err := db.Exec(`INSERT INTO events(id, at, kind, manifest, line, document_id, source_id, data, hash) VALUES(?, 0, 'decision', '', 0, ?, ?, ?, '')`,
		last, docID, doc, string(data)); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT id, at, kind, manifest, line, COALESCE(document_id, 0), source_id, data FROM events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		id  int64
		pre []string
	}
	var evs []ev
	for rows.Next() {
		var id, at, line, d int64
		var kind, manifest, source, data string
		if err := rows.Scan(&id, &at, &kind, &manifest, &line, &d, &source, &data); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev{id: id, pre: []string{fmt.Sprint(id), fmt.Sprint(at), kind, manifest, fmt.Sprint(line), fmt.Sprint(d), source, data}})
	}
	rows.Close()
	prev := strings.Repeat("0", 64)
	for _, e := range evs {
		prev = chainHash(prev, e.pre...)
		if _, err := db.Exec(`UPDATE events SET hash=? WHERE id=?`, prev, e.id); err != nil {
			t.Fatal(err)
		}
	}
}
