package journal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestDecisionsBesideClaims: on PostgreSQL, people deciding about
// documents in review, and a rerun moving the manifest's rows (Rebind,
// which moves queued documents too), while workers claim and finish the
// same documents, see no error of the database's and no deadlock, and
// the chain stays sound. Every write takes its rows' locks before the
// custody lock, or holds the custody lock from its start and never waits
// for a row lock: a write that took them the other way round would meet
// a claim holding its document and waiting for the custody lock, a
// deadlock PostgreSQL breaks (and the journal runs again), which fails
// the test. Decisions and rebinds must go through beside the claims: the
// test runs for at least 3 seconds, from when every handle is open, and
// then until at least one of each has, and fails after a minute without.
func TestDecisionsBesideClaims(t *testing.T) {
	url := postgresSchema(t)
	const docs, workers, deciders = 40, 6, 4
	var handles []*Journal
	open := func() *Journal {
		j, err := Open(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		handles = append(handles, j)
		return j
	}
	setup := open()
	lines := make([]ManifestLine, docs)
	for i := range docs {
		src := fmt.Sprintf("R-%d", i)
		admit(t, setup, i+2, src, "sha-"+src)
		lines[i] = ManifestLine{Line: i + 2, SourceID: src}
	}
	for range workers + deciders + 1 {
		open()
	}
	var decided, finished, rebound atomic.Int64
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	start := time.Now()
	go func() {
		for {
			time.Sleep(10 * time.Millisecond)
			run := time.Since(start)
			if run >= 3*time.Second && decided.Load() > 0 && rebound.Load() > 0 || run >= time.Minute {
				close(stop)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		j := handles[1+w]
		wg.Go(func() { work(t, j, w, stopped, &finished) })
	}
	for k := range deciders {
		j := handles[1+workers+k]
		rnd := rand.New(rand.NewPCG(uint64(k), 52))
		wg.Go(func() {
			for !stopped() {
				src := fmt.Sprintf("R-%d", rnd.IntN(docs))
				_, err := j.Decide(src, Decision{Action: Retry, User: "alice", Host: "desk"}, `{"max_attempts":9}`)
				var notInReview *NotInReviewError
				switch {
				case errors.As(err, &notInReview):
				case err != nil:
					t.Errorf("decider %d, %s: %v", k, src, err)
					return
				default:
					decided.Add(1)
				}
			}
		})
	}
	rebinder := handles[1+workers+deciders]
	wg.Go(func() { rebindAll(t, rebinder, lines, stopped, &rebound) })
	wg.Wait()
	var reran, deadlocks int64
	for _, j := range handles {
		reran += j.reruns.Load()
		deadlocks += j.deadlocks.Load()
	}
	t.Logf("in %v: %d decisions, %d verdicts, %d rebinds; %d transactions run again after a conflict, %d after a deadlock",
		time.Since(start).Round(time.Millisecond), decided.Load(), finished.Load(), rebound.Load(), reran, deadlocks)
	if decided.Load() == 0 || rebound.Load() == 0 {
		t.Errorf("no decision or no rebind went through in a minute")
	}
	if deadlocks != 0 {
		t.Errorf("%d deadlocks: a write waited for a row lock while it held the custody lock", deadlocks)
	}
	if c, err := setup.CheckChain(); err != nil || len(c.Problems) != 0 {
		t.Fatalf("CheckChain = %+v, %v; want no problems", c.Problems, err)
	}
}

// work claims documents with j and finishes each in review until stopped,
// counting the verdicts in finished: worker w of TestDecisionsBesideClaims.
func work(t *testing.T, j *Journal, w int, stopped func() bool, finished *atomic.Int64) {
	owner := NewOwner()
	for !stopped() {
		l, _, err := j.ClaimNext(owner, policy, Claimable{})
		if errors.Is(err, ErrNothingClaimable) {
			time.Sleep(time.Millisecond)
			continue
		}
		if err == nil {
			err = j.Finish(l, Result{State: outcome.Review, Reason: outcome.LowConfidence, MeanConfidence: 50, Band: outcome.BandLow,
				Artifact: fmt.Sprintf("a%d.json", w), ArtifactSHA256: "00"})
		}
		if err != nil {
			t.Errorf("worker %d: %v", w, err)
			return
		}
		finished.Add(1)
	}
}

// rebindAll rebinds the rows of m.csv with j until stopped, every other
// time to lines in the reverse order, so that every row and its document
// move, counting the rebinds in rebound.
func rebindAll(t *testing.T, j *Journal, lines []ManifestLine, stopped func() bool, rebound *atomic.Int64) {
	for n := 0; !stopped(); n++ {
		moved := make([]ManifestLine, len(lines))
		for i, l := range lines {
			if n%2 == 0 {
				l.Line = len(lines) + 1 - i // reversed
			}
			moved[i] = l
		}
		if _, err := j.Rebind("m.csv", moved); err != nil {
			t.Errorf("rebind %d: %v", n, err)
			return
		}
		rebound.Add(1)
	}
}
