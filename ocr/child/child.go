// Package child runs work on untrusted bytes in a supervised child
// process: the refbatch binary re-executed in a hidden mode, talking to its
// parent over two pipes.
//
// Code that parses hostile input (MuPDF and Tesseract, which are C and
// C++, and pdfcpu, which is Go but recurses and allocates as its input
// says) can crash, hang or exhaust memory in ways no recover catches and no
// context cancels. In a child, each of those costs the child, never the
// parent: the parent enforces a deadline per call by killing the child's
// process group, caps the size of every reply before decoding it, watches
// the child's stderr for evidence of how it died, and reports a dead child
// as a [*Death] with a [Cause]. A dead child is never reused: the caller
// starts a new one.
//
// # Protocol
//
// Messages are length-prefixed frames (an 8-byte big-endian length, then
// the payload), each payload one encoding/gob value. fd 3 carries requests
// to the child, fd 4 carries replies; stdin and stdout are not used,
// because C libraries write to stdout. The first request is the setup
// value; the child answers it with a hello once it is ready (its libraries
// initialised), then answers every request with exactly one reply.
//
// The parent reads a reply frame only after checking its length against
// Config.MaxReply, so a child that misbehaves (or was made to) cannot make
// the parent allocate more than that; gob then allocates in proportion to
// the bytes it has really been given.
//
// # The child side
//
// The child's main calls [Serve] (or [ServeMain] for fds 3 and 4), which
// reads the setup, calls the init function and then a handler per
// request. [LimitAddressSpace], [LimitStack] and [WatchRSS] are the
// resource limits a child applies to itself before it touches any input.
package child

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// DefaultStartTimeout bounds a child's start-up: exec plus whatever
	// its init does, a fraction of a second when healthy.
	DefaultStartTimeout = 30 * time.Second
	// DefaultMaxReply caps a reply frame when Config.MaxReply is 0.
	DefaultMaxReply = 64 << 20
	// closeGrace is how long Close waits for the child to exit by itself.
	closeGrace = 2 * time.Second
	// stderrTail is how much of the child's stderr is kept.
	stderrTail = 4 << 10
)

// Config says how to start a child.
type Config struct {
	// Path and Args re-execute the binary in its child mode, for example
	// os.Executable() and []string{"__worker"}.
	Path string
	Args []string
	// Env is appended to the inherited environment.
	Env []string
	// StartTimeout bounds Start, hello included; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// MaxReply is the largest reply frame the parent accepts, in bytes;
	// 0 means DefaultMaxReply. A larger one kills the child, which ends
	// in a *Death with CauseProtocol.
	MaxReply int64
}

// Cause is why a child died.
type Cause string

// The causes of a [Death].
const (
	// CauseCrash: the child died of a signal, a Go runtime fatal error
	// (a stack overflow among them) or an unexpected exit.
	CauseCrash Cause = "crash"
	// CauseOOM: the child ran out of memory: its address-space limit, its
	// RSS watchdog, or the kernel's OOM killer.
	CauseOOM Cause = "oom"
	// CauseTimeout: the call overran its deadline and the parent killed
	// the child.
	CauseTimeout Cause = "timeout"
	// CauseProtocol: the child broke the protocol (a reply over the size
	// cap, or one that does not decode) and the parent killed it.
	CauseProtocol Cause = "protocol"
)

// Death is the error of a call during which the child died or was killed
// for a reason of its own making. It never quotes the child's stderr, which
// may hold document content; Signal is only a signal name the Go runtime
// reported, such as SIGSEGV.
type Death struct {
	Cause  Cause
	Signal string // "" when none was reported
	Detail string // the wait status and, if the parent killed it, why
	// CPU is set when the parent killed the child for using more CPU time
	// than the call allowed (CallCPU): a deadline that load on the machine
	// cannot bring forward.
	CPU bool
}

func (d *Death) Error() string {
	s := "child " + string(d.Cause) + ": " + d.Detail
	if d.Signal != "" {
		s += " (" + d.Signal + ")"
	}
	return s
}

// Process is the parent's handle on one child. It serves one call at a
// time and is not safe for concurrent use, except for Alive, Pid and Close.
type Process struct {
	cmd      *exec.Cmd
	requests *os.File // parent's end of fd 3
	replies  *os.File // parent's end of fd 4
	maxReply int64
	stderr   *stderrLog
	exited   chan struct{} // closed once the child is reaped

	mu       sync.Mutex
	killedBy string // why the parent killed the child: "timeout", "cpu", "cancel", "close", "protocol"; "" if it did not
	broken   bool   // a reply broke the protocol

	closeOnce sync.Once
}

// Start starts a child, sends it setup and decodes its hello into hello (a
// pointer, or nil to ignore it). A child that dies or does not answer
// within the start timeout is killed and reported as a *Death.
func Start(ctx context.Context, cfg Config, setup, hello any) (*Process, error) {
	if cfg.Path == "" {
		return nil, errors.New("starting child: no executable path")
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.MaxReply <= 0 {
		cfg.MaxReply = DefaultMaxReply
	}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting child: %w", err)
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, fmt.Errorf("starting child: %w", err)
	}
	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.ExtraFiles = []*os.File{reqR, respW} // fd 3 and fd 4 in the child
	p := &Process{
		cmd:      cmd,
		requests: reqW,
		replies:  respR,
		maxReply: cfg.MaxReply,
		stderr:   &stderrLog{max: stderrTail},
		exited:   make(chan struct{}),
	}
	cmd.Stderr = p.stderr // stdout stays nil: /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A group of its own, so a kill reaches anything it started.
		Setpgid: true,
		// If the parent dies, so does the child, even mid-call. Linux
		// sends it when the parent thread that started the child exits;
		// the Go runtime ends a thread only when a goroutine exits while
		// locked to it, which the parent does not do.
		Pdeathsig: syscall.SIGKILL,
	}
	// Should anything inherit the child's stderr, do not wait on it forever.
	cmd.WaitDelay = time.Second

	err = cmd.Start()
	// The child holds its own copies now; the parent closing its copies of
	// the child's ends is what turns the child's death into EOF.
	reqR.Close()
	respW.Close()
	if err != nil {
		reqW.Close()
		respR.Close()
		return nil, fmt.Errorf("starting child: %w", err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()

	var h helloFrame
	err = p.roundTrip(ctx, cfg.StartTimeout, setup, &h)
	if err == nil {
		err = decodeHello(h, hello)
	}
	if err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("starting child: %w", err)
	}
	return p, nil
}

// Pid is the child's process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Alive reports whether the child can take calls. It is false once the
// child died or was killed; the caller then starts a new Process.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killedBy == ""
}

// ErrNotAlive is returned by Call on a child that has died or been killed.
var ErrNotAlive = errors.New("child is not alive")

// Call sends req and decodes the child's reply into reply (a pointer). If
// the child does not answer within timeout (0: no limit) it is killed and
// Call returns a *Death with CauseTimeout; if it dies or breaks the
// protocol, a *Death with the cause. If ctx ends first the child is killed
// too, and the error wraps ctx.Err(): the request was not at fault.
func (p *Process) Call(ctx context.Context, timeout time.Duration, req, reply any) error {
	return p.CallCPU(ctx, timeout, 0, req, reply)
}

// CallCPU is Call with a budget of CPU time as well (0: none): the child
// is killed once it has used more CPU time on the call than cpu, and the
// call returns a *Death with CauseTimeout and CPU set. The budget is read
// from /proc every cpuPoll, so it can be overrun by that much.
func (p *Process) CallCPU(ctx context.Context, timeout, cpu time.Duration, req, reply any) error {
	if !p.Alive() {
		return ErrNotAlive
	}
	if err := ctx.Err(); err != nil {
		// Not sent, so there is nothing to kill the child for.
		return err
	}
	if cpu > 0 {
		stop := p.watchCPU(cpu)
		defer stop()
	}
	return p.roundTrip(ctx, timeout, req, reply)
}

// cpuPoll is how often CallCPU reads the child's CPU time.
const cpuPoll = 50 * time.Millisecond

// watchCPU kills the child once it has used budget more CPU time than it
// had when watchCPU was called. It returns a function that stops watching.
func (p *Process) watchCPU(budget time.Duration) (stop func()) {
	start, ok := processCPU(p.Pid())
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(cpuPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if used, ok := processCPU(p.Pid()); ok && used-start > budget {
					p.kill("cpu")
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// processCPU returns the user and system time pid has used, from
// /proc/PID/stat (in clock ticks of 1/100 s on Linux).
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// Close asks the child to exit by closing its request pipe, kills it after
// a short grace and reaps it. It is safe to call more than once and after
// the child died.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.requests.Close()
		select {
		case <-p.exited:
		case <-time.After(closeGrace):
			p.kill("close")
			<-p.exited
		}
		p.replies.Close()
	})
	return nil
}

// roundTrip sends req then receives the reply while watching the deadline,
// ctx and the child's death. The pipes block, so the exchange runs in a
// goroutine that killing the child always ends.
func (p *Process) roundTrip(ctx context.Context, timeout time.Duration, req, reply any) error {
	done := make(chan error, 1)
	go func() {
		if err := writeFrame(p.requests, req); err != nil {
			done <- err
			return
		}
		err := readFrame(p.replies, p.maxReply, reply)
		var fe *frameError
		if errors.As(err, &fe) {
			// The child answered, but not with a reply the parent takes:
			// stop it before it sends more.
			p.mu.Lock()
			p.broken = true
			p.mu.Unlock()
			p.kill("protocol")
		}
		done <- err
	}()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		// A broken pipe or EOF means the child is gone or going. Anything
		// else is a broken protocol: end the child all the same.
		select {
		case <-p.exited:
		case <-time.After(closeGrace):
			p.kill("protocol")
			<-p.exited
		}
		return p.death(err)
	case <-deadline:
		p.kill("timeout")
		<-p.exited
		<-done
		return &Death{Cause: CauseTimeout, Detail: fmt.Sprintf("no answer within %v; killed", timeout)}
	case <-ctx.Done():
		p.kill("cancel")
		<-p.exited
		<-done
		return ctx.Err()
	}
}

// kill ends the child's process group with SIGKILL and records why, so the
// death is not mistaken for the kernel's OOM killer.
func (p *Process) kill(why string) {
	p.mu.Lock()
	if p.killedBy == "" {
		p.killedBy = why
	}
	p.mu.Unlock()
	select {
	case <-p.exited:
		// Reaped: the group ID may already belong to someone else.
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// death classifies the reaped child's death; ioErr is what the exchange
// failed with. Call it only after p.exited is closed.
func (p *Process) death(ioErr error) error {
	p.mu.Lock()
	killedBy, broken := p.killedBy, p.broken
	p.mu.Unlock()
	state := p.cmd.ProcessState
	oom, sig := p.stderr.evidence()
	status, _ := state.Sys().(syscall.WaitStatus)
	d := &Death{Cause: classify(status, killedBy, oom), Signal: sig, Detail: state.String(), CPU: killedBy == "cpu"}
	if broken {
		d.Cause = CauseProtocol
		var fe *frameError
		if errors.As(ioErr, &fe) {
			d.Detail = fe.Error() + "; " + d.Detail
		}
	}
	if killedBy != "" && killedBy != "timeout" && killedBy != "cpu" {
		d.Detail += " after the parent killed it (" + killedBy + ")"
	}
	if d.CPU {
		d.Detail = "used more CPU time than the call allowed; killed"
	}
	return d
}

// oomEvidence matches what a child's libraries print when an allocation
// fails: the Go runtime ("fatal error: runtime: out of memory"), glibc's
// strerror (ENOMEM), C++ (std::bad_alloc), MuPDF ("malloc (N bytes)
// failed"), Leptonica ("pix_malloc fail"), the race detector's runtime
// ("failed to allocate ... (errno: 12)") and [WatchRSS].
var oomEvidence = regexp.MustCompile(`out of memory|[Cc]annot allocate memory|bad_alloc|(?:m|c|re)alloc \([^)]*\) failed|malloc fail|failed to allocate`)

// classify names the cause of a child's death from its wait status, why
// the parent killed it ("" if it did not) and whether its stderr showed
// memory exhaustion. The parent's kill at a deadline is a timeout; then
// any sign of memory exhaustion is oom; a kill by the parent for another
// reason (a broken protocol, Close) is a crash; a SIGKILL the parent did
// not send is the kernel's OOM killer; anything else (a fatal signal, the
// Go runtime's report of one, an unexpected exit) is a crash.
func classify(status syscall.WaitStatus, killedBy string, oomSeen bool) Cause {
	switch {
	case killedBy == "timeout" || killedBy == "cpu":
		return CauseTimeout
	case oomSeen:
		return CauseOOM
	case killedBy != "":
		return CauseCrash
	case status.Signaled() && status.Signal() == syscall.SIGKILL:
		return CauseOOM
	}
	return CauseCrash
}

// goSignal finds the signal the Go runtime reports when it dies of one
// ("SIGSEGV: segmentation violation", "[signal SIGSEGV: ...]"); a fatal
// signal inside cgo code ends the process through the runtime, with exit
// status 2, not through the signal.
var goSignal = regexp.MustCompile(`(?m)(?:^|\[signal )(SIG[A-Z]+):`)

// runtimeSignal returns the signal name the Go runtime reported, or "". Only
// the name is taken from stderr, never free text.
func runtimeSignal(stderr []byte) string {
	m := goSignal.FindSubmatch(stderr)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// stderrLog receives the child's stderr. It keeps the last max bytes and
// watches the stream as it passes for evidence of how the child died: the Go
// runtime prints "fatal error: runtime: out of memory" first and then pages
// of goroutine traces, so the evidence is rarely in the tail.
type stderrLog struct {
	mu     sync.Mutex
	max    int
	tail   []byte
	oom    bool   // oomEvidence was seen
	signal string // the first signal the Go runtime reported
}

// scanOverlap is how much of the previous write is scanned again with the
// next, so that evidence split across two writes is still found.
const scanOverlap = 128

func (l *stderrLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	window := append(l.tail[max(0, len(l.tail)-scanOverlap):len(l.tail):len(l.tail)], p...)
	if oomEvidence.Match(window) {
		l.oom = true
	}
	if l.signal == "" {
		l.signal = runtimeSignal(window)
	}

	n := len(p)
	if len(p) >= l.max {
		l.tail = append(l.tail[:0], p[len(p)-l.max:]...)
		return n, nil
	}
	if over := len(l.tail) + len(p) - l.max; over > 0 {
		l.tail = append(l.tail[:0], l.tail[over:]...)
	}
	l.tail = append(l.tail, p...)
	return n, nil
}

// evidence returns what the stream showed: out-of-memory evidence and the
// signal the Go runtime reported ("" if none).
func (l *stderrLog) evidence() (oom bool, signal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.oom, l.signal
}

var _ io.Writer = (*stderrLog)(nil)
