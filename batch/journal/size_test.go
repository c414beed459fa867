package journal

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestArtifactSizeInCustody: the size of an artifact as written is
// recorded with it (Finish, Transcribe), under the custody log: the
// superseded artifact's size is in the transcription's event, and a size
// changed behind the log is a problem naming it, on either backend.
func TestArtifactSizeInCustody(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		d := admit(t, j, 2, "R-1", "aaa")
		l, err := j.Claim(d.DocID, "o", policy)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(l, Result{State: outcome.Review, Reason: outcome.LowConfidence, Artifact: "artifacts/R-1_a1.json", ArtifactSHA256: "s1", ArtifactSize: 1234}); err != nil {
			t.Fatal(err)
		}
		if doc, _, err := j.DocumentBySource("R-1"); err != nil || doc.ArtifactSize != 1234 {
			t.Fatalf("after Finish: artifact size %d, %v; want 1234", doc.ArtifactSize, err)
		}
		err = j.Transcribe("R-1", Transcription{User: "u", Host: "h", Artifact: "artifacts/R-1_a1.json", ArtifactSHA256: "s1",
			NewArtifact: "artifacts/R-1_a1_t1.json", NewArtifactSHA256: "s2", NewArtifactSize: 300})
		if err != nil {
			t.Fatal(err)
		}
		if doc, _, err := j.DocumentBySource("R-1"); err != nil || doc.ArtifactSize != 300 {
			t.Fatalf("after Transcribe: artifact size %d, %v; want 300", doc.ArtifactSize, err)
		}
		kept, err := j.EventArtifacts()
		if err != nil || len(kept) != 1 || kept[0].Artifact != "artifacts/R-1_a1.json" || kept[0].Size != 1234 {
			t.Errorf("EventArtifacts = %+v, %v; want the superseded artifact with its 1234 bytes", kept, err)
		}
		if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
			t.Fatalf("CheckChain = %+v, %v", c, err)
		}
		if _, err := j.db.Exec(`UPDATE documents SET artifact_size=? WHERE source_id=?`, 99999, "R-1"); err != nil {
			t.Fatal(err)
		}
		c, err := j.CheckChain()
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Detail, "artifact_size is 99999, the log says 300") {
			t.Errorf("problems %+v, want one: R-1's artifact_size", c.Problems)
		}
	})
}

// TestMigrateFrom5And6: a journal of schema 5, whose custody log records
// no artifact sizes, or of schema 6, which has no index of rows by
// document, reads as it is (a version 5's sizes 0, its log sound), and
// Open migrates it to the current schema, index and all, its log still
// sound and new artifacts' sizes recorded, on either backend.
func TestMigrateFrom5And6(t *testing.T) {
	for _, version := range []int{5, 6} {
		t.Run(fmt.Sprint("from ", version), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, be backend) { testMigrateFrom(t, be, version) })
		})
	}
}

func testMigrateFrom(t *testing.T, be backend, version int) {
	loc := be.location(t)
	j, err := Open(loc)
	if err != nil {
		t.Fatal(err)
	}
	finish := func(j *Journal, line int, id string, size int64) {
		t.Helper()
		d := admit(t, j, line, id, "sha-"+id)
		l, err := j.Claim(d.DocID, "o", policy)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(l, Result{State: outcome.Done, Artifact: "artifacts/" + id + "_a1.json", ArtifactSHA256: "s-" + id, ArtifactSize: size}); err != nil {
			t.Fatal(err)
		}
	}
	finish(j, 2, "R-1", 1234)
	toVersion(t, j, version)
	if indexed(t, j) {
		t.Fatalf("a version %d journal has the index of rows by document", version)
	}
	j.Close()

	r, err := OpenReadOnly(loc)
	if err != nil {
		t.Fatalf("OpenReadOnly(version %d) = %v", version, err)
	}
	want := int64(1234)
	if version < 6 {
		want = 0
	}
	if d, _, err := r.DocumentBySource("R-1"); err != nil || d.ArtifactSize != want || d.ArtifactSHA256 != "s-R-1" {
		t.Errorf("a version %d document: %+v, %v; want size %d", version, d, err, want)
	}
	if c, err := r.CheckChain(); err != nil || len(c.Problems) != 0 {
		t.Errorf("CheckChain of version %d = %+v, %v", version, c, err)
	}
	r.Close()

	if j, err = Open(loc); err != nil {
		t.Fatalf("Open(version %d) = %v", version, err)
	}
	defer j.Close()
	if v, _ := j.Meta("schema_version"); v != fmt.Sprint(schemaVersion) {
		t.Errorf("schema_version after Open = %q, want %d", v, schemaVersion)
	}
	if !indexed(t, j) {
		t.Errorf("no index of rows by document after migrating from %d", version)
	}
	finish(j, 3, "R-2", 777)
	if d, _, err := j.DocumentBySource("R-2"); err != nil || d.ArtifactSize != 777 {
		t.Errorf("a document read after the migration: size %d, %v; want 777", d.ArtifactSize, err)
	}
	if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
		t.Errorf("CheckChain after migrating from %d = %+v, %v", version, c, err)
	}
}

// indexed reports whether j's rows have their index by document.
func indexed(t *testing.T, j *Journal) bool {
	t.Helper()
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name='rows_document'`
	if j.pg {
		q = `SELECT COUNT(*) FROM pg_indexes WHERE schemaname=current_schema() AND indexname='rows_document'`
	}
	var n int
	if err := j.db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// toVersion takes j back to schema version (5 or 6) as that build left
// it: no index of rows by document, and before 6 no artifact_size column
// and a custody log that never recorded one; each event's hash chained
// again.
func toVersion(t *testing.T, j *Journal, version int) {
	t.Helper()
	var events []Event
	if err := j.Events(func(e Event) error { events = append(events, e); return nil }); err != nil {
		t.Fatal(err)
	}
	err := j.tx(func(tx *sql.Tx) error {
		prev := ZeroHash
		for _, e := range events {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(e.Data, &obj); err != nil {
				return err
			}
			var recs []custodyRecord
			if err := json.Unmarshal(obj["custody"], &recs); err == nil {
				for i, r := range recs {
					var row map[string]json.RawMessage
					if json.Unmarshal(r.Row, &row) != nil || row == nil {
						continue
					}
					if version < 6 {
						delete(row, "artifact_size")
					}
					if r.Table == "meta" && string(row["key"]) == `"schema_version"` {
						row["value"], _ = json.Marshal(fmt.Sprint(version))
					}
					recs[i].Row, _ = json.Marshal(row)
				}
				obj["custody"], _ = json.Marshal(recs)
			}
			e.Data, _ = json.Marshal(obj)
			prev = EventHash(prev, e)
			if _, err := tx.Exec(`UPDATE events SET data=?, hash=? WHERE id=?`, string(e.Data), prev, e.ID); err != nil {
				return err
			}
		}
		back := []string{`DROP INDEX rows_document`, `UPDATE meta SET value='` + fmt.Sprint(version) + `' WHERE key='schema_version'`}
		if version < 6 {
			back = append(back, `ALTER TABLE documents DROP COLUMN artifact_size`)
		}
		for _, s := range back {
			if _, err := tx.Exec(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
