package ocr

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FaultsEnv names the environment variable that injects faults into worker
// children. It is for tests only: the child reads it, the parent passes it
// through like any other variable, and production never sets it.
//
// The value is a list of kind=tag entries separated by semicolons, where tag
// is the label given to [Worker.Open] (a source ID):
//
//	crash=R-3       the child kills itself with SIGSEGV on the document's first page
//	hang=R-4        every page of the document blocks forever
//	alloc=R-5       a page allocates and touches memory without bound, until
//	                the child's memory limit (or the kernel) kills it
//	transient2=R-6  the first 2 Open calls with that tag in this child fail
//	                with CauseTransient, later ones succeed
//	slow500ms=R-7   every page of the document sleeps 500ms first
//	hugereply=R-8   every page's answer is padded past the size the parent
//	                accepts, as a compromised engine might send
//
// The tag * matches every document.
//
// A malformed value makes the child fail to start, so a typo in a test is
// loud.
const FaultsEnv = "REFBATCH_TEST_FAULTS"

// faults is the parsed FaultsEnv, keyed by tag.
type faults struct {
	crash     map[string]bool
	hang      map[string]bool
	alloc     map[string]bool
	transient map[string]int // failures left
	slow      map[string]time.Duration
	huge      map[string]bool
}

func parseFaults(s string) (*faults, error) {
	f := &faults{
		crash:     map[string]bool{},
		hang:      map[string]bool{},
		alloc:     map[string]bool{},
		transient: map[string]int{},
		slow:      map[string]time.Duration{},
		huge:      map[string]bool{},
	}
	for entry := range strings.SplitSeq(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		kind, tag, ok := strings.Cut(entry, "=")
		if !ok || tag == "" {
			return nil, fmt.Errorf("parsing %s entry %q: want kind=tag", FaultsEnv, entry)
		}
		switch {
		case kind == "crash":
			f.crash[tag] = true
		case kind == "hang":
			f.hang[tag] = true
		case kind == "alloc":
			f.alloc[tag] = true
		case kind == "hugereply":
			f.huge[tag] = true
		case strings.HasPrefix(kind, "transient"):
			n, err := strconv.Atoi(strings.TrimPrefix(kind, "transient"))
			if err != nil || n < 1 {
				return nil, fmt.Errorf("parsing %s entry %q: want transientN with N >= 1", FaultsEnv, entry)
			}
			f.transient[tag] = n
		case strings.HasPrefix(kind, "slow"):
			d, err := time.ParseDuration(strings.TrimPrefix(kind, "slow"))
			if err != nil || d < 0 {
				return nil, fmt.Errorf("parsing %s entry %q: want slowD with a duration such as 500ms", FaultsEnv, entry)
			}
			f.slow[tag] = d
		default:
			return nil, fmt.Errorf("parsing %s entry %q: unknown fault %q", FaultsEnv, entry, kind)
		}
	}
	return f, nil
}

// openFails reports whether this Open of tag must fail as transient, and
// counts it.
func (f *faults) openFails(tag string) bool {
	for _, t := range []string{tag, "*"} {
		if f.transient[t] > 0 {
			f.transient[t]--
			return true
		}
	}
	return false
}

// hugeReply reports whether the answers for tag must be padded past the
// reply cap.
func (f *faults) hugeReply(tag string) bool {
	v, _ := has(f.huge, tag)
	return v
}

// has reports whether the set holds tag or the wildcard.
func has[V comparable](m map[string]V, tag string) (V, bool) {
	if v, ok := m[tag]; ok {
		return v, true
	}
	v, ok := m["*"]
	return v, ok
}

// allocSink keeps the alloc fault's memory reachable so the collector
// cannot hand it back.
var allocSink [][]byte

// beforePage applies the page faults for tag. crash, hang and alloc do not
// return.
func (f *faults) beforePage(tag string) {
	if d, _ := has(f.slow, tag); d > 0 {
		time.Sleep(d)
	}
	crash, _ := has(f.crash, tag)
	hangs, _ := has(f.hang, tag)
	alloc, _ := has(f.alloc, tag)
	switch {
	case crash:
		_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		hang() // the signal is asynchronous
	case hangs:
		hang()
	case alloc:
		for {
			b := make([]byte, 64<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			allocSink = append(allocSink, b)
		}
	}
}

// hang blocks forever. It sleeps rather than blocking on a channel so the Go
// runtime's deadlock detector does not end the process.
func hang() {
	for {
		time.Sleep(time.Hour)
	}
}
