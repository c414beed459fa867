//go:build !linux

package journaltest

import "time"

// sleepFor sleeps for d.
func sleepFor(d time.Duration) { time.Sleep(d) }
