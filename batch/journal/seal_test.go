package journal

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"
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
