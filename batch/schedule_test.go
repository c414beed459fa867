package batch

import "testing"

// TestSignalNotifyOne: a document admitted wakes one idle worker, not
// every one; a wake-up no worker was waiting for is kept for the next
// (up to one per worker), and notify still wakes them all.
func TestSignalNotifyOne(t *testing.T) {
	var s signal
	s.setWaiters(3)
	ready := func() int {
		n := 0
		for {
			select {
			case <-s.one():
				n++
			default:
				return n
			}
		}
	}
	s.notifyOne()
	if n := ready(); n != 1 {
		t.Errorf("one notifyOne woke %d waiters, want 1", n)
	}
	for range 5 {
		s.notifyOne()
	}
	if n := ready(); n != 3 {
		t.Errorf("five notifyOne with three waiters kept %d wake-ups, want 3", n)
	}
	all := s.wait()
	s.notifyOne()
	select {
	case <-all:
		t.Error("notifyOne woke the waiters of notify")
	default:
	}
	s.notify()
	select {
	case <-all:
	default:
		t.Error("notify did not wake the waiters")
	}
}
