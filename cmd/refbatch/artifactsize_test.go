package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/batchtest/finished"
)

// TestArtifactSizeRecorded: the journal records each artifact's size on
// disk, and every reader refuses a file of another size in its place
// before it reads a byte, naming the file and both sizes: a 10 GB sparse
// file (verify, show, export and the desk each answer within 2 s), a
// file 40 MiB longer (within the bound of a one-page document's pages,
// which was all that was checked, so it was read and hashed), and one a
// byte shorter (artifact_undersized, where it was hashed and found
// altered).
func TestArtifactSizeRecorded(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	src := filepath.Join(base, "out")
	finishedBatch(t, base, src, []finished.Row{finished.Good("R-1", "P-000101", "2024-01-02"), finished.Good("R-2", "P-000102", "2024-01-02")})
	fi, err := os.Stat(artifactOf(t, src, "R-1"))
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	for _, tc := range []struct {
		name, kind string
		to         int64
		says       string
	}{
		{"10 GB sparse file", "artifact_oversized", 10 << 30, fmt.Sprintf("10737418240 bytes, more than the %d the journal recorded", size)},
		{"40 MiB longer", "artifact_oversized", size + 40<<20, fmt.Sprintf("%d bytes, more than the %d the journal recorded", size+40<<20, size)},
		{"a byte shorter", "artifact_undersized", size - 1, fmt.Sprintf("%d bytes, fewer than the %d the journal recorded", size-1, size)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			copyOut(t, src, out)
			art := artifactOf(t, out, "R-1")
			if err := os.Truncate(art, tc.to); err != nil {
				t.Fatal(err)
			}
			limit := answerLimit(t, src)
			timed := func(args ...string) result {
				r := refbatch(t, nil, args...)
				if r.elapsed > limit {
					t.Errorf("%s took %v, want under %v", args[0], r.elapsed, limit)
				}
				t.Logf("%s: %v", args[0], r.elapsed)
				return r
			}
			r := timed("verify", "--out", out)
			if r.code != exitFailure || !strings.Contains(r.stdout, tc.kind+" ") || !strings.Contains(r.stdout, art) || !strings.Contains(r.stdout, tc.says) {
				t.Errorf("verify: exit %d, want 1 with %s naming %s and %q\n%s%s", r.code, tc.kind, art, tc.says, r.stdout, r.stderr)
			}
			r = timed("show", "--out", out, "R-1")
			if r.code != exitFailure || r.stdout != "" || !strings.Contains(r.stderr, art) || !strings.Contains(r.stderr, fmt.Sprintf("%d bytes, not the %d recorded", tc.to, size)) {
				t.Errorf("show: exit %d, want 1 naming %s and both sizes, and no text\n%s%s", r.code, art, r.stdout, r.stderr)
			}
			r = timed("export", "--out", out, "--to", filepath.Join(dir, "exp"), "--format", "txt")
			if r.code != exitFailure || !strings.Contains(r.stdout+r.stderr, tc.kind) || !strings.Contains(r.stdout+r.stderr, tc.says) {
				t.Errorf("export: exit %d, want 1 with %s and %q\n%s%s", r.code, tc.kind, tc.says, r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "exp", "R-2.txt")); err != nil {
				t.Errorf("export did not export the other document: %v", err)
			}
			d := startDesk(t, out)
			c, _ := d.open(t, d.Code)
			start := time.Now()
			code, body := deskGet(t, c, d, "/api/doc?id=R-1")
			var m struct {
				ArtifactError string `json:"artifact_error"`
			}
			json.Unmarshal([]byte(body), &m)
			if took := time.Since(start); took > 2*time.Second || code != http.StatusOK || !strings.Contains(m.ArtifactError, fmt.Sprintf("%d bytes, not the %d recorded", tc.to, size)) {
				t.Errorf("desk /api/doc: %d after %v, artifact_error %q; want 200 within 2 s naming both sizes", code, took, m.ArtifactError)
			}
		})
	}
}

// TestArtifactSizeOldJournal: a journal written before artifact sizes
// were recorded (schema 5, its custody log without them) still verifies,
// and says that its artifacts were bounded by their pages; a file in an
// artifact's place larger than its pages can hold is still refused
// unread; and a run of this build migrates it, still verified.
func TestArtifactSizeOldJournal(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	out := filepath.Join(base, "out")
	manifest, _ := finishedBatch(t, base, out, []finished.Row{finished.Good("R-1", "P-000101", "2024-01-02"), finished.Good("R-2", "P-000102", "2024-01-02")})
	toSchema5(t, out)
	r := refbatch(t, nil, "verify", "--out", out)
	if r.code != 0 || !strings.Contains(r.stdout, "verified, no findings") || !strings.Contains(r.stdout, "note: 2 artifacts have no size in the journal") {
		t.Fatalf("verify of a schema 5 journal: exit %d, want 0 with the note on sizes\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := refbatch(t, nil, "show", "--out", out, "R-1"); r.code != 0 || !strings.Contains(r.stdout, "P-000101") {
		t.Errorf("show on a schema 5 journal: exit %d\n%s", r.code, r.stderr)
	}
	sparse := filepath.Join(base, "sparse")
	copyOut(t, out, sparse)
	if err := os.Truncate(artifactOf(t, sparse, "R-1"), 10<<30); err != nil {
		t.Fatal(err)
	}
	limit := answerLimit(t, out)
	r = refbatch(t, nil, "verify", "--out", sparse)
	if r.code != exitFailure || !strings.Contains(r.stdout, "artifact_oversized") || !strings.Contains(r.stdout, "its document's pages can hold (the journal recorded no size for it)") || r.elapsed > limit {
		t.Errorf("verify of a sparse artifact on a schema 5 journal: exit %d after %v, want 1 with artifact_oversized by its pages\n%s%s", r.code, r.elapsed, r.stdout, r.stderr)
	}
	// A run of this build migrates it: its custody log still holds.
	if r := refbatch(t, nil, append([]string{"run", "--plaintext", "--quiet", "--out", out}, append(fastFlags, manifest)...)...); r.code != 0 {
		t.Fatalf("run on a schema 5 journal: exit %d\n%s", r.code, lastLines(r.stderr, 10))
	}
	if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 || !strings.Contains(r.stdout, "verified, no findings") {
		t.Errorf("verify after a run migrated the journal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// toSchema5 turns the journal of out into one a build before artifact
// sizes wrote: no artifact_size column, schema version 5, and a custody
// log whose events record no artifact_size and schema 5, each hash
// recomputed as the custody topic describes.
func toSchema5(t *testing.T, out string) {
	t.Helper()
	db := openDB(t, out)
	type record struct {
		Table string          `json:"table"`
		Key   json.RawMessage `json:"key"`
		Row   json.RawMessage `json:"row"`
	}
	rows, err := db.Query(`SELECT id, at, kind, manifest, line, COALESCE(document_id, 0), source_id, data FROM events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	type event struct {
		id, at, line, doc      int64
		kind, manifest, source string
		data                   string
	}
	var events []event
	for rows.Next() {
		var e event
		if err := rows.Scan(&e.id, &e.at, &e.kind, &e.manifest, &e.line, &e.doc, &e.source, &e.data); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	rows.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	prev := strings.Repeat("0", 64)
	for _, e := range events {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(e.data), &obj); err != nil {
			t.Fatal(err)
		}
		if c, ok := obj["custody"]; ok {
			var recs []record
			if err := json.Unmarshal(c, &recs); err != nil {
				t.Fatal(err)
			}
			for i, r := range recs {
				var row map[string]json.RawMessage
				if json.Unmarshal(r.Row, &row) == nil && row != nil {
					delete(row, "artifact_size")
					if r.Table == "meta" && string(row["key"]) == `"schema_version"` {
						row["value"] = json.RawMessage(`"5"`)
					}
					recs[i].Row, _ = json.Marshal(row)
				}
			}
			obj["custody"], _ = json.Marshal(recs)
		}
		delete(obj, "artifact_size")
		delete(obj, "new_artifact_size")
		data, _ := json.Marshal(obj)
		prev = chainHash(prev, fmt.Sprint(e.id), fmt.Sprint(e.at), e.kind, e.manifest, fmt.Sprint(e.line), fmt.Sprint(e.doc), e.source, string(data))
		if _, err := tx.Exec(`UPDATE events SET data=?, hash=? WHERE id=?`, string(data), prev, e.id); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{`ALTER TABLE documents DROP COLUMN artifact_size`, `UPDATE meta SET value='5' WHERE key='schema_version'`} {
		if _, err := tx.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	checkpoint(t, db)
	db.Close()
}

// checkpoint folds the journal's write-ahead log into its file, as a
// clean close leaves it.
func checkpoint(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
}
