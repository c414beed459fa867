package child

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cpuPoll is how often CallCPU reads the child's CPU time.
const cpuPoll = 50 * time.Millisecond

// watchCPU kills the child once it has used budget more CPU time than it
// had when watchCPU was called. It returns a function that stops watching.
func (p *Process) watchCPU(budget time.Duration) (stop func()) {
	start, ok := processCPU(p.Pid())
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(cpuPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if used, ok := processCPU(p.Pid()); ok && used-start > budget {
					p.kill("cpu")
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// processCPU returns the user and system time pid has used, from
// /proc/PID/stat (in clock ticks of 1/100 s on Linux).
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}
