package child

import (
	"errors"
	"io"
	"regexp"
	"sync"
	"syscall"
)

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
