package ocr

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
)

// FaultsEnv names the environment variable that injects faults into worker
// children. It is for tests only: the child reads it, the parent passes it
// through like any other variable, and production never sets it.
//
// The value is a list of kind=key entries separated by semicolons. A key
// names documents by their bytes: the SHA-256 of the PDF [Worker.Open] was
// given, in lowercase hex, or its first 8 digits or more (a test knows its
// files' hashes, and admission records them):
//
//	crash=3f2a9c01       the child kills itself with SIGSEGV on the document's first page
//	hang=3f2a9c01        every page of the document blocks forever
//	alloc=3f2a9c01       a page allocates and touches memory without bound, until
//	                     the child's memory limit (or the kernel) kills it
//	transient2=3f2a9c01  the first 2 Open calls of the document in this child fail
//	                     with CauseTransient, later ones succeed
//	slow500ms=3f2a9c01   every page of the document sleeps 500ms first
//	hugereply=3f2a9c01   every page's answer is padded past the size the parent
//	                     accepts, as a compromised engine might send
//
// The key * matches every document.
//
// A malformed value makes the child fail to start, so a typo in a test is
// loud. A child with no faults does not hash the documents it opens.
const FaultsEnv = "REFBATCH_TEST_FAULTS"

// minFaultKey is the shortest hash prefix a fault key may be: shorter
// ones would match documents by accident.
const minFaultKey = 8

// faults is the parsed FaultsEnv, keyed by hash prefix or *.
type faults struct {
	crash     map[string]bool
	hang      map[string]bool
	alloc     map[string]bool
	transient map[string]int // failures left
	slow      map[string]time.Duration
	huge      map[string]bool
	none      bool // no entry at all
}

func parseFaults(s string) (*faults, error) {
	f := &faults{
		crash:     map[string]bool{},
		hang:      map[string]bool{},
		alloc:     map[string]bool{},
		transient: map[string]int{},
		slow:      map[string]time.Duration{},
		huge:      map[string]bool{},
		none:      true,
	}
	for entry := range strings.SplitSeq(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		f.none = false
		kind, key, ok := strings.Cut(entry, "=")
		if !ok || !validFaultKey(key) {
			return nil, fmt.Errorf("parsing %s entry %q: want kind=key, the key * or %d to 64 lowercase hex digits of the document's SHA-256", FaultsEnv, entry, minFaultKey)
		}
		switch {
		case kind == "crash":
			f.crash[key] = true
		case kind == "hang":
			f.hang[key] = true
		case kind == "alloc":
			f.alloc[key] = true
		case kind == "hugereply":
			f.huge[key] = true
		case strings.HasPrefix(kind, "transient"):
			n, err := strconv.Atoi(strings.TrimPrefix(kind, "transient"))
			if err != nil || n < 1 {
				return nil, fmt.Errorf("parsing %s entry %q: want transientN with N >= 1", FaultsEnv, entry)
			}
			f.transient[key] = n
		case strings.HasPrefix(kind, "slow"):
			d, err := time.ParseDuration(strings.TrimPrefix(kind, "slow"))
			if err != nil || d < 0 {
				return nil, fmt.Errorf("parsing %s entry %q: want slowD with a duration such as 500ms", FaultsEnv, entry)
			}
			f.slow[key] = d
		default:
			return nil, fmt.Errorf("parsing %s entry %q: unknown fault %q", FaultsEnv, entry, kind)
		}
	}
	return f, nil
}

func validFaultKey(key string) bool {
	if key == "*" {
		return true
	}
	if len(key) < minFaultKey || len(key) > 2*sha256.Size {
		return false
	}
	for _, c := range key {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// key returns what the faults know a document by: the hex SHA-256 of its
// bytes, or "" when there are no faults to look up.
func (f *faults) key(pdf []byte) string {
	if f.none {
		return ""
	}
	sum := sha256.Sum256(pdf)
	return hex.EncodeToString(sum[:])
}

// openFails reports whether this Open of the document with hash sum must
// fail as transient, and counts it.
func (f *faults) openFails(sum string) bool {
	for k, left := range f.transient {
		if left > 0 && k != "*" && strings.HasPrefix(sum, k) {
			f.transient[k]--
			return true
		}
	}
	if f.transient["*"] > 0 {
		f.transient["*"]--
		return true
	}
	return false
}

// hugeReply reports whether the answers for the document with hash sum
// must be padded past the reply cap.
func (f *faults) hugeReply(sum string) bool {
	v, _ := has(f.huge, sum)
	return v
}

// has returns the value of the first key of m that is a prefix of sum, or
// of the wildcard.
func has[V comparable](m map[string]V, sum string) (V, bool) {
	for k, v := range m {
		if k != "*" && sum != "" && strings.HasPrefix(sum, k) {
			return v, true
		}
	}
	v, ok := m["*"]
	return v, ok
}

// beforePage applies the page faults for the document with hash sum.
// crash, hang and alloc do not return.
func (f *faults) beforePage(sum string) {
	if d, _ := has(f.slow, sum); d > 0 {
		time.Sleep(d)
	}
	crash, _ := has(f.crash, sum)
	hangs, _ := has(f.hang, sum)
	alloc, _ := has(f.alloc, sum)
	switch {
	case crash:
		child.Misbehave(child.FaultCrash)
	case hangs:
		child.Misbehave(child.FaultHang)
	case alloc:
		child.Misbehave(child.FaultAlloc)
	}
}
