package child

import (
	"os"
	"syscall"
	"time"
)

// Backstops every parser child shares (admission's checks, export's PDF),
// behind the resident-memory cap and the CPU budget each sets for itself.
const (
	// WallFactor sets the wall-clock deadline, for a child that waits
	// rather than computes, at this many times its CPU budget.
	WallFactor = 4
	// AddressSpace is a child's address-space limit: an idle Go process
	// reserves about 1.2 GiB.
	AddressSpace = 4 << 30
	// MaxStack caps a child's goroutine stacks. pdfcpu recurses once per
	// level of nesting in a file; sound files nest a few dozen levels.
	MaxStack = 16 << 20
)

// A Fault is a misbehaviour a test asks a child to show, so that the
// supervision around it can be tested on the real child process.
type Fault string

// The faults a child can show.
const (
	FaultCrash Fault = "crash" // the child kills itself with SIGSEGV
	FaultHang  Fault = "hang"  // the child sleeps forever
	FaultAlloc Fault = "alloc" // the child allocates and touches memory without bound
)

// Misbehave shows fault f and never returns; it does nothing for any
// other value. Only test fault specs (environment variables the tests
// set) lead here.
func Misbehave(f Fault) {
	switch f {
	case FaultCrash:
		_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		hang() // the signal is asynchronous
	case FaultHang:
		hang()
	case FaultAlloc:
		for {
			b := make([]byte, 64<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			allocSink = append(allocSink, b)
		}
	}
}

// allocSink keeps the alloc fault's memory reachable, so the collector
// cannot hand it back.
var allocSink [][]byte

// hang sleeps forever. It sleeps rather than blocking on a channel so the
// Go runtime's deadlock detector does not end the process.
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}
