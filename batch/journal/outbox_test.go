package journal

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// finishDoc claims and finishes the document of a row with r.
func finishDoc(t *testing.T, j *Journal, st RowStatus, r Result) {
	t.Helper()
	l, err := j.Claim(st.DocID, NewOwner(), policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(l, r); err != nil {
		t.Fatal(err)
	}
}

// outboxNotices reads every body of the outbox, oldest first.
func outboxNotices(t *testing.T, j *Journal) []Notice {
	t.Helper()
	events, err := j.Pending("nobody-yet")
	if err != nil {
		t.Fatal(err)
	}
	var out []Notice
	for _, e := range events {
		var n Notice
		if err := json.Unmarshal(e.Body, &n); err != nil {
			t.Fatal(err)
		}
		if n.ID != e.ID || n.Type != e.Type {
			t.Errorf("body %s under id %s type %s", e.Body, e.ID, e.Type)
		}
		out = append(out, n)
	}
	return out
}

// TestRunEndNotices: EndRun writes batch_finished and rows_need_person, or
// batch_interrupted, with the counts and the batch root after the run's
// end, and the custody log still checks: the outbox is not custody.
func TestRunEndNotices(t *testing.T) { eachBackend(t, testRunEndNotices) }

func testRunEndNotices(t *testing.T, be backend) {
	j := be.open(t)
	finishDoc(t, j, admit(t, j, 2, "R-1", "aa"), Result{State: outcome.Done, Band: outcome.BandHigh, Artifact: "a", ArtifactSHA256: "h"})
	finishDoc(t, j, admit(t, j, 3, "R-2", "bb"), Result{State: outcome.Review, Reason: outcome.LowConfidence, Band: outcome.BandLow, Artifact: "b", ArtifactSHA256: "h"})
	if err := j.Reject("m.csv", 4, "R-3", "", outcome.MissingFile, ""); err != nil {
		t.Fatal(err)
	}
	admit(t, j, 5, "R-1", "aa") // a duplicate

	run, err := j.StartRun(NewOwner(), "{}", "{}")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.EndRun(run, "complete", 1, 0, RunEnd{BatchID: "refbatch-x", Manifest: "m.csv", Finished: true}); err != nil {
		t.Fatal(err)
	}
	root, _ := j.Root()
	got := outboxNotices(t, j)
	if len(got) != 2 || got[0].Type != NoticeFinished || got[1].Type != NoticeNeedsPerson {
		t.Fatalf("outbox after a finished run = %+v", got)
	}
	var fin runCounts
	json.Unmarshal(got[0].Data, &fin)
	wantRows := map[outcome.State]int{outcome.Done: 1, outcome.Review: 1, outcome.Rejected: 1, outcome.Duplicate: 1}
	if fin.ExitCode != 4 || fin.Run != run || fin.Custody == nil || *fin.Custody != root || len(fin.Rows) != len(wantRows) ||
		fin.Reasons[outcome.LowConfidence] != 1 || fin.Reasons[outcome.MissingFile] != 1 {
		t.Errorf("batch_finished data = %s (root %+v)", got[0].Data, root)
	}
	for s, n := range wantRows {
		if fin.Rows[s] != n {
			t.Errorf("batch_finished rows[%s] = %d, want %d", s, fin.Rows[s], n)
		}
	}
	for _, n := range got {
		if n.Schema != NotifySchema || n.BatchID != "refbatch-x" || !strings.HasPrefix(n.ID, "evt-") || n.Time.IsZero() {
			t.Errorf("envelope %+v", n)
		}
		if bytes.Contains(n.Data, []byte("m.csv")) || bytes.Contains(n.Data, []byte(".pdf")) {
			t.Errorf("a path in %s", n.Data)
		}
	}

	run2, _ := j.StartRun(NewOwner(), "{}", "{}")
	if err := j.EndRun(run2, "batch incomplete: interrupted", 1, 0, RunEnd{BatchID: "refbatch-x", Manifest: "m.csv", Why: "interrupted", ExitCode: 3}); err != nil {
		t.Fatal(err)
	}
	got = outboxNotices(t, j)
	if len(got) != 3 || got[2].Type != NoticeInterrupted || !bytes.Contains(got[2].Data, []byte(`"why":"interrupted"`)) ||
		!bytes.Contains(got[2].Data, []byte(`"exit_code":3`)) {
		t.Errorf("after an interrupted run: %+v", got)
	}
	if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
		t.Errorf("CheckChain with an outbox = %+v, %v", c, err)
	}
}

// TestDeliveries: attempts are counted per event and target; a delivered
// event is no longer pending for its target, and still is for another.
func TestDeliveries(t *testing.T) { eachBackend(t, testDeliveries) }

func testDeliveries(t *testing.T, be backend) {
	j := be.open(t)
	if err := j.Notify(NoticeStalled, "b", map[string]int{"run": 1}); err != nil {
		t.Fatal(err)
	}
	p, _ := j.Pending("http://a#1")
	if len(p) != 1 || p[0].Attempts != 0 {
		t.Fatalf("pending = %+v", p)
	}
	id := p[0].ID
	for _, ok := range []bool{false, false, false, true} {
		errText := "HTTP 500"
		if ok {
			errText = ""
		}
		if err := j.RecordAttempt(id, "http://a#1", ok, errText); err != nil {
			t.Fatal(err)
		}
	}
	if p, _ := j.Pending("http://a#1"); len(p) != 0 {
		t.Errorf("delivered event still pending: %+v", p)
	}
	if p, _ := j.Pending("cmd#2"); len(p) != 1 || p[0].ID != id {
		t.Errorf("another target's pending = %+v", p)
	}
	ob, err := j.Outbox()
	if err != nil || len(ob) != 1 || len(ob[0].Deliveries) != 1 {
		t.Fatalf("Outbox = %+v, %v", ob, err)
	}
	if d := ob[0].Deliveries[0]; d.Attempts != 4 || d.Delivered.IsZero() || d.LastError != "" {
		t.Errorf("delivery = %+v", d)
	}
}

// TestSchemaVersion3: a journal of schema 3 reads, read-only and
// unchanged, with an empty outbox; Open migrates it to the current one.
func TestSchemaVersion3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	admit(t, j, 2, "R-1", "aa")
	toVersion3(t, j)
	if _, err := j.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	j.Close()
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	before, _ := os.ReadFile(path)

	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly(version 3) = %v", err)
	}
	if ob, err := r.Outbox(); err != nil || len(ob) != 0 {
		t.Errorf("Outbox of version 3 = %+v, %v", ob, err)
	}
	if c, err := r.CheckChain(); err != nil || c.Legacy || len(c.Problems) != 0 {
		t.Errorf("CheckChain of version 3 = %+v, %v", c, err)
	}
	r.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("OpenReadOnly changed a version 3 journal")
	}

	j, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	assertMigratedFrom3(t, j)
}

// toVersion3 takes j back to schema 3 as that build left it, its custody
// log saying so.
func toVersion3(t *testing.T, j *Journal) {
	t.Helper()
	err := j.tx(func(tx *sql.Tx) error {
		for _, s := range []string{`ALTER TABLE documents DROP COLUMN artifact_size`, `DROP TABLE admitters`, `ALTER TABLE runs DROP COLUMN heartbeat_at`,
			`DROP TABLE deliveries`, `DROP TABLE outbox`, `UPDATE meta SET value='3' WHERE key='schema_version'`} {
			if _, err := tx.Exec(s); err != nil {
				return err
			}
		}
		return j.appendEvent(tx, Event{Kind: EventMetaSet}, metaTouch("schema_version"))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMigrateFrom3: Open brings a schema 3 journal, SQLite or PostgreSQL,
// to the current schema, with its outbox and heartbeats, and the custody
// log records the change.
func TestMigrateFrom3(t *testing.T) { eachBackend(t, testMigrateFrom3) }

func testMigrateFrom3(t *testing.T, be backend) {
	loc := be.location(t)
	j, err := Open(loc)
	if err != nil {
		t.Fatal(err)
	}
	admit(t, j, 2, "R-1", "aa")
	toVersion3(t, j)
	j.Close()
	if j, err = Open(loc); err != nil {
		t.Fatalf("Open(version 3) = %v", err)
	}
	defer j.Close()
	assertMigratedFrom3(t, j)
}

// assertMigratedFrom3 checks a journal Open migrated from schema 3: it is
// at the current schema, its outbox takes events, its runs beat, and its
// custody log is whole.
func assertMigratedFrom3(t *testing.T, j *Journal) {
	t.Helper()
	if v, _ := j.Meta("schema_version"); v != fmt.Sprint(schemaVersion) {
		t.Errorf("schema_version after Open = %q, want %d", v, schemaVersion)
	}
	if id, err := j.StartRun(NewOwner(), "{}", "{}"); err != nil {
		t.Errorf("StartRun after migrating from 3: %v", err)
	} else if err := j.Beat(id); err != nil {
		t.Errorf("Beat after migrating from 3: %v", err)
	}
	if err := j.Notify(NoticeStalled, "b", struct{}{}); err != nil {
		t.Errorf("Notify after migrating from 3: %v", err)
	}
	if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
		t.Errorf("CheckChain after migrating from 3 = %+v, %v", c, err)
	}
}

// TestOutboxEntries: the outbox lists each event once, in order, with a
// delivery per target tried, the last error kept only until delivered.
func TestOutboxEntries(t *testing.T) { eachBackend(t, testOutboxEntries) }

func testOutboxEntries(t *testing.T, be backend) {
	j := be.open(t)
	for run := range 2 {
		if err := j.Notify(NoticeStalled, "b", map[string]int{"run": run}); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := j.Pending("http://a#1")
	if len(p) != 2 {
		t.Fatalf("pending = %d events", len(p))
	}
	for _, a := range []struct {
		target string
		ok     bool
		err    string
	}{{"http://a#1", false, "HTTP 500"}, {"http://a#1", true, ""}, {"cmd#2", false, "exit 3"}} {
		if err := j.RecordAttempt(p[0].ID, a.target, a.ok, a.err); err != nil {
			t.Fatal(err)
		}
	}
	ob, err := j.Outbox()
	if err != nil || len(ob) != 2 || ob[0].ID != p[0].ID || ob[1].ID != p[1].ID || len(ob[0].Deliveries) != 2 || len(ob[1].Deliveries) != 0 {
		t.Fatalf("Outbox = %+v, %v; want two events, the first tried by two targets", ob, err)
	}
	byTarget := map[string]Delivery{}
	for _, d := range ob[0].Deliveries {
		byTarget[d.Target] = d
	}
	if d := byTarget["http://a#1"]; d.Attempts != 2 || d.Delivered.IsZero() || d.LastError != "" {
		t.Errorf("the delivered target: %+v", d)
	}
	if d := byTarget["cmd#2"]; d.Attempts != 1 || !d.Delivered.IsZero() || d.LastError != "exit 3" {
		t.Errorf("the failing target: %+v", d)
	}
}

// TestRunEndNoticesPerManifest: a run over two manifests writes each
// one's batch_finished, in the order given.
func TestRunEndNoticesPerManifest(t *testing.T) {
	j := backends[0].open(t)
	admit(t, j, 2, "R-1", "aa")
	run, err := j.StartRun(NewOwner(), "{}", "{}")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.EndRun(run, "complete", 1, 0, RunEnd{BatchID: "refbatch-x", Manifest: "m.csv", Finished: true},
		RunEnd{BatchID: "refbatch-y", Manifest: "n.csv", Finished: true}); err != nil {
		t.Fatal(err)
	}
	var batches []string
	for _, n := range outboxNotices(t, j) {
		if n.Type == NoticeFinished {
			batches = append(batches, n.BatchID)
		}
	}
	if len(batches) != 2 || batches[0] != "refbatch-x" || batches[1] != "refbatch-y" {
		t.Errorf("batch_finished of %v, want refbatch-x then refbatch-y", batches)
	}
}
