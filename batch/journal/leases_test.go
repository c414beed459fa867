package journal

import (
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestRenewLostLease: once a lease has expired and another owner took the
// document over, the first owner's renewal and page record are refused
// with ErrLeaseLost and write nothing, so a worker whose lease was taken
// over cannot go on as if it still held it.
func TestRenewLostLease(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_700_000_000_000)
	j := backends[0].open(t, WithClock(func() time.Time { return now }))
	doc := admit(t, j, 2, "R-1", "aaa")
	first, err := j.Claim(doc.DocID, "a", policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Renew(first, time.Minute); err != nil {
		t.Fatalf("renewing a current lease: %v", err)
	}
	now = now.Add(2 * time.Minute)
	second, err := j.Claim(doc.DocID, "b", policy)
	if err != nil {
		t.Fatalf("taking over an expired lease: %v", err)
	}
	if err := j.Renew(first, time.Hour); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("renewing the lost lease: %v, want ErrLeaseLost", err)
	}
	if err := j.PageDone(first, PageMetric{Page: 1, DPI: 300}, time.Hour); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a page of the lost lease: %v, want ErrLeaseLost", err)
	}
	var pages int
	var expires int64
	if err := j.db.QueryRow(`SELECT (SELECT COUNT(*) FROM pages), lease_expires FROM documents WHERE id=?`, doc.DocID).Scan(&pages, &expires); err != nil {
		t.Fatal(err)
	}
	if pages != 0 || expires != ms(now.Add(policy.LeaseTTL)) {
		t.Errorf("after the lost lease's writes: %d page rows, lease expires at %d; want none and the new lease's %d", pages, expires, ms(now.Add(policy.LeaseTTL)))
	}
	if err := j.Renew(second, time.Minute); err != nil {
		t.Errorf("renewing the lease that took over: %v", err)
	}
}

// TestClaimCapOnResume: a document that failed twice under --attempts 3,
// claimed by a resumed run with --attempts 2, has used its attempts: it
// goes to review as attempts_exhausted, with no third attempt.
func TestClaimCapOnResume(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_700_000_000_000)
	j := backends[0].open(t, WithClock(func() time.Time { return now }))
	doc := admit(t, j, 2, "R-1", "aaa")
	for range 2 {
		l, err := j.Claim(doc.DocID, "a", policy)
		if err != nil {
			t.Fatal(err)
		}
		if exhausted, err := j.Fail(l, outcome.Cause("crash"), now, policy); err != nil || exhausted {
			t.Fatalf("Fail: exhausted %v, %v", exhausted, err)
		}
		now = now.Add(time.Second)
	}
	if l, err := j.Claim(doc.DocID, "a", Policy{MaxAttempts: 2, LeaseTTL: time.Minute}); !errors.Is(err, ErrNotClaimable) {
		t.Fatalf("claim under a cap of 2 after 2 attempts: attempt %d, %v; want ErrNotClaimable", l.Attempt, err)
	}
	var state outcome.State
	var reason outcome.Reason
	var attempts int
	if err := j.db.QueryRow(`SELECT state, reason, attempts FROM documents WHERE id=?`, doc.DocID).Scan(&state, &reason, &attempts); err != nil {
		t.Fatal(err)
	}
	if state != outcome.Review || reason != outcome.AttemptsExhausted || attempts != 2 {
		t.Errorf("document %s/%s after %d attempts, want review/%s after 2", state, reason, attempts, outcome.AttemptsExhausted)
	}
}

// TestOwnerDead: an owner is dead when its process on this host no
// longer runs, or when its pid now runs another process (another start
// time, read from /proc: a number of clock ticks since boot, never 0 for
// a process started after boot); an owner on another host never is.
func TestOwnerDead(t *testing.T) {
	t.Parallel()
	self := procStart(os.Getpid())
	if n, err := strconv.ParseInt(self, 10, 64); err != nil || n <= 0 {
		t.Fatalf("procStart of this process = %q, want its start time", self)
	}
	if again := procStart(os.Getpid()); again != self {
		t.Errorf("procStart of this process: %q, then %q", self, again)
	}
	host, _ := os.Hostname()
	pid := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		owner Owner
		dead  bool
	}{
		{NewOwner(), false},
		{Owner(host + "/" + pid + "/" + self + "/abcd1234"), false},
		{Owner(host + "/" + pid + "/1" + self + "/abcd1234"), true}, // the pid reused
		{Owner(host + "/999999999/" + self + "/abcd1234"), true},    // no such process
		{Owner("elsewhere.example/" + pid + "/1/abcd1234"), false},
		{Owner("not an owner"), false},
	} {
		if got := tc.owner.dead(); got != tc.dead {
			t.Errorf("%s: dead %v, want %v", tc.owner, got, tc.dead)
		}
	}
}

// TestClaimAbandoned: a lease is taken over at its expiry, not a moment
// later; the attempts abandoned so (a worker gone with its process) do
// not count against the cap, yet MaxAbandoned of them send the document
// to review as attempts_exhausted, recorded in the custody log. A retry
// waits until its time, and no longer.
func TestClaimAbandoned(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_700_000_000_000)
	j := backends[0].open(t, WithClock(func() time.Time { return now }))
	p := Policy{MaxAttempts: 2, LeaseTTL: time.Minute}
	doc := admit(t, j, 2, "R-1", "aaa")
	for i := range MaxAbandoned {
		if _, err := j.Claim(doc.DocID, "a", p); err != nil {
			t.Fatalf("claim %d, with %d abandoned before it: %v", i+1, i, err)
		}
		now = now.Add(p.LeaseTTL) // the lease expires now
	}
	if l, err := j.Claim(doc.DocID, "a", p); !errors.Is(err, ErrNotClaimable) {
		t.Fatalf("claim after %d abandoned: attempt %d, %v; want ErrNotClaimable", MaxAbandoned, l.Attempt, err)
	}
	var state outcome.State
	var reason outcome.Reason
	if err := j.db.QueryRow(`SELECT state, reason FROM documents WHERE id=?`, doc.DocID).Scan(&state, &reason); err != nil {
		t.Fatal(err)
	}
	if state != outcome.Review || reason != outcome.AttemptsExhausted {
		t.Errorf("after %d abandoned: %s/%s, want review/%s", MaxAbandoned, state, reason, outcome.AttemptsExhausted)
	}
	if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
		t.Errorf("custody log after the exhaustion: %v, %+v", err, c)
	}

	retried := admit(t, j, 3, "R-2", "bbb")
	l, err := j.Claim(retried.DocID, "a", p)
	if err != nil {
		t.Fatal(err)
	}
	retryAt := now.Add(time.Second)
	if _, err := j.Fail(l, outcome.Cause("crash"), retryAt, p); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Claim(retried.DocID, "a", p); !errors.Is(err, ErrNotClaimable) {
		t.Errorf("claim before the retry's time: %v, want ErrNotClaimable", err)
	}
	now = retryAt
	if _, err := j.Claim(retried.DocID, "a", p); err != nil {
		t.Errorf("claim at the retry's time: %v", err)
	}
}

// TestFailAndReleaseLogged: an attempt failed for the last time (the
// document to review) and one given back by an interrupted run (not
// counted) each write their custody event, so the log still derives the
// tables.
func TestFailAndReleaseLogged(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_700_000_000_000)
	j := backends[0].open(t, WithClock(func() time.Time { return now }))
	p := Policy{MaxAttempts: 1, LeaseTTL: time.Minute}
	failed, released := admit(t, j, 2, "R-1", "aaa"), admit(t, j, 3, "R-2", "bbb")
	l, err := j.Claim(failed.DocID, "a", p)
	if err != nil {
		t.Fatal(err)
	}
	if exhausted, err := j.Fail(l, outcome.Cause("crash"), now, p); err != nil || !exhausted {
		t.Fatalf("the last attempt failed: exhausted %v, %v", exhausted, err)
	}
	if l, err = j.Claim(released.DocID, "a", p); err != nil {
		t.Fatal(err)
	}
	if err := j.Release(l); err != nil {
		t.Fatal(err)
	}
	var attempts int
	if err := j.db.QueryRow(`SELECT attempts FROM documents WHERE id=?`, released.DocID).Scan(&attempts); err != nil || attempts != 0 {
		t.Errorf("a released attempt: %d attempts counted, %v; want 0", attempts, err)
	}
	if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
		t.Errorf("custody log: %v, %+v", err, c)
	}
}
