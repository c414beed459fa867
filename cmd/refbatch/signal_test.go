package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/standing"
)

// These tests interrupt commands where they wait: on a notification
// receiver, on the journal's lock another process holds, mid-way through
// a long verify or report. Each sends SIGINT once the command is at the
// wait, and asserts exit 3 (interrupted: run it again) within
// interruptBound of the signal, and that what the command leaves is
// consistent.

// interruptBound is how long a command may take to end after SIGINT: the
// 2 seconds refbatch help run promises, with slack for a loaded test machine (the tests log
// the time measured).
const interruptBound = 3 * time.Second

// interruptResult is what interrupt saw.
type interruptResult struct {
	code   int
	took   time.Duration // from the signal to the exit
	stderr string
}

// interrupt starts refbatch with args, waits until ready (given the
// process's pid) says it is at the wait, sends SIGINT and waits for the
// exit. A process still running 10 s after the signal is killed, so that
// a failing test fails fast.
func interrupt(t *testing.T, env []string, ready func(pid int) bool, args ...string) interruptResult {
	t.Helper()
	return interruptWith(t, env, &syncBuffer{}, ready, args...)
}

// interruptWith is interrupt with the process's stderr into stderr, which
// ready may read.
func interruptWith(t *testing.T, env []string, stderr *syncBuffer, ready func(pid int) bool, args ...string) interruptResult {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for !ready(cmd.Process.Pid) {
		select {
		case err := <-exited:
			t.Fatalf("refbatch %s ended before it reached the wait: %v\n%s", args[0], err, stderr)
		default:
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("refbatch %s did not reach the wait\n%s", args[0], stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	signalled := time.Now()
	cmd.Process.Signal(os.Interrupt)
	var err error
	select {
	case err = <-exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-exited
	}
	r := interruptResult{code: exitStatus(err), took: time.Since(signalled), stderr: stderr.String()}
	t.Logf("refbatch %s: exit %d, %v after SIGINT", args[0], r.code, r.took.Round(time.Millisecond))
	return r
}

// check asserts exit 3 within interruptBound, with the interruption said.
func (r interruptResult) check(t *testing.T) {
	t.Helper()
	if r.code != exitIncomplete || r.took > interruptBound {
		t.Errorf("after SIGINT: exit %d after %v, want exit %d within %v\n%s", r.code, r.took.Round(time.Millisecond), exitIncomplete, interruptBound, r.stderr)
	}
	if !strings.Contains(r.stderr, "interrupted") {
		t.Errorf("the interruption is not said:\n%s", r.stderr)
	}
}

// holdsOpen is a ready condition: the process has path open.
func holdsOpen(path string) func(pid int) bool {
	return func(pid int) bool {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && l == path {
				return true
			}
		}
		return false
	}
}

// fileExists is a ready condition: path exists.
func fileExists(path string) func(int) bool {
	return func(int) bool { _, err := os.Stat(path); return err == nil }
}

// rejectedBatch makes a finished batch in a new folder from a manifest of
// one row refused without OCR (consent maybe: bad_consent, which needs a
// person), and returns the folder, the
// manifest and the output folder.
func rejectedBatch(t *testing.T) (dir, manifest, out string) {
	t.Helper()
	dir = t.TempDir()
	manifest = filepath.Join(dir, "manifest.csv")
	os.WriteFile(manifest, []byte("source_id,participant_id,referral_date,consent,path\nR-0001,P-1,2024-01-01,maybe,a.pdf\n"), 0o600)
	out = filepath.Join(dir, "out")
	if r := refbatch(t, nil, "run", "--plaintext", "--quiet", "--out", out, manifest); r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	return dir, manifest, out
}

// TestInterruptNotifyWait: Ctrl-C while a run waits at its end for a
// receiver that does not answer ends the run at once, with exit 3; so
// does Ctrl-C mid-page, whose run then waits for that receiver a moment
// only. The receiver's command is killed, and the events stay in the
// outbox for refbatch notify.
func TestInterruptNotifyWait(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// rows makes the manifest in dir; ready says the run is where
		// the case interrupts it, given the pid file of the receiver
		// and the run's stderr.
		rows  func(t *testing.T, dir string) string
		ready func(pidFile string, stderr *syncBuffer) func(int) bool
		env   []string
	}{
		{"waiting for the receiver at the end",
			func(t *testing.T, dir string) string {
				m := filepath.Join(dir, "manifest.csv")
				os.WriteFile(m, []byte("source_id,participant_id,referral_date,consent,path\nR-0001,P-1,2024-01-01,maybe,a.pdf\n"), 0o600)
				return m
			},
			func(pidFile string, _ *syncBuffer) func(int) bool { return fileExists(pidFile) }, nil},
		{"mid-page, then a moment for the receiver",
			func(t *testing.T, dir string) string { return writeRows(t, dir, sampleGood(t, 1)) },
			func(_ string, stderr *syncBuffer) func(int) bool {
				return func(int) bool { return strings.Contains(stderr.String(), "document started") }
			}, []string{"REFBATCH_TEST_FAULTS=hang=*"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			manifest := c.rows(t, dir)
			out := filepath.Join(dir, "out")
			pidFile := filepath.Join(dir, "receiver.pid")
			hang := "echo $$ > " + pidFile + "; exec sleep 60"
			var stderr syncBuffer
			r := interruptWith(t, c.env, &stderr, c.ready(pidFile, &stderr),
				append(runArgs(out, "--root", "/", "--workers", "1", "--notify-cmd", hang), manifest)...)
			r.check(t)
			b, _ := os.ReadFile(pidFile)
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && syscall.Kill(pid, 0) == nil {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the receiver's command (pid %d) outlived the run", pid)
			}
			got := filepath.Join(dir, "delivered")
			n := refbatch(t, nil, "notify", "--out", out, "--notify-cmd", "cat >> "+got+"; echo >> "+got)
			events, _ := os.ReadFile(got)
			if n.code != 0 || !strings.Contains(string(events), "batch_") {
				t.Errorf("notify after the interrupted wait: exit %d, delivered:\n%s\n%s", n.code, events, n.stderr)
			}
			st := refbatch(t, nil, "status", "--out", out, "--json")
			var s standing.Status
			if st.code != 0 || json.Unmarshal([]byte(st.stdout), &s) != nil || s.LiveRuns != 0 || s.Running != 0 || len(s.Leases) != 0 {
				t.Errorf("status after the interrupted run: exit %d\n%s", st.code, st.stdout)
			}
		})
	}
}

// holdLock takes the write lock of the journal at path from another
// connection, as another process writing would, and holds it until the
// test ends.
func holdLock(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		db.Close()
	})
}

// TestInterruptLockWait: a command that waits for the journal's write
// lock, which another process holds, ends at SIGINT with exit 3, not
// after SQLite's busy timeout with exit 1; the journal is as it was.
func TestInterruptLockWait(t *testing.T) {
	t.Parallel()
	_, manifest, out := rejectedBatch(t)
	db := filepath.Join(out, "journal.db")
	cases := []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "--plaintext", "--quiet", "--out", out, manifest}},
		{"review accept", []string{"review", "accept", "--out", out, "--note", "n", "R-0001"}},
		{"notify", []string{"notify", "--out", out, "--notify-cmd", "cat > /dev/null"}},
	}
	func() {
		holdLock(t, db)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				// The command has the journal open; give it a moment to
				// reach the lock (nothing outside shows that wait).
				var at time.Time
				ready := func(pid int) bool {
					if at.IsZero() && holdsOpen(db)(pid) {
						at = time.Now()
					}
					return !at.IsZero() && time.Since(at) > 300*time.Millisecond
				}
				r := interrupt(t, nil, ready, c.args...)
				r.check(t)
				if !strings.Contains(r.stderr, "waiting for the journal's write lock") {
					t.Errorf("the wait is not named:\n%s", r.stderr)
				}
			})
		}
	}()
	if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 {
		t.Errorf("verify after the interrupted waits: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestInterruptVerify: an interrupted verify exits 3, never 1, which
// would say it found something. Its documents' sources are large (one
// sparse file, named by each), so that verify --sources is busy a while.
func TestInterruptVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o700)
	source := filepath.Join(dir, "big.pdf")
	f, err := os.Create(source)
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	f.Truncate(size)
	f.Close()
	j, err := journal.Open(filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		_, err := j.Admit(journal.Admission{Manifest: filepath.Join(dir, "manifest.csv"), Line: i + 2, SourceID: fmt.Sprintf("R-%04d", i),
			SHA256: strings.Repeat("0", 64), Path: source, Size: size, Pages: 1})
		if err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	r := interrupt(t, nil, holdsOpen(source), "verify", "--out", out, "--sources")
	r.check(t)
}

// TestInterruptReport: report stops at SIGINT, with exit 3, and leaves the
// reports as they were. Its batch is large: the rows of a small batch's
// journal copied 40000 times over by SQL (report does not check the
// custody log; verify does).
func TestInterruptReport(t *testing.T) {
	t.Parallel()
	_, manifest, out := rejectedBatch(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 40000)
		INSERT INTO rows(manifest, line, source_id, kind, reason, sha256, recorded_at)
		SELECT ?, i+2, printf('R-%06d', i+1), 'rejected', 'no_consent', '', 0 FROM n`, manifest)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, "report.json"))
	r := interrupt(t, nil, holdsOpen(filepath.Join(out, "journal.db")), "report", "--out", out)
	r.check(t)
	after, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if string(after) != string(before) {
		t.Errorf("the interrupted report changed report.json")
	}
	assertNoTemp(t, out, t.TempDir())
}

// TestExitAfterSignal: the one place errors become exit codes reads an
// interruption and a full disk as 3, whatever wraps them; after a signal,
// a failure is an interruption, a usage error stays one.
func TestExitAfterSignal(t *testing.T) {
	t.Parallel()
	lock := fmt.Errorf("journal: %w", fmt.Errorf("interrupted while waiting for the journal's write lock: %w", context.Canceled))
	cases := []struct {
		name     string
		err      error
		signaled bool
		code     int
		says     string
	}{
		{"context canceled", fmt.Errorf("verify: %w", context.Canceled), false, exitIncomplete, "interrupted: verify"},
		{"lock wait", lock, false, exitIncomplete, "error: interrupted while waiting for the journal's write lock"},
		{"a finding after the signal", &exitError{code: exitFailure}, true, exitIncomplete, "error: interrupted"},
		{"a failure after the signal", errors.New("signal: killed"), true, exitIncomplete, "interrupted: signal: killed"},
		{"a usage error after the signal", usageErr("bad flag", "see --help"), true, exitUsage, "bad flag"},
		{"a finding without a signal", &exitError{code: exitFailure}, false, exitFailure, ""},
		{"ENOSPC", fmt.Errorf("write key: %w", syscall.ENOSPC), false, exitIncomplete, "the disk is full: write key"},
		{"EDQUOT", &os.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, false, exitIncomplete, "the disk is full"},
		{"journal full", fmt.Errorf("journal: %w", journal.ErrDiskFull), false, exitIncomplete, "the disk is full"},
	}
	for _, c := range cases {
		err := c.err
		if c.signaled {
			err = afterSignal(err)
		}
		var stderr strings.Builder
		if code := exitCode(err, &stderr); code != c.code || !strings.Contains(stderr.String(), c.says) {
			t.Errorf("%s: exit %d, want %d saying %q\n%s", c.name, code, c.code, c.says, stderr.String())
		}
	}
}

// TestInterruptVerifyChain: verify stops at SIGINT in the checks that read
// the whole journal (SQLite's integrity check, the custody log's
// recomputation), with exit 3. Its journal's custody log is long: 600000
// events added by SQL (each a finding, had verify gone on).
func TestInterruptVerifyChain(t *testing.T) {
	t.Parallel()
	_, _, out := rejectedBatch(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 600000)
		INSERT INTO events(at, kind, data, hash) SELECT 0, 'meta_set', '{}', '' FROM n`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := interrupt(t, nil, holdsOpen(filepath.Join(out, "journal.db")), "verify", "--out", out)
	r.check(t)
}
