package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/refbatch/refbatch/batch/journal/journaltest"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/report/outcome"
)

// joinOptions are a test Join's options on the batch of o.
func joinOptions(o Options, faults string) JoinOptions {
	return JoinOptions{Place: layout.Place{Out: o.Out, Journal: o.Journal}, Workers: 1, Worker: testWorker(faults), Admission: testAdmission}
}

// sampleManifest writes a manifest of n rows over tiny good
// documents, each under a source_id of its own.
func sampleManifest(t *testing.T, dir string, n int) string {
	t.Helper()
	good := tinySamples(t)
	var rows [][4]string
	for i := range n {
		g := good[i%len(good)]
		rows = append(rows, [4]string{fmt.Sprintf("J-%02d", i), g.path, g.participantID, g.date})
	}
	return writeManifest(t, dir, rows)
}

// doneOnce checks that every one of the n rows of the batch of o is done,
// each by exactly one attempt.
func doneOnce(t *testing.T, o Options, n int) {
	t.Helper()
	for i := range n {
		done := 0
		for _, a := range attemptsOf(t, o, fmt.Sprintf("J-%02d", i)) {
			if a.Outcome == "done" {
				done++
			}
		}
		if done != 1 {
			t.Errorf("J-%02d: %d attempts ended done, want 1", i, done)
		}
	}
}

func TestJoin(t *testing.T) { journaltest.Each(t, testJoin) }

func testJoin(t *testing.T, be journaltest.Backend) {
	t.Run("refuses a journal without a batch", func(t *testing.T) {
		o := onBackend(t, be, testOptions(t, "", t.TempDir(), ""))
		if _, err := Join(context.Background(), joinOptions(o, "")); !errors.Is(err, layout.ErrNoBatch) {
			t.Errorf("Join of no batch: %v, want ErrNoBatch", err)
		}
	})

	t.Run("finishes a batch whose run stopped, admitting its rows", func(t *testing.T) {
		dir := t.TempDir()
		const n = 6
		o := onBackend(t, be, testOptions(t, sampleManifest(t, dir, n), filepath.Join(dir, "out"), "slow2s=*"))
		o.Workers = 1
		ctx, cancel := context.WithCancel(context.Background())
		o.Progress = progressFunc(func(e Event) {
			if e.Kind == EventStarted {
				cancel()
			}
		})
		if _, err := Run(ctx, o); !errors.Is(err, layout.ErrIncomplete) {
			t.Fatalf("interrupted run: %v, want ErrIncomplete", err)
		}
		res, err := Join(context.Background(), joinOptions(o, ""))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete {
			t.Error("the join left the batch incomplete")
		}
		rows := reportRows(t, res.Report)
		if len(rows) != n {
			t.Errorf("the join's report has %d rows, want %d", len(rows), n)
		}
		for _, r := range rows {
			if r.State != outcome.Done {
				t.Errorf("%s: %s/%s, want done", r.SourceID, r.State, r.Reason)
			}
		}
		doneOnce(t, o, n)
	})

	t.Run("rejects a file whose bytes changed since it was admitted", func(t *testing.T) {
		dir := t.TempDir()
		good := tinySamples(t)
		var rows [][4]string
		for i, g := range good[:3] {
			p := filepath.Join(dir, fmt.Sprintf("J-%02d.pdf", i))
			copyFile(t, g.path, p)
			rows = append(rows, [4]string{fmt.Sprintf("J-%02d", i), p, g.participantID, g.date})
		}
		o := onBackend(t, be, testOptions(t, writeManifest(t, dir, rows), filepath.Join(dir, "out"), "slow2s=*"))
		o.Workers = 1
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		admitted, started := 0, false
		o.Progress = progressFunc(func(e Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e.Kind {
			case EventAdmitted:
				admitted++
			case EventStarted:
				started = true
			}
			if admitted == len(rows) && started {
				cancel() // every row admitted, one document begun
			}
		})
		if _, err := Run(ctx, o); !errors.Is(err, layout.ErrIncomplete) {
			t.Fatalf("interrupted run: %v, want ErrIncomplete", err)
		}
		// The last row's file is replaced by another document after
		// admission: the join must not read it as the one admitted.
		copyFile(t, good[3].path, rows[2][1])
		res, err := Join(context.Background(), joinOptions(o, ""))
		if err != nil {
			t.Fatal(err)
		}
		byID := rowsBySource(t, res.Report)
		if r := byID["J-02"]; r.State != outcome.Rejected || r.Reason != outcome.Conflict {
			t.Errorf("the changed file: %s/%s, want rejected/conflict", r.State, r.Reason)
		}
		for _, id := range []string{"J-00", "J-01"} {
			if r := byID[id]; r.State != outcome.Done {
				t.Errorf("%s: %s/%s, want done", id, r.State, r.Reason)
			}
		}
	})

	t.Run("shares a run's work", func(t *testing.T) {
		dir := t.TempDir()
		const n = 8
		o := onBackend(t, be, testOptions(t, sampleManifest(t, dir, n), filepath.Join(dir, "out"), "slow300ms=*"))
		o.Workers = 1
		admitted := make(chan struct{})
		var once sync.Once
		o.Progress = progressFunc(func(e Event) {
			if e.Kind == EventAdmitted {
				once.Do(func() { close(admitted) })
			}
		})
		var joined *Result
		var joinErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-admitted
			joined, joinErr = Join(context.Background(), joinOptions(o, "slow300ms=*"))
		}()
		res, err := Run(context.Background(), o)
		wg.Wait()
		if err != nil || joinErr != nil {
			t.Fatalf("run: %v; join: %v", err, joinErr)
		}
		if !res.Complete || !joined.Complete {
			t.Errorf("complete: run %v, join %v", res.Complete, joined.Complete)
		}
		doneOnce(t, o, n)
		byJoin := 0
		for i := range n {
			for _, a := range attemptsOf(t, o, fmt.Sprintf("J-%02d", i)) {
				if a.Outcome == "done" && a.Owner != "" && !sameRun(t, o, a.Owner) {
					byJoin++
				}
			}
		}
		if byJoin == 0 {
			t.Error("the join read no document: it did not share the work")
		}
		t.Logf("%d of %d documents read by the join", byJoin, n)
	})
}

// sameRun reports whether owner is the owner of the batch's first run
// (the test's Run; the Join's run comes after it).
func sameRun(t *testing.T, o Options, owner string) bool {
	t.Helper()
	j, err := openJournalFor(o)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	runs, err := j.Runs()
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs: %v, %d", err, len(runs))
	}
	return runs[0].Owner == owner
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
