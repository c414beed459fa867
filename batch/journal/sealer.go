package journal

import (
	"database/sql"
	"slices"
	"sync"
	"time"
)

// This file is the seal a handle runs behind its hot writes: admission
// (Admit, RejectDetail), claims (ClaimNext, Claim) and the ends of
// attempts (Finish, Fail, Release) return once they commit on
// PostgreSQL, their events pending, and one goroutine of the handle
// chains them (seal.go), one seal at a time, each for every event the
// handle committed meanwhile, after gathering them for sealGather. So a
// worker's next claim, and admission's next row, do not wait for the
// custody lock and its disk sync; the chain follows them by about
// sealGather and one seal.
//
// An event committed is the log's, chained or pending (CheckChain
// replays both); the reads of the log a caller may make right after its
// own write (Events, DocumentEvents, Root, CheckChain, SourceVersions)
// wait until the handle's seal has caught up with what it committed
// before (settle), and Close does too. Every other write chains what is
// pending before its own events (chainPending, and the transactions that
// hold the custody lock), or seals after its commit before it returns.

// sealGather is how long a handle's seal waits, once it has events to
// chain, before it seals: the commits of that time, this handle's and
// every other's, are chained by one hold of the custody lock, and the
// seals of the other handles find theirs chained and take no lock. No
// write waits for it; the chain follows the commits by about as much.
const sealGather = 2 * time.Millisecond

// sealer is a handle's seal behind its hot writes.
type sealer struct {
	mu      sync.Mutex
	caught  *sync.Cond // broadcast after each seal
	own     []int64    // the seqs committed, not yet sealed by this handle
	running bool
	// rounds counts the seals done; settle waits for one that began
	// after the seqs it waits for were committed.
	rounds int64
}

// hotTx is appendTx for the hot writes: on PostgreSQL the transaction's
// events are chained by the handle's seal after it returns (sealLater).
func (j *Journal) hotTx(fn func(*sql.Tx) error) error {
	if !j.pg {
		return j.appendTx(fn)
	}
	return j.appendTx(func(tx *sql.Tx) error {
		j.deferred.Store(tx, true)
		return fn(tx)
	})
}

// sealLater hands the seq of an event just committed to the handle's
// seal, starting it when it is not running.
func (j *Journal) sealLater(seq int64) {
	s := &j.sealer
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caught == nil {
		s.caught = sync.NewCond(&s.mu)
	}
	s.own = append(s.own, seq)
	if !s.running {
		s.running = true
		go j.sealLoop()
	}
}

// sealLoop seals until every seq handed to it is chained. A seal that
// fails (an interruption, a lost connection) leaves its events pending,
// for the next seal, this handle's or another's, to chain.
func (j *Journal) sealLoop() {
	s := &j.sealer
	time.Sleep(sealGather)
	s.mu.Lock()
	for len(s.own) > 0 {
		own := slices.Clone(s.own)
		s.own = s.own[:0]
		s.mu.Unlock()
		j.seal(own)
		s.mu.Lock()
		s.rounds++
		s.caught.Broadcast()
		if len(s.own) > 0 {
			s.mu.Unlock()
			time.Sleep(sealGather)
			s.mu.Lock()
		}
	}
	s.running = false
	s.caught.Broadcast()
	s.mu.Unlock()
}

// settle waits until the handle's seal has chained every event the
// handle committed before the call (or given them up to the next seal).
func (j *Journal) settle() {
	s := &j.sealer
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return
	}
	// The seqs handed over so far are in the seal under way or the
	// next one: two rounds from now at most.
	target := s.rounds + 1
	if len(s.own) > 0 {
		target++
	}
	for s.running && s.rounds < target {
		s.caught.Wait()
	}
}
