package journal

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// script writes one small batch through every kind of write the custody
// log records, at a clock that moves one second per call.
func script(t *testing.T, j *Journal) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(j.SetMeta("batch_id", "b-1"))
	_, err := j.PinRecipients([]string{"age1x"}, nil)
	must(err)
	run, err := j.StartRun("o", `{"dpi":300}`, `{}`)
	must(err)
	must(j.SetRunVersions(run, `{"tesseract":"5"}`))
	done := admit(t, j, 2, "R-1", "aaa")
	admit(t, j, 3, "R-1", "aaa") // a duplicate
	admit(t, j, 4, "R-1", "bbb") // a conflict
	failing := admit(t, j, 5, "R-2", "ccc")
	must(j.Reject("m.csv", 6, "R-3", "", outcome.Reason("missing_file"), "key-6"))
	l, err := j.Claim(done.DocID, "o", policy)
	must(err)
	must(j.PageDone(l, PageMetric{Page: 1, DPI: 300, Render: time.Millisecond, OCR: 2 * time.Millisecond, Words: 3, MeanConfidence: 91.25}, time.Minute))
	must(j.Finish(l, Result{State: outcome.Review, Reason: outcome.LowConfidence, MeanConfidence: 61.5, Band: outcome.BandLow,
		Artifact: "artifacts/R-1_a1.json", ArtifactSHA256: "s1", ContentSHA256: "c1"}))
	// A note of more bytes than runes: the hash counts bytes, on
	// PostgreSQL in the database (insertEventHashed).
	_, err = j.Decide("R-1", Decision{Action: Retry, User: "u", Host: "h", Note: "again, zoë ✓"}, `{"dpi":400}`)
	must(err)
	l, err = j.Claim(failing.DocID, "o", policy)
	must(err)
	_, err = j.Fail(l, outcome.Cause("crash"), j.now(), policy)
	must(err)
	fields, err := j.Digest(RowFields{Path: "a.pdf", SHA256: "aaa", ParticipantID: "P-1", ReferralDate: "2024-01-02"})
	must(err)
	must(j.Requeue("m.csv", 5, fields, []string{FieldPath}))
	must(j.EndRun(run, "ok", 1.5, 10))
}

// TestCustodyLogOnBothBackends: the same writes give the same custody log
// on SQLite and on PostgreSQL, event for event and byte for byte but for
// what is random (trace IDs, the digests' salt, the digests), and
// CheckChain finds both sound.
func TestCustodyLogOnBothBackends(t *testing.T) {
	random := regexp.MustCompile(`"(trace_id|value|fields)":"(?:[^"\\]|\\.)*"`)
	logs := map[string][]string{}
	eachBackend(t, func(t *testing.T, be backend) {
		at := time.UnixMilli(1_700_000_000_000)
		j := be.open(t, WithClock(func() time.Time { at = at.Add(time.Second); return at }))
		script(t, j)
		c, err := j.CheckChain()
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Problems) > 0 || c.Root.Events < 15 || len(c.Root.Hash) != 64 {
			t.Fatalf("CheckChain: root %+v, problems %+v", c.Root, c.Problems)
		}
		if root, err := j.Root(); err != nil || root != c.Root {
			t.Errorf("Root() = %+v, %v; CheckChain's root %+v", root, err, c.Root)
		}
		var events []string
		j.Events(func(e Event) error {
			events = append(events, e.At.UTC().Format(time.RFC3339)+" "+string(e.Kind)+" "+random.ReplaceAllString(string(e.Data), `"$1":"*"`))
			return nil
		})
		logs[be.name] = events
	})
	if t.Failed() {
		return
	}
	if len(logs) < 2 {
		t.Skipf("only %d backend ran (%s unset?): the custody logs of SQLite and PostgreSQL were not compared", len(logs), PostgresEnv)
	}
	if a, b := strings.Join(logs["sqlite"], "\n"), strings.Join(logs["postgres"], "\n"); a != b {
		t.Errorf("the custody logs differ:\nsqlite:\n%s\npostgres:\n%s", a, b)
	}
}

// TestCheckChainFindsEdits: a row changed behind the log, on either
// backend, is a problem naming it.
func TestCheckChainFindsEdits(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		script(t, j)
		if _, err := j.db.Exec(`UPDATE documents SET state=? WHERE source_id=?`, outcome.Done, "R-2"); err != nil {
			t.Fatal(err)
		}
		c, err := j.CheckChain()
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Detail, `state is "done", the log says "queued"`) {
			t.Errorf("problems %+v, want one: R-2's state", c.Problems)
		}
	})
}

// TestEventSubject: a problem names its event by number and kind, and by
// the document and manifest line it is about when it has them.
func TestEventSubject(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    Event
		want string
	}{
		{Event{ID: 7, Kind: EventRowChanged, SourceID: "R-1", DocID: 3, Line: 4}, "event 7 (row_changed, document R-1, manifest line 4)"},
		{Event{ID: 7, Kind: EventRowChanged, DocID: 3}, "event 7 (row_changed, document id 3)"},
		{Event{ID: 7, Kind: EventRowChanged, Line: 4}, "event 7 (row_changed, manifest line 4)"},
		{Event{ID: 7, Kind: EventRowChanged}, "event 7 (row_changed)"},
	} {
		if got := tc.e.subject(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
