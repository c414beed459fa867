package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal/journaltest"
)

// TestPendingEvents: on PostgreSQL an event committed and not yet chained
// (its process stopped before its seal: here the seal gives up waiting
// for a custody lock another holds) is checked by CheckChain after the
// chain, an edit of it or of the rows it records is found as any other,
// and the next seal, another handle's, chains it in its order, before
// the events queued after it.
func TestPendingEvents(t *testing.T) {
	url := postgresSchema(t)
	setup, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	admit(t, setup, 2, "R-1", "aa")
	root, err := setup.Root()
	if err != nil {
		t.Fatal(err)
	}
	release := holdCustodyLock(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	stopped, err := Open(url, WithInterrupt(ctx))
	if err != nil {
		t.Fatal(err)
	}
	admit(t, stopped, 3, "R-2", "bb")
	cancel()        // its seal, waiting for the lock, gives up
	stopped.Close() // once it has: the event stays pending

	check := func(pending int64, problem string) {
		t.Helper()
		c, err := setup.CheckChain()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range c.Problems {
			got = append(got, p.Subject+": "+p.Detail)
		}
		found := problem == "" && len(got) == 0
		for _, g := range got {
			found = found || problem != "" && strings.Contains(g, problem)
		}
		if !found || c.Pending != pending {
			t.Fatalf("CheckChain: %d pending, problems %q; want %d pending and %q", c.Pending, got, pending, problem)
		}
	}
	check(1, "")
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// The pending event says another hash than the row has.
	exec(`UPDATE pending SET data = replace(data, '"bb"', '"cc"')`)
	check(1, "document R-2")
	exec(`UPDATE pending SET data = replace(data, '"cc"', '"bb"')`)
	check(1, "")
	// The row edited behind the pending event.
	exec(`UPDATE documents SET sha256='cc' WHERE source_id='R-2'`)
	check(1, "sha256 is \"cc\", the log says \"bb\"")
	exec(`UPDATE documents SET sha256='bb' WHERE source_id='R-2'`)

	release()
	admit(t, setup, 4, "R-3", "dd")
	check(0, "")
	var sources []string
	err = setup.Events(func(e Event) error {
		if e.ID > root.Events {
			sources = append(sources, e.SourceID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sources, " ") != "R-2 R-3" {
		t.Errorf("the events after the first are of %q, want R-2's then R-3's", sources)
	}
	// Nothing waits for the lock any more: a seal of nothing is quick.
	start := time.Now()
	if err := setup.seal(nil); err != nil || time.Since(start) > 10*time.Second {
		t.Errorf("seal with nothing pending: %v after %s", err, time.Since(start))
	}
}

// BenchmarkSeal is one hold of the custody lock chaining a batch of
// pending events (a one-page document's admission event, as
// BenchmarkWorkers queues them): it reports the hold as the client sees
// it (ms/hold: the seal's statement and its commit, the lock free) and
// as the database ran it (ran_ms, the commit and its sync left out), and
// their share per event, for batches of 1 to 1,000. It runs on
// PostgreSQL only (REFBATCH_TEST_POSTGRES; make bench-journal's cluster).
func BenchmarkSeal(b *testing.B) {
	for _, batch := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			j, err := Open(journaltest.Postgres(b))
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			line := 2
			var held, ran time.Duration
			for b.Loop() {
				b.StopTimer()
				err := j.within(func() (*sql.Tx, error) { return j.db.Begin() }, func(tx *sql.Tx) error {
					for range batch {
						a := benchAdmission(line)
						line++
						e := Event{Kind: EventRowAdmitted, Manifest: a.Manifest, Line: a.Line, SourceID: a.SourceID,
							At: time.UnixMilli(ms(j.now())), Data: json.RawMessage(`{"custody":[]}`)}
						if _, err := queueEvent(tx, e, sql.NullInt64{}); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				r, err := callSeal(b.Context(), j.db, nil)
				held += time.Since(start) - r.waited
				ran += r.ranFor
				if err != nil || r.sealed != int64(batch) {
					b.Fatalf("seal: %+v, %v; want %d events chained", r, err, batch)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(held)/n/float64(time.Millisecond), "ms/hold")
			b.ReportMetric(float64(ran)/n/float64(time.Millisecond), "ran_ms")
			b.ReportMetric(float64(held)/n/float64(batch)/float64(time.Microsecond), "us/event")
		})
	}
}
