package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/refbatch/refbatch/report/outcome"
)

// holdCustodyLock takes the journal's custody lock at url from a
// connection of its own, and returns what gives it back.
func holdCustodyLock(t *testing.T, url string) (release func()) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT pg_advisory_xact_lock($1)`, int64(writeLockKey)); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { tx.Rollback(); db.Close() }) }
	t.Cleanup(release)
	return release
}

// TestEmptyClaimTakesNoCustodyLock: on PostgreSQL a claim that finds
// nothing to claim takes no custody lock, so it returns while another
// connection holds it; a claim that takes a document, and an admission,
// commit without it, and their events wait in pending, replayed by
// CheckChain, until the next seal chains them.
func TestEmptyClaimTakesNoCustodyLock(t *testing.T) {
	url := postgresSchema(t)
	setup, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	leased := admit(t, setup, 2, "R-1", "aa").DocID
	if _, err := setup.Claim(leased, NewOwner(), policy); err != nil {
		t.Fatal(err)
	}
	// Every write below that waits for the lock gives up once ctx ends
	// (WithInterrupt): a claim that took the lock would fail so.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	j, err := Open(url, WithInterrupt(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	release := holdCustodyLock(t, url)

	before := j.locked.Load()
	if _, _, err := j.ClaimNext(NewOwner(), policy, Claimable{}); !errors.Is(err, ErrNothingClaimable) {
		t.Fatalf("empty claim while another holds the custody lock: %v, want ErrNothingClaimable", err)
	}
	if n := j.locked.Load() - before; n != 0 {
		t.Errorf("the empty claim took the custody lock %d times", n)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("the empty claim returned only after the deadline: %v", err)
	}
	// Admission and a claim that takes a document commit without the
	// lock, their events pending; their seal waits for the lock, and
	// gives up once the interruption comes, leaving them pending.
	root, err := setup.Root()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Admit(Admission{Manifest: "m.csv", Line: 3, SourceID: "R-2", SHA256: "bb", Path: "R-2.pdf", Size: 10, Pages: 1}); err != nil {
		t.Fatalf("admission while another holds the custody lock: %v", err)
	}
	if _, d, err := j.ClaimNext(NewOwner(), policy, Claimable{}); err != nil || d.SourceID != "R-2" {
		t.Fatalf("claim of a queued document while another holds the custody lock: %+v, %v", d, err)
	}
	c, err := setup.CheckChain()
	if err != nil || len(c.Problems) != 0 || c.Pending != 2 || c.Root != root {
		t.Fatalf("CheckChain with two events pending = %+v, %v; want them pending, the root %+v", c, err, root)
	}
	release()
	// The next seal, any handle's, chains them in their order.
	admit(t, setup, 4, "R-3", "cc")
	c, err = setup.CheckChain()
	if err != nil || len(c.Problems) != 0 || c.Pending != 0 || c.Root.Events != root.Events+3 {
		t.Fatalf("CheckChain after the lock was given back = %+v, %v; want %d events, none pending", c, err, root.Events+3)
	}
	var kinds []EventKind
	if err := setup.Events(func(e Event) error { kinds = append(kinds, e.Kind); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := kinds[len(kinds)-3:]; fmt.Sprint(got) != fmt.Sprint([]EventKind{EventRowAdmitted, EventAttemptClaimed, EventRowAdmitted}) {
		t.Errorf("the last events are %v, want the admission, the claim, the next admission", got)
	}
}

// TestConcurrentCustody: on PostgreSQL, three handles admitting one
// manifest at once (the same rows, in different orders), workers on
// handles of their own claiming, failing, releasing and finishing, and
// settings written beside them (transactions that hold the custody lock
// from their start), some leases expiring as they are taken and taken
// over while their attempts end, leave one chain that CheckChain finds sound, one
// row per manifest line, one document per source_id, and every document
// final.
func TestConcurrentCustody(t *testing.T) {
	url := postgresSchema(t)
	const lines, sources, workers = 150, 120, 8
	open := func() *Journal {
		j, err := Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		return j
	}
	row := func(line int) Admission {
		src := fmt.Sprintf("R-%d", line%sources)
		return Admission{Manifest: "m.csv", Line: line + 2, SourceID: src, SHA256: "sha-" + src, Path: src + ".pdf", Size: 10, Pages: 1}
	}
	var admitting sync.WaitGroup
	for k := range 3 {
		j := open()
		order := rand.New(rand.NewPCG(uint64(k), 52)).Perm(lines)
		admitting.Add(1)
		go func() {
			defer admitting.Done()
			for _, i := range order {
				if _, err := j.Admit(row(i)); err != nil {
					t.Errorf("admitter %d, line %d: %v", k, i+2, err)
					return
				}
			}
		}()
	}
	admitted := make(chan struct{})
	go func() { admitting.Wait(); close(admitted) }()
	var settings atomic.Int64
	setter := open()
	go func() {
		j := setter
		for n := 0; ; n++ {
			select {
			case <-admitted:
				return
			default:
			}
			if err := j.SetMeta("k", fmt.Sprint(n)); err != nil {
				t.Error(err)
				return
			}
			settings.Add(1)
		}
	}()
	var working sync.WaitGroup
	for w := range workers {
		j := open()
		working.Add(1)
		go func() {
			defer working.Done()
			// A quarter of the workers take leases that expire at once,
			// which the others take over while they work.
			p := Policy{MaxAttempts: 4, LeaseTTL: time.Minute}
			if w%4 == 0 {
				p.LeaseTTL = 0
			}
			concurrentWorker(t, j, p, rand.New(rand.NewPCG(uint64(w), 7)), admitted)
		}()
	}
	working.Wait()
	if t.Failed() {
		return
	}
	checkConcurrentEnd(t, open(), lines, sources)
	t.Logf("%d settings written beside admission", settings.Load())
}

// concurrentWorker claims documents until admission is over and none is
// left, and ends each attempt at random: a transient failure, a release,
// or a verdict. A lease taken over by another is lost, not an error.
func concurrentWorker(t *testing.T, j *Journal, p Policy, rnd *rand.Rand, admitted chan struct{}) {
	owner := NewOwner()
	for {
		l, _, err := j.ClaimNext(owner, p, Claimable{})
		if errors.Is(err, ErrNothingClaimable) {
			select {
			case <-admitted:
				if queued, _, err := j.Unfinished(); err != nil || queued == 0 {
					if err != nil {
						t.Error(err)
					}
					return
				}
			default:
			}
			time.Sleep(time.Millisecond)
			continue
		}
		if err != nil {
			t.Error(err)
			return
		}
		time.Sleep(time.Duration(rnd.IntN(2000)) * time.Microsecond) // the work
		switch r := rnd.IntN(10); {
		case r == 0:
			_, err = j.Fail(l, outcome.CauseCrash, time.Now(), p)
		case r == 1:
			err = j.Release(l)
		default:
			err = j.Finish(l, Result{State: outcome.Done, MeanConfidence: 90, Band: "high", Artifact: "a.json", ArtifactSHA256: "00"})
		}
		if err != nil && !errors.Is(err, ErrLeaseLost) {
			t.Error(err)
			return
		}
	}
}

// checkConcurrentEnd checks what TestConcurrentCustody leaves.
func checkConcurrentEnd(t *testing.T, j *Journal, lines, sources int) {
	t.Helper()
	c, err := j.CheckChain()
	if err != nil || len(c.Problems) != 0 {
		t.Fatalf("CheckChain = %+v, %v; want no problems", c.Problems, err)
	}
	var docs int
	err = j.Documents(func(d Doc) error {
		docs++
		if d.State != outcome.Done && d.State != outcome.Review || d.LeaseOwner != "" {
			t.Errorf("document %s ends %s (%s), leased by %q", d.SourceID, d.State, d.Reason, d.LeaseOwner)
		}
		return nil
	})
	if err != nil || docs != sources {
		t.Errorf("%d documents (%v), want one per source_id: %d", docs, err, sources)
	}
	kinds := map[outcome.State]int{}
	for line := 2; line < lines+2; line++ {
		st, ok, err := j.Row("m.csv", line)
		if err != nil || !ok {
			t.Fatalf("row %d: %v, found %v", line, err, ok)
		}
		kinds[st.State]++
	}
	if kinds[outcome.Duplicate] != lines-sources || kinds[outcome.Rejected] != 0 {
		t.Errorf("rows by state %v, want %d duplicates and no rejection", kinds, lines-sources)
	}
	var n int
	if err := j.db.QueryRow(`SELECT COUNT(*) FROM rows`).Scan(&n); err != nil || n != lines {
		t.Errorf("%d rows (%v), want %d", n, err, lines)
	}
	// Every attempt ended, and each in one way: a verdict published over
	// another's claim would leave that claim's attempt open.
	if err := j.db.QueryRow(`SELECT COUNT(*) FROM attempts WHERE ended_at IS NULL`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d attempts not ended (%v), want none", n, err)
	}
}

// TestRerunRetriesConflicts: a write transaction PostgreSQL rolled back
// for a conflict with another is run again, up to appendRetries runs in
// all, and a deadlock among them is counted; an error that is no
// conflict, a success, and any error on SQLite end it at once. rerun's
// own loop is run on a SQLite journal marked PostgreSQL, fn failing as
// PostgreSQL would.
func TestRerunRetriesConflicts(t *testing.T) {
	tests := []struct {
		name      string
		pg        bool
		code      string
		fails     int // runs that fail with code before one succeeds
		wantRuns  int
		wantErr   bool
		wantDeads int64
	}{
		{"conflict then success", true, "40001", 2, 3, false, 0},
		{"deadlock then success", true, "40P01", 1, 2, false, 1},
		{"duplicate key then success", true, "23505", 1, 2, false, 0},
		{"conflicts past the limit", true, "40001", 20, appendRetries, true, 0},
		{"not a conflict", true, "23502", 1, 1, true, 0},
		{"success", true, "", 0, 1, false, 0},
		{"on SQLite", false, "40001", 1, 1, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := backends[0].open(t)
			j.pg = tt.pg
			runs := 0
			err := j.rerun(func() (*sql.Tx, error) { return j.db.Begin() }, func(*sql.Tx) error {
				runs++
				if runs <= tt.fails {
					return &pgconn.PgError{Code: tt.code}
				}
				return nil
			})
			j.pg = false
			if runs != tt.wantRuns || (err != nil) != tt.wantErr {
				t.Errorf("%d runs, error %v; want %d runs, error %v", runs, err, tt.wantRuns, tt.wantErr)
			}
			if want := int64(tt.wantRuns - 1); j.reruns.Load() != want {
				t.Errorf("%d reruns counted, want %d", j.reruns.Load(), want)
			}
			if j.deadlocks.Load() != tt.wantDeads {
				t.Errorf("%d deadlocks counted, want %d", j.deadlocks.Load(), tt.wantDeads)
			}
		})
	}
}
