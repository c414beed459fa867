package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal/journaltest"
)

// SoakEnv, set to a duration ("10m"), runs TestKillSoak for that long.
const SoakEnv = "REFBATCH_TEST_SOAK"

// TestKillSoak is the kill loop of many machines on PostgreSQL, for as
// long as SoakEnv says: a `run` and three `join`s share a batch of tiny
// documents, and one of the four, picked at random, is killed (its whole
// process tree, as a machine losing power) every 0.3 to 1.5 s and started
// again at once. A batch is done when its `run` ends by itself; then a
// last `run` finds nothing left, and every row must be as an
// uninterrupted run leaves it, every document done by exactly one
// attempt, with one artifact each, and verify clean. Batches follow one
// another, each in a schema of its own, until the time is up.
func TestKillSoak(t *testing.T) {
	limit, err := time.ParseDuration(os.Getenv(SoakEnv))
	if err != nil || limit <= 0 {
		t.Skip(SoakEnv + " is not set to a duration: the soak does not run")
	}
	end := time.Now().Add(limit)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 52))
	kills, batches := 0, 0
	for time.Now().Before(end) {
		batches++
		t.Run("batch", func(t *testing.T) { kills += soakBatch(t, rng, end) })
		if t.Failed() {
			break
		}
	}
	t.Logf("soak: %d batches, %d kills in %s", batches, kills, time.Since(end.Add(-limit)).Round(time.Second))
}

// soakBatch is one batch of the soak; it returns the kills it made.
func soakBatch(t *testing.T, rng *rand.Rand, end time.Time) int {
	url := journaltest.Postgres(t)
	dir := t.TempDir()
	manifest := bigManifest(t, dir, 40)
	want := bigManifestStates(t, manifest)
	out := filepath.Join(dir, "out")
	env := []string{"REFBATCH_TEST_FAULTS=slow300ms=*", "TMPDIR=" + dir}
	args := [][]string{append(append([]string{"run", "--plaintext", "--journal", url, "--out", out, "--root", "/", "--workers", "2"},
		tinyFlags...), manifest)}
	for range 3 {
		args = append(args, []string{"join", "--journal", url, "--workers", "1"})
	}
	type proc struct {
		cmd    *exec.Cmd
		stderr *bytes.Buffer
		done   chan error
	}
	procs := make([]*proc, len(args))
	startProc := func(i int) {
		cmd, stderr := start(t, env, args[i]...)
		p := &proc{cmd, stderr, make(chan error, 1)}
		go func() { p.done <- cmd.Wait() }()
		procs[i] = p
	}
	startProc(0)
	waitFor(t, 60*time.Second, func() bool { return strings.Contains(procs[0].stderr.String(), "row admitted") })
	for i := 1; i < len(args); i++ {
		startProc(i)
	}
	kills := 0
	ended := map[int]bool{}
	for len(ended) < len(procs) {
		tick := time.Duration(300+rng.IntN(1200)) * time.Millisecond
		if ended[0] {
			tick = 200 * time.Millisecond
		}
		time.Sleep(tick)
		for i, p := range procs {
			select {
			case err := <-p.done:
				code := exitStatus(err)
				if code == 1 && strings.Contains(p.stderr.String(), "starting an OCR engine") && !ended[0] {
					// On a machine loaded past its cores an engine may not
					// start within its 30 s: the process stops before any
					// work, as a machine that fails to boot. Start it again.
					t.Logf("%s could not start an OCR engine: started again", args[i][0])
					startProc(i)
					continue
				}
				p.done <- err
				if code != exitNeedsPerson && !ended[i] {
					t.Errorf("%s ended with exit %d\n%s", args[i][0], code, p.stderr)
				}
				ended[i] = true
			default:
			}
		}
		// Kill while the run goes on, and until the soak's time is up.
		if ended[0] || time.Now().After(end) {
			continue
		}
		i := rng.IntN(len(procs))
		if ended[i] {
			continue
		}
		syscall.Kill(-procs[i].cmd.Process.Pid, syscall.SIGKILL)
		<-procs[i].done
		kills++
		startProc(i)
	}
	if r := refbatch(t, env, args[0]...); r.code != exitNeedsPerson {
		t.Fatalf("last run: exit %d\n%s", r.code, r.stderr)
	}
	checkSoak(t, url, out, want)
	t.Logf("batch of %d rows: %d kills", len(want), kills)
	return kills
}

// checkSoak fails unless the batch at url and out is as an uninterrupted
// run leaves it (want), every document done once, and verify clean.
func checkSoak(t *testing.T, url, out string, want map[string]string) {
	t.Helper()
	got := rowStates(t, out)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s after the soak, %s uninterrupted (lost)", id, got[id], w)
		}
	}
	finishedOnce(t, url, out)
	if r := refbatch(t, nil, "verify", "--journal", url); r.code != 0 {
		t.Errorf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
