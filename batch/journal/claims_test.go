package journal

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

func TestClaimNext(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		now := time.Now()
		j := be.open(t, WithClock(func() time.Time { return now }))
		a, b := NewOwner(), NewOwner()
		first := admit(t, j, 2, "R-1", "aa").DocID
		second := admit(t, j, 3, "R-2", "bb").DocID
		other, err := j.Admit(Admission{Manifest: "other.csv", Line: 2, SourceID: "R-3", SHA256: "cc", Path: "R-3.pdf", Size: 10, Pages: 1})
		if err != nil {
			t.Fatal(err)
		}
		mine := Claimable{Manifests: []string{"m.csv"}}

		l, d, err := j.ClaimNext(a, policy, mine)
		if err != nil || d.ID != first || l.DocID != first || l.Attempt != 1 || d.LeaseOwner != string(a) {
			t.Fatalf("first claim: %+v %+v %v, want document %d leased by a", l, d, err, first)
		}
		// Skipped, and then the only one of m.csv left is leased.
		if _, _, err := j.ClaimNext(b, policy, Claimable{Manifests: mine.Manifests, Skip: []int64{second}}); !errors.Is(err, ErrNothingClaimable) {
			t.Fatalf("claim with the rest skipped: %v, want ErrNothingClaimable", err)
		}
		l2, d2, err := j.ClaimNext(b, policy, mine)
		if err != nil || d2.ID != second {
			t.Fatalf("second claim: %+v %v, want document %d", d2, err, second)
		}
		if _, _, err := j.ClaimNext(b, policy, mine); !errors.Is(err, ErrNothingClaimable) {
			t.Fatalf("third claim on m.csv: %v, want ErrNothingClaimable", err)
		}
		if _, d3, err := j.ClaimNext(b, policy, Claimable{}); err != nil || d3.ID != other.DocID {
			t.Fatalf("claim on every manifest: %+v %v, want document %d", d3, err, other.DocID)
		}

		// A transient failure waits out its backoff; then it is claimable.
		if _, err := j.Fail(l2, outcome.CauseCrash, now.Add(time.Minute), policy); err != nil {
			t.Fatal(err)
		}
		if _, _, err := j.ClaimNext(b, policy, mine); !errors.Is(err, ErrNothingClaimable) {
			t.Fatalf("claim in backoff: %v, want ErrNothingClaimable", err)
		}
		now = now.Add(2 * time.Minute)
		// a's lease on the first document expired too: fresh claims pass
		// it over, the others take the one in backoff first (it was never
		// in flight at a death), then the expired one.
		if _, _, err := j.ClaimNext(b, policy, Claimable{Manifests: mine.Manifests, Fresh: true, Skip: []int64{second}}); !errors.Is(err, ErrNothingClaimable) {
			t.Fatalf("fresh claim with only an expired lease left: %v, want ErrNothingClaimable", err)
		}
		if _, d, err := j.ClaimNext(b, policy, mine); err != nil || d.ID != second || d.Attempts != 2 {
			t.Fatalf("claim after backoff: %+v %v, want document %d attempt 2", d, err, second)
		}
		_, d, err = j.ClaimNext(b, policy, mine)
		if err != nil || d.ID != first || d.Abandoned != 1 {
			t.Fatalf("claim of the expired lease: %+v %v, want document %d abandoned once", d, err, first)
		}
		if err := j.Finish(l, Result{State: outcome.Done}); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("Finish under the expired lease: %v, want ErrLeaseLost", err)
		}
		if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
			t.Errorf("CheckChain = %+v, %v", c, err)
		}
	})
}

// TestClaimNextConcurrent: many handles (as many machines) claim from one
// queue; every document is claimed exactly once.
func TestClaimNextConcurrent(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		loc := be.location(t)
		const docs, workers = 60, 6
		j0, err := Open(loc)
		if err != nil {
			t.Fatal(err)
		}
		defer j0.Close()
		for i := range docs {
			admit(t, j0, i+2, fmt.Sprintf("R-%d", i), fmt.Sprintf("%02x", i))
		}
		var mu sync.Mutex
		claimed := map[int64]int{}
		var wg sync.WaitGroup
		for range workers {
			j, err := Open(loc)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := NewOwner()
				for {
					l, d, err := j.ClaimNext(owner, policy, Claimable{})
					if errors.Is(err, ErrNothingClaimable) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					claimed[d.ID]++
					mu.Unlock()
					if err := j.PageDone(l, PageMetric{Page: 0, DPI: 300}, time.Minute); err != nil {
						t.Error(err)
						return
					}
					if err := j.Finish(l, Result{State: outcome.Done}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if len(claimed) != docs {
			t.Errorf("%d documents claimed, want %d", len(claimed), docs)
		}
		for id, n := range claimed {
			if n != 1 {
				t.Errorf("document %d claimed %d times", id, n)
			}
		}
		if c, err := j0.CheckChain(); err != nil || len(c.Problems) != 0 {
			t.Errorf("CheckChain = %+v, %v", c, err)
		}
	})
}

func TestHoldAdmission(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		now := time.Now()
		j := be.open(t, WithClock(func() time.Time { return now }))
		a, b := NewOwner(), NewOwner()
		hold := func(o Owner, want bool) {
			t.Helper()
			got, err := j.HoldAdmission("m.csv", o, time.Minute)
			if err != nil || got != want {
				t.Fatalf("HoldAdmission = %v, %v; want %v", got, err, want)
			}
		}
		admitting := func(o Owner, want bool) {
			t.Helper()
			got, err := j.Admitting([]string{"m.csv"}, o)
			if err != nil || got != want {
				t.Fatalf("Admitting = %v, %v; want %v", got, err, want)
			}
		}
		hold(a, true)
		hold(a, true) // renewed
		hold(b, false)
		admitting(b, true)
		admitting(a, false) // a's own hold is not another's
		if ok, err := j.HoldAdmission("other.csv", b, time.Minute); err != nil || !ok {
			t.Errorf("another manifest: %v, %v", ok, err)
		}
		// Admitting asks about the manifests named, or, with none, any.
		for _, tc := range []struct {
			manifests []string
			o         Owner
			want      bool
		}{
			{[]string{"third.csv"}, a, false},
			{[]string{"third.csv", "other.csv"}, a, true},
			{nil, a, true}, // b holds other.csv
			{nil, b, true}, // a holds m.csv
		} {
			if got, err := j.Admitting(tc.manifests, tc.o); err != nil || got != tc.want {
				t.Errorf("Admitting(%q) = %v, %v; want %v", tc.manifests, got, err, tc.want)
			}
		}
		now = now.Add(2 * time.Minute) // a's hold expires unrenewed
		admitting(b, false)
		hold(b, true)
		hold(a, false)
		if err := j.ReleaseAdmission("m.csv", a); err != nil { // not a's: nothing
			t.Fatal(err)
		}
		admitting(a, true)
		if err := j.ReleaseAdmission("m.csv", b); err != nil {
			t.Fatal(err)
		}
		admitting(a, false)
		hold(a, true)
	})
}

func TestRunHeartbeat(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		now := time.Now()
		j := be.open(t, WithClock(func() time.Time { return now }))
		id, err := j.StartRun(Owner("elsewhere/1/2/abcd"), "{}", "{}")
		if err != nil {
			t.Fatal(err)
		}
		live := func(want int) {
			t.Helper()
			s, err := j.Snapshot(now, time.Minute)
			if err != nil || s.LiveRuns != want {
				t.Fatalf("LiveRuns = %d, %v; want %d", s.LiveRuns, err, want)
			}
		}
		// A run on another host holding no lease: only its heartbeat
		// says it is going.
		live(0)
		if err := j.Beat(id); err != nil {
			t.Fatal(err)
		}
		live(1)
		now = now.Add(HeartbeatTTL + time.Second)
		live(0)
	})
}
