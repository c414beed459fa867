package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// pollEvery is how often the memory of a measured process tree is read.
const pollEvery = 100 * time.Millisecond

// clockTicks is USER_HZ, the unit of the CPU times in /proc/PID/stat. It is
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// usage is what one command and the processes it started cost.
type usage struct {
	Wall time.Duration
	// User and Sys come from wait4: the process and every descendant it
	// waited for.
	User, Sys time.Duration
	// MaxRSS is wait4's ru_maxrss: the largest peak resident set of the
	// process and the descendants it waited for.
	MaxRSS int64
	// PeakParentRSS is the process's own VmHWM, PeakChildRSS the largest
	// VmHWM any descendant showed, both polled every pollEvery (a peak in
	// the last moments of a short-lived child can be missed). PeakTreeRSS
	// is the largest sum of the resident sets (VmRSS) of the process and
	// all its descendants at one poll: the memory the whole run held.
	PeakParentRSS, PeakChildRSS, PeakTreeRSS int64
	// ParentCPU is the process's own user+system time at the last poll:
	// what the parent spent, its children excluded.
	ParentCPU time.Duration
	// BusyCPU is the CPU time the whole machine spent (every process,
	// from /proc/stat) while the command ran: BusyCPU - CPU() is what
	// other work took from the measurement.
	BusyCPU  time.Duration
	ExitCode int
	// Stderr is the end of what the command wrote to stderr.
	Stderr string
}

// CPU is user plus system time.
func (u usage) CPU() time.Duration { return u.User + u.Sys }

// measure runs cmd to its end and returns what it cost. A non-zero exit is
// not an error: it is in ExitCode, with the end of stderr.
func measure(ctx context.Context, cmd *exec.Cmd, poll bool) (usage, error) {
	every := time.Duration(0)
	if poll {
		every = pollEvery
	}
	return measureEvery(ctx, cmd, every)
}

// measureEvery is measure, polling the process tree every interval (0:
// not at all).
func measureEvery(ctx context.Context, cmd *exec.Cmd, every time.Duration) (usage, error) {
	var u usage
	var stderr tailBuffer
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	busy0, _ := machineBusy()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return u, fmt.Errorf("starting %s: %w", filepath.Base(cmd.Path), err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	if every > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(every)
			defer t.Stop()
			pid := cmd.Process.Pid
			for {
				sampleTree(pid, &u)
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
	}
	err := cmd.Wait()
	u.Wall = time.Since(start)
	if busy1, ok := machineBusy(); ok {
		u.BusyCPU = busy1 - busy0
	}
	close(stop)
	wg.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return u, fmt.Errorf("running %s: %w", filepath.Base(cmd.Path), err)
	}
	if ctx.Err() != nil {
		return u, ctx.Err()
	}
	st := cmd.ProcessState
	u.ExitCode = st.ExitCode()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		u.User = time.Duration(ru.Utime.Nano())
		u.Sys = time.Duration(ru.Stime.Nano())
		u.MaxRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	u.Stderr = stderr.String()
	return u, nil
}

// machineBusy returns the CPU time every core of the machine has spent
// busy since boot: the first line of /proc/stat less idle and iowait.
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		// user nice system idle iowait irq softirq steal guest guest_nice;
		// guest time is already counted in user.
		if i == 3 || i == 4 || i >= 8 {
			continue
		}
		busy += n
	}
	return time.Duration(busy) * time.Second / clockTicks, true
}

// sampleTree reads the peak resident set of pid and of its descendants, and
// pid's own CPU time, into u.
func sampleTree(pid int, u *usage) {
	if hwm, ok := vmHWM(pid); ok {
		u.PeakParentRSS = max(u.PeakParentRSS, hwm)
	}
	if cpu, ok := ownCPU(pid); ok {
		u.ParentCPU = cpu
	}
	tree, _ := statusBytes(pid, "VmRSS:")
	for _, c := range descendants(pid) {
		if hwm, ok := vmHWM(c); ok {
			u.PeakChildRSS = max(u.PeakChildRSS, hwm)
		}
		if rss, ok := statusBytes(c, "VmRSS:"); ok {
			tree += rss
		}
	}
	u.PeakTreeRSS = max(u.PeakTreeRSS, tree)
}

// vmHWM returns the peak resident set of pid in bytes.
func vmHWM(pid int) (int64, bool) { return statusBytes(pid, "VmHWM:") }

// statusBytes reads a field in kB of /proc/PID/status, in bytes.
func statusBytes(pid int, field string) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return 0, false
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// statFields returns the fields of /proc/PID/stat after the command name
// (which may hold spaces and parentheses): index 0 is the state, 1 the ppid.
func statFields(pid int) ([]string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// ownCPU returns the user+system time pid itself has used, its children
// excluded.
func ownCPU(pid int) (time.Duration, bool) {
	f, ok := statFields(pid)
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// descendants lists the processes below pid, by scanning /proc for parent
// links.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, ok := statFields(p)
		if !ok || len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// tailBuffer keeps the last few KiB written to it: enough to say why a
// command failed without holding a chatty log whole.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > tailMax {
		b = b[len(b)-tailMax:]
	}
	return string(b)
}

// finished reports whether refbatch run's exit code says the batch
// finished: 0 (every row done or a duplicate) or 4 (rows in review or
// rejected, which the benchmark corpora hold on purpose).
func finished(code int) bool { return code == 0 || code == 4 }
