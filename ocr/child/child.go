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
// # Pools
//
// A [Pool] keeps interchangeable children of one [Command]: it starts
// them when needed, reuses them and describes the deaths of a call it
// gave up on one way ([Failure]). Callers that send self-contained
// requests (admission's checks, export's PDF) call any free child, and a
// call is tried once more in a new child after a crash or a wall-clock
// timeout. A caller whose child holds state between calls (the OCR
// worker's Tesseract handle and open document) leases one child
// ([Lease]) and is told of its death instead, since the state died with
// it. The desk's view uses a [Process] directly (see package view).
//
// # The child side
//
// The child's main calls [Serve] (or [ServeMain] for fds 3 and 4), which
// reads the setup, calls the init function and then a handler per
// request. [LimitAddressSpace], [LimitStack] and [WatchRSS] are the
// resource limits a child applies to itself before it touches any input;
// a parser child applies them with [Setup.Apply] and caps each request's
// resident memory with [BeginCall]. [ExitCode] turns what ServeMain
// returned into the child's exit code.
package child

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// Command is how to start a child: the refbatch binary re-executed in one
// of its hidden modes. Every configuration that starts children carries
// one.
type Command struct {
	Path string   // the binary, as os.Executable gives it
	Args []string // the hidden mode, for example {"__worker"}
	Env  []string // added to the inherited environment
}

// Config says how to start a child.
type Config struct {
	Command
	// StartTimeout bounds Start, hello included; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// MaxReply is the largest reply frame the parent accepts, in bytes;
	// 0 means DefaultMaxReply. A larger one kills the child, which ends
	// in a *Death with CauseProtocol.
	MaxReply int64
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
	greeting helloFrame    // the child's answer to its setup

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

	err = p.roundTrip(ctx, cfg.StartTimeout, setup, &p.greeting)
	if err == nil {
		err = p.hello(hello)
	}
	if err != nil {
		_ = p.Close()
		return nil, fmt.Errorf("starting child: %w", err)
	}
	return p, nil
}

// hello decodes the hello the child answered its setup with into v (a
// pointer, or nil).
func (p *Process) hello(v any) error { return decodeHello(p.greeting, v) }

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
