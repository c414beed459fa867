package child

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"
)

// Setup is the setup value of a child that parses hostile bytes: the
// limits it applies to itself (Apply) before it touches any input.
type Setup struct {
	AddressSpace int64 // RLIMIT_AS in bytes; 0: none
	MaxStack     int   // the goroutine stack cap in bytes; 0: Go's
}

// ParserSetup is the Setup of the parser children (admission's checks,
// export's PDF, the desk's view): the backstops every one of them shares.
var ParserSetup = Setup{AddressSpace: AddressSpace, MaxStack: MaxStack}

// Apply applies s to this process and starts watching its resident memory
// against the cap SetResidentCap or BeginCall set (none until then).
func (s Setup) Apply() error {
	if s.AddressSpace > 0 {
		if err := LimitAddressSpace(s.AddressSpace); err != nil {
			return err
		}
	}
	if s.MaxStack > 0 {
		LimitStack(s.MaxStack)
	}
	WatchRSS(10*time.Millisecond, residentCap)
	return nil
}

// residentLimit is the cap Apply's watchdog enforces; 0 is none.
var residentLimit struct {
	sync.Mutex
	n int64
}

func residentCap() int64 {
	residentLimit.Lock()
	defer residentLimit.Unlock()
	return residentLimit.n
}

// SetResidentCap sets the resident memory, in bytes, over which the
// watchdog Apply started ends the child (0: no cap).
func SetResidentCap(n int64) {
	residentLimit.Lock()
	residentLimit.n = n
	residentLimit.Unlock()
}

// BeginCall caps the resident memory of the call about to be served at
// memory bytes. The runtime collects garbage harder as the heap nears the
// cap, so that garbage does not count against it.
func BeginCall(memory int64) {
	SetResidentCap(memory)
	debug.SetMemoryLimit(memory / 4 * 3)
}

// EndCall hands memory back to the system after a call that left a large
// heap, so that the next call's cap measures what that call needs, not
// what this one left behind.
func EndCall() {
	if ResidentBytes() > 64<<20 {
		debug.FreeOSMemory()
	}
}

// ExitCode reports the error ServeMain returned on stderr, after name
// (for example "refbatch worker"), and returns the child's exit code: 0
// when the parent closed the request pipe, 1 on a failure, 2 when the
// mode was started by hand.
func ExitCode(name string, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	if errors.Is(err, ErrNotChild) {
		return 2
	}
	return 1
}
