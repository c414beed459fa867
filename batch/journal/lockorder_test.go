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
// same documents, see no error of the database's: no deadlock surfaces on
// either side, whichever PostgreSQL aborts, and the chain stays sound.
// Every write takes its rows' locks before the custody lock, or holds
// the custody lock from its start and never waits for a row lock.
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
	stop := make(chan struct{})
	time.AfterFunc(3*time.Second, func() { close(stop) })
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	var decided, finished, rebound atomic.Int64
	for w := range workers {
		j := open()
		wg.Go(func() {
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
		})
	}
	for k := range deciders {
		j := open()
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
	rebinder := open()
	wg.Go(func() {
		for n := 0; !stopped(); n++ {
			moved := make([]ManifestLine, docs)
			for i, l := range lines {
				if n%2 == 0 {
					l.Line = docs + 1 - i // reversed
				}
				moved[i] = l
			}
			if _, err := rebinder.Rebind("m.csv", moved); err != nil {
				t.Errorf("rebind %d: %v", n, err)
				return
			}
			rebound.Add(1)
		}
	})
	wg.Wait()
	t.Logf("%d decisions, %d verdicts, %d rebinds; %d transactions run again after a conflict", decided.Load(), finished.Load(), rebound.Load(), reruns(handles))
	if decided.Load() == 0 || rebound.Load() == 0 {
		t.Errorf("no decision or no rebind went through")
	}
	if c, err := setup.CheckChain(); err != nil || len(c.Problems) != 0 {
		t.Fatalf("CheckChain = %+v, %v; want no problems", c.Problems, err)
	}
}

// reruns counts the transactions the handles ran again after a conflict.
func reruns(handles []*Journal) int64 {
	var n int64
	for _, j := range handles {
		n += j.reruns.Load()
	}
	return n
}
