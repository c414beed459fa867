package journaltest

import (
	"syscall"
	"time"
)

// sleepFor sleeps for d in the calling thread (nanosleep), whose timer is
// finer than the runtime's.
func sleepFor(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Nanosleep(&ts, nil)
}
