package child

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the child: Start re-executes it with
// CHILD_TEST=1, and TestMain serves testRequests.
func TestMain(m *testing.M) {
	if os.Getenv("CHILD_TEST") == "1" {
		err := ServeMain(testInit, testHandle)
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type testSetup struct {
	Fail     bool
	MaxStack int
	MaxRSS   int64
}

type testHello struct{ Pid int }

type testRequest struct {
	Op   string // echo, crash, crashonce, hang, spin, sleep, huge, recurse, alloc
	Text string
	N    int
}

type testReply struct{ Text string }

var rssCap int64

func testInit(s testSetup) (testHello, error) {
	if s.Fail {
		return testHello{}, errors.New("setup refused")
	}
	if s.MaxStack > 0 {
		LimitStack(s.MaxStack)
	}
	if s.MaxRSS > 0 {
		rssCap = s.MaxRSS
		WatchRSS(5*time.Millisecond, func() int64 { return rssCap })
	}
	return testHello{Pid: os.Getpid()}, nil
}

var sink [][]byte

func testHandle(r testRequest) testReply {
	switch r.Op {
	case "crash":
		_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		time.Sleep(time.Hour)
	case "crashonce":
		// Text names a file: the first child to see the request makes it
		// and crashes, the next answers.
		if f, err := os.OpenFile(r.Text, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
			f.Close()
			_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
			time.Sleep(time.Hour)
		}
	case "hang":
		time.Sleep(time.Hour)
	case "spin":
		x := 0
		for start := time.Now(); time.Since(start) < time.Hour; x++ {
		}
		return testReply{Text: strconv.Itoa(x)}
	case "sleep":
		time.Sleep(time.Duration(r.N) * time.Millisecond)
	case "huge":
		return testReply{Text: strings.Repeat("x", r.N)}
	case "recurse":
		return testReply{Text: string(rune('a' + recurse(r.N)%26))}
	case "alloc":
		for {
			b := make([]byte, 16<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			sink = append(sink, b)
		}
	}
	return testReply{Text: r.Text}
}

func recurse(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return recurse(n-1) + int(pad[n%256])
}

func start(t *testing.T, s testSetup, maxReply int64) (*Process, testHello) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var h testHello
	p, err := Start(context.Background(), Config{Command: Command{Path: exe, Env: []string{"CHILD_TEST=1"}}, MaxReply: maxReply}, s, &h)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, h
}

func TestCallEcho(t *testing.T) {
	p, h := start(t, testSetup{}, 0)
	if h.Pid != p.Pid() {
		t.Errorf("hello says pid %d, the child is %d", h.Pid, p.Pid())
	}
	for _, s := range []string{"one", "two", strings.Repeat("é", 100000)} {
		var r testReply
		if err := p.Call(context.Background(), time.Minute, testRequest{Op: "echo", Text: s}, &r); err != nil {
			t.Fatalf("Call: %v", err)
		}
		if r.Text != s {
			t.Fatalf("echo of %d bytes came back as %d", len(s), len(r.Text))
		}
	}
	if err := p.Close(); err != nil || p.Alive() {
		t.Errorf("Close: %v, alive %v", err, p.Alive())
	}
	if err := p.Call(context.Background(), time.Minute, testRequest{Op: "echo"}, &testReply{}); !errors.Is(err, ErrNotAlive) {
		t.Errorf("Call after Close: %v, want ErrNotAlive", err)
	}
}

func TestStartFails(t *testing.T) {
	exe, _ := os.Executable()
	_, err := Start(context.Background(), Config{Command: Command{Path: exe, Env: []string{"CHILD_TEST=1"}}}, testSetup{Fail: true}, &testHello{})
	if err == nil || !strings.Contains(err.Error(), "setup refused") {
		t.Errorf("Start with a failing init: %v", err)
	}
	_, err = Start(context.Background(), Config{Command: Command{Path: "/nonexistent/refbatch"}}, testSetup{}, nil)
	if err == nil {
		t.Errorf("Start of a missing binary succeeded")
	}
}

// TestDeaths: every way a child can fail its parent ends in a *Death with
// the right cause, and the parent is left with a dead Process, never a
// stuck or crashed one.
func TestDeaths(t *testing.T) {
	tests := []struct {
		name     string
		setup    testSetup
		maxReply int64
		req      testRequest
		timeout  time.Duration
		want     Cause
	}{
		{name: "signal", req: testRequest{Op: "crash"}, want: CauseCrash},
		{name: "hang", req: testRequest{Op: "hang"}, timeout: 300 * time.Millisecond, want: CauseTimeout},
		{name: "reply over the cap", maxReply: 1 << 20, req: testRequest{Op: "huge", N: 2 << 20}, want: CauseProtocol},
		{name: "stack overflow", setup: testSetup{MaxStack: 1 << 20}, req: testRequest{Op: "recurse", N: 1 << 20}, want: CauseCrash},
		{name: "rss over the cap", setup: testSetup{MaxRSS: 256 << 20}, req: testRequest{Op: "alloc"}, want: CauseOOM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := start(t, tt.setup, tt.maxReply)
			timeout := tt.timeout
			if timeout == 0 {
				timeout = time.Minute
			}
			err := p.Call(context.Background(), timeout, tt.req, &testReply{})
			var d *Death
			if !errors.As(err, &d) {
				t.Fatalf("Call: %v (%T), want a *Death", err, err)
			}
			if d.Cause != tt.want {
				t.Errorf("cause %q (%v), want %q", d.Cause, d, tt.want)
			}
			if p.Alive() {
				t.Errorf("the child is still alive")
			}
		})
	}
}

// TestCallCPU: a child computing past its CPU budget is killed as a
// timeout marked CPU, however long the wall deadline; a child that waits
// (as one starved of CPU by a loaded machine) is not.
func TestCallCPU(t *testing.T) {
	p, _ := start(t, testSetup{}, 0)
	began := time.Now()
	err := p.CallCPU(context.Background(), time.Hour, 300*time.Millisecond, testRequest{Op: "spin"}, &testReply{})
	var d *Death
	if !errors.As(err, &d) || d.Cause != CauseTimeout || !d.CPU {
		t.Fatalf("CallCPU of a spinning child: %v; want a CPU timeout", err)
	}
	if el := time.Since(began); el > 10*time.Second {
		t.Errorf("the CPU budget took %v to act", el)
	}
	q, _ := start(t, testSetup{}, 0)
	var r testReply
	if err := q.CallCPU(context.Background(), time.Minute, 100*time.Millisecond, testRequest{Op: "sleep", N: 500, Text: "slept"}, &r); err != nil || r.Text != "slept" {
		t.Errorf("CallCPU of a sleeping child: %v, %q", err, r.Text)
	}
}

func TestCallCancelled(t *testing.T) {
	p, _ := start(t, testSetup{}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := p.Call(ctx, time.Hour, testRequest{Op: "hang"}, &testReply{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Call: %v, want the context's error", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if p.Alive() {
		t.Errorf("a cancelled call left the child alive")
	}
}
func TestClassifyDeath(t *testing.T) {
	// Linux wait statuses: the low 7 bits are the terminating signal, an
	// exit code sits in the next byte.
	signaled := func(s syscall.Signal) syscall.WaitStatus { return syscall.WaitStatus(s) }
	exited := func(code int) syscall.WaitStatus { return syscall.WaitStatus(code << 8) }
	tests := []struct {
		name     string
		status   syscall.WaitStatus
		killedBy string
		stderr   string
		want     Cause
	}{
		{name: "segfault", status: signaled(syscall.SIGSEGV), want: CauseCrash},
		{name: "bus error", status: signaled(syscall.SIGBUS), want: CauseCrash},
		{name: "abort", status: signaled(syscall.SIGABRT), want: CauseCrash},
		{name: "illegal instruction", status: signaled(syscall.SIGILL), want: CauseCrash},
		{name: "go runtime reports a segfault", status: exited(2), stderr: "SIGSEGV: segmentation violation\nPC=0x0 m=0 sigcode=0", want: CauseCrash},
		{name: "killed at the deadline", status: signaled(syscall.SIGKILL), killedBy: "timeout", want: CauseTimeout},
		{name: "deadline wins over oom text", status: signaled(syscall.SIGKILL), killedBy: "timeout", stderr: "fatal error: runtime: out of memory", want: CauseTimeout},
		{name: "sigkill not sent by us", status: signaled(syscall.SIGKILL), want: CauseOOM},
		{name: "killed by us for a broken protocol", status: signaled(syscall.SIGKILL), killedBy: "protocol", want: CauseCrash},
		{name: "go runtime out of memory", status: exited(2), stderr: "fatal error: runtime: out of memory\n\ngoroutine 1", want: CauseOOM},
		{name: "enomem", status: exited(2), stderr: "runtime: mmap: cannot allocate memory", want: CauseOOM},
		{name: "c++ bad_alloc", status: signaled(syscall.SIGABRT), stderr: "terminate called after throwing an instance of 'std::bad_alloc'", want: CauseOOM},
		{name: "mupdf malloc failed", status: exited(1), stderr: "error: malloc (2000000000 bytes) failed\naborting process from uncaught error!", want: CauseOOM},
		{name: "leptonica malloc failed", status: exited(1), stderr: "Error in pixCreateNoInit: pix_malloc fail for data", want: CauseOOM},
		{name: "race detector runtime", status: exited(66), stderr: "==1==ERROR: ThreadSanitizer failed to allocate 0x8000000 (134217728) bytes at address 218010000000 (errno: 12)", want: CauseOOM},
		{name: "unexpected exit", status: exited(1), stderr: "aborting process from uncaught error!", want: CauseCrash},
		{name: "clean exit mid-request", status: exited(0), want: CauseCrash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &stderrLog{max: stderrTail}
			_, _ = l.Write([]byte(tt.stderr))
			oom, _ := l.evidence()
			if got := classify(tt.status, tt.killedBy, oom); got != tt.want {
				t.Errorf("classify = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRuntimeSignal(t *testing.T) {
	tests := []struct{ name, stderr, want string }{
		{name: "go runtime header", stderr: "SIGSEGV: segmentation violation\nPC=0x1", want: "SIGSEGV"},
		{name: "fatal error line", stderr: "fatal error: unexpected signal during runtime execution\n[signal SIGBUS: bus error code=0x2]", want: "SIGBUS"},
		{name: "nothing", stderr: "some library chatter SIGSEGV in prose", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runtimeSignal([]byte(tt.stderr)); got != tt.want {
				t.Errorf("runtimeSignal = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStderrLogTail(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{name: "under", max: 8, writes: []string{"ab", "cd"}, want: "abcd"},
		{name: "overflow keeps the tail", max: 4, writes: []string{"abc", "def"}, want: "cdef"},
		{name: "one big write", max: 4, writes: []string{"abcdefgh"}, want: "efgh"},
		{name: "exactly full", max: 4, writes: []string{"ab", "cd"}, want: "abcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &stderrLog{max: tt.max}
			for _, w := range tt.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := string(l.tail); got != tt.want {
				t.Errorf("kept %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStderrLogEvidence(t *testing.T) {
	traceback := strings.Repeat("goroutine 1 gp=0x1 m=0 [running]:\nruntime.throw(...)\n", 500) // > 4 KiB
	tests := []struct {
		name       string
		writes     []string
		wantOOM    bool
		wantSignal string
	}{
		{name: "nothing", writes: []string{"Warning: something\n"}},
		{name: "oom before a long traceback", writes: []string{"fatal error: runtime: out of memory\n\n", traceback}, wantOOM: true},
		{name: "oom split across writes", writes: []string{"fatal error: runtime: out of me", "mory\n", traceback}, wantOOM: true},
		{name: "signal before a long traceback", writes: []string{"SIGSEGV: segmentation violation\nPC=0x0\n", traceback}, wantSignal: "SIGSEGV"},
		{name: "bad_alloc abort", writes: []string{"terminate called after throwing an instance of 'std::bad_alloc'\n", "SIGABRT: abort\n", traceback},
			wantOOM: true, wantSignal: "SIGABRT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &stderrLog{max: stderrTail}
			for _, w := range tt.writes {
				_, _ = l.Write([]byte(w))
			}
			oom, sig := l.evidence()
			if oom != tt.wantOOM || sig != tt.wantSignal {
				t.Errorf("evidence() = %v, %q; want %v, %q", oom, sig, tt.wantOOM, tt.wantSignal)
			}
		})
	}
}
