package child

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testPool is a pool of this test binary's children, closed with the test.
func testPool(t *testing.T, setup testSetup, children int) *Pool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := NewPool(PoolConfig{
		Command:  Command{Path: exe, Env: []string{"CHILD_TEST=1"}},
		Name:     "a test child",
		Setup:    setup,
		Children: children,
		MaxReply: 1 << 20,
	})
	t.Cleanup(func() { p.Close() })
	return p
}

// TestPoolRetriesOnce: a call whose child crashes is tried once more in a
// new child; one that kills that child too fails with both deaths; an
// overrun of memory or of the CPU budget is not tried again. The pool
// keeps serving after each.
func TestPoolRetriesOnce(t *testing.T) {
	p := testPool(t, testSetup{MaxRSS: 200 << 20}, 1)
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "crashed")
	var r testReply
	if err := p.Call(ctx, Limits{CPU: 5 * time.Second}, testRequest{Op: "crashonce", Text: marker}, &r); err != nil || r.Text != marker {
		t.Fatalf("a call that crashed one child: %v, %q", err, r.Text)
	}
	tests := []struct {
		name string
		req  testRequest
		lim  Limits
		want string
	}{
		{"crash", testRequest{Op: "crash"}, Limits{CPU: 5 * time.Second}, "a test child crashed (SIGSEGV) twice"},
		{"memory", testRequest{Op: "alloc"}, Limits{CPU: 30 * time.Second}, "a test child ran out of memory"},
		{"wall", testRequest{Op: "hang"}, Limits{CPU: 50 * time.Millisecond}, "a test child did not finish in time twice"},
		{"reply over the cap", testRequest{Op: "huge", N: 2 << 20}, Limits{CPU: 5 * time.Second}, "a test child broke the protocol twice"},
		{"cpu", testRequest{Op: "spin"}, Limits{CPU: 200 * time.Millisecond}, "a test child used more than 200ms of CPU time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Call(ctx, tt.lim, tt.req, &testReply{})
			var f *Failure
			if errors.As(err, &f) && tt.name == "cpu" && (f.First != nil || !f.Last.CPU) {
				// A child starved of CPU meets the wall-clock backstop
				// first, which is tried again: the machine is too
				// loaded to show the CPU budget.
				t.Skipf("the machine is too loaded: %v", err)
			}
			if !errors.As(err, &f) || f.Describe("a test child") != tt.want {
				t.Fatalf("Call: %v; want a Failure %q", err, tt.want)
			}
			if err := p.Call(ctx, Limits{}, testRequest{Op: "echo", Text: "after"}, &r); err != nil || r.Text != "after" {
				t.Fatalf("a call after the failure: %v, %q", err, r.Text)
			}
		})
	}
}

// TestPoolReusesChildren: children are kept for the next call, never more
// run than the pool allows, and a call that needs a larger reply gets a
// child started with room for it.
func TestPoolReusesChildren(t *testing.T) {
	p := testPool(t, testSetup{}, 2)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var r testReply
			if err := p.Call(ctx, Limits{}, testRequest{Op: "sleep", N: 20, Text: "x"}, &r); err != nil || r.Text != "x" {
				t.Errorf("Call: %v, %q", err, r.Text)
			}
		})
	}
	wg.Wait()
	if n := p.Started(); n > 2 {
		t.Errorf("the pool started %d children; want at most 2", n)
	}
	p = testPool(t, testSetup{}, 1)
	big := strings.Repeat("x", 2<<20)
	var r testReply
	if err := p.Call(ctx, Limits{}, testRequest{Op: "echo", Text: "small"}, &r); err != nil {
		t.Fatal(err)
	}
	if err := p.Call(ctx, Limits{Reply: 4 << 20}, testRequest{Op: "echo", Text: big}, &r); err != nil || len(r.Text) != len(big) {
		t.Fatalf("a call with a larger reply: %v, %d bytes", err, len(r.Text))
	}
	if err := p.Call(ctx, Limits{}, testRequest{Op: "echo", Text: big}, &r); err != nil {
		t.Fatalf("the child with room for it is kept: %v", err)
	}
	if n := p.Started(); n != 2 {
		t.Errorf("the pool started %d children; want 2", n)
	}
}

// TestPoolCancelAndClose: a cancelled call returns the context's error, not
// a Failure, and a closed pool refuses calls.
func TestPoolCancelAndClose(t *testing.T) {
	p := testPool(t, testSetup{}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.Call(ctx, Limits{CPU: time.Hour}, testRequest{Op: "hang"}, &testReply{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Call: %v; want the context's error", err)
	}
	p.Close()
	if err := p.Call(context.Background(), Limits{}, testRequest{Op: "echo"}, &testReply{}); !errors.Is(err, ErrPoolClosed) {
		t.Fatalf("Call after Close: %v; want ErrPoolClosed", err)
	}
}

// TestFailureDescribe: how one or two deaths read.
func TestFailureDescribe(t *testing.T) {
	crash := &Death{Cause: CauseCrash}
	segv := &Death{Cause: CauseCrash, Signal: "SIGSEGV"}
	tests := []struct {
		f    Failure
		want string
	}{
		{Failure{Last: &Death{Cause: CauseOOM}}, "the child ran out of memory"},
		{Failure{Last: &Death{Cause: CauseTimeout, CPU: true}, CPU: 1500 * time.Millisecond}, "the child used more than 1.5s of CPU time"},
		{Failure{First: crash, Last: crash}, "the child crashed twice"},
		{Failure{First: segv, Last: crash}, "the child crashed (SIGSEGV), then crashed"},
		{Failure{First: &Death{Cause: CauseTimeout}, Last: &Death{Cause: CauseProtocol}}, "the child did not finish in time, then broke the protocol"},
	}
	for _, tt := range tests {
		if got := tt.f.Error(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.f, got, tt.want)
		}
	}
}

// TestLease: a leased child serves every call of its lease and says hello
// to each lease; its death is a Failure at once, not tried in another
// child, and ends the lease; a wall-clock deadline holds without a CPU
// budget.
func TestLease(t *testing.T) {
	p := testPool(t, testSetup{}, 1)
	ctx := context.Background()
	var h testHello
	l, err := p.Take(ctx, &h)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	if h.Pid == 0 || h.Pid != l.Pid() {
		t.Fatalf("hello from pid %d, lease of pid %d", h.Pid, l.Pid())
	}
	var r testReply
	for _, text := range []string{"a", "b"} {
		if err := l.Call(ctx, Limits{}, testRequest{Op: "echo", Text: text}, &r); err != nil || r.Text != text {
			t.Fatalf("Call: %v, %q", err, r.Text)
		}
	}
	err = l.Call(ctx, Limits{Wall: 200 * time.Millisecond}, testRequest{Op: "hang"}, &r)
	var f *Failure
	if !errors.As(err, &f) || f.Describe("a test child") != "a test child did not finish in time" {
		t.Fatalf("a hang through a lease: %v; want one death", err)
	}
	if l.Alive() || !errors.Is(l.Call(ctx, Limits{}, testRequest{Op: "echo"}, &r), ErrNotAlive) {
		t.Fatalf("the lease outlived its child")
	}
	l.Release()
	l.Release()
	h = testHello{}
	if l, err = p.Take(ctx, &h); err != nil || h.Pid != l.Pid() || p.Started() != 2 {
		t.Fatalf("Take after a death: %v, hello from %d, pid %d, %d started", err, h.Pid, l.Pid(), p.Started())
	}
	l.Release()
	if l.Alive() || !errors.Is(l.Call(ctx, Limits{}, testRequest{Op: "echo"}, &r), ErrNotAlive) {
		t.Fatalf("a released lease still calls its child")
	}
}
