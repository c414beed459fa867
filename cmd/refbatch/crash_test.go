package main

import (
	"bytes"
	"errors"
	"fmt"
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

// These tests do the damage for real: SIGKILL of the whole process group,
// two processes on one output folder, a disk that fills mid-batch.

// bigManifest writes a manifest of n good rows, each a tiny one-page
// referral of its own (tinyReferral: read in a fraction of a second, so
// the tests' time goes to what they test, not to OCR), plus four of the
// sample's bad rows, into dir; paths are absolute.
func bigManifest(t *testing.T, dir string, n int) string {
	t.Helper()
	sample := sampleDir(t)
	expected := map[string]string{}
	for _, r := range readCSV(t, filepath.Join(sample, "expected.csv")) {
		if _, ok := expected[r["source_id"]]; !ok {
			expected[r["source_id"]] = r["state"]
		}
	}
	var bad []map[string]string
	for _, r := range readCSV(t, filepath.Join(sample, "manifest.csv")) {
		r["path"] = filepath.Join(sample, r["path"])
		if expected[r["source_id"]] != "done" {
			bad = append(bad, r)
		}
	}
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("source_id,participant_id,referral_date,consent,path,sha256\n")
	for i := 0; i < n; i++ {
		g := tinyRow(t, docs, fmt.Sprintf("K-%03d", i), 1000+i)
		fmt.Fprintf(&b, "%s,%s,%s,yes,%s,\n", g[0], g[1], g[2], g[3])
	}
	for _, r := range bad[:min(4, len(bad))] {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s\n", r["source_id"], r["participant_id"], r["referral_date"], r["consent"], r["path"], r["sha256"])
	}
	p := filepath.Join(dir, "manifest.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// bigManifestStates is what an uninterrupted run of a bigManifest ends
// with, per source_id: its tiny documents done, its bad rows as the
// sample's expected.csv says (rejected at admission).
func bigManifestStates(t *testing.T, manifest string) map[string]string {
	t.Helper()
	expected := map[string]string{}
	for _, r := range readCSV(t, filepath.Join(sampleDir(t), "expected.csv")) {
		if _, ok := expected[r["source_id"]]; !ok {
			expected[r["source_id"]] = r["state"] + "/" + r["reason"]
		}
	}
	want := map[string]string{}
	for _, r := range readCSV(t, manifest) {
		if strings.HasPrefix(r["source_id"], "K-") {
			want[r["source_id"]] = "done/"
		} else {
			want[r["source_id"]] = expected[r["source_id"]]
		}
	}
	return want
}

// rowStates maps source_id to state/reason for the first row of each.
func rowStates(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, r := range readReport(t, out).Rows {
		if _, ok := m[r.SourceID]; !ok {
			m[r.SourceID] = string(r.State) + "/" + string(r.Reason)
		}
	}
	return m
}

// start runs refbatch in its own process group, with a private TMPDIR.
func start(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	return startCommand(t, env, binary, args...)
}

// startCommand is start for any command: one that execs refbatch, such
// as a command that runs it in a namespace.
func startCommand(t *testing.T, env []string, name string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// on is where a test batch is on one of the journal's backends: its
// output folder, and its journal, journal.db in it or a PostgreSQL schema
// of the test's own.
type on struct{ out, journal string }

func onBackend(t *testing.T, be journaltest.Backend, out string) on {
	return on{out, be.Shared(t)}
}

// args are the flags that name the batch: --out, and --journal for
// PostgreSQL.
func (b on) args() []string {
	if b.journal == "" {
		return []string{"--out", b.out}
	}
	return []string{"--out", b.out, "--journal", b.journal}
}

// run is runArgs for the batch, with tinyFlags: its documents are tiny
// referrals.
func (b on) run(extra ...string) []string {
	args := append([]string{"run", "--plaintext"}, b.args()...)
	return append(append(args, tinyFlags...), extra...)
}

// journalLocation is where journal.Open finds the batch's journal.
func (b on) journalLocation() string {
	if b.journal == "" {
		return filepath.Join(b.out, "journal.db")
	}
	return b.journal
}

func TestKillLoop(t *testing.T) {
	t.Parallel() // it waits on processes more than it computes
	if testing.Short() {
		t.Skip("kill loop is long")
	}
	journaltest.Each(t, testKillLoop)
}

func testKillLoop(t *testing.T, be journaltest.Backend) {
	dir := t.TempDir()
	// 32 tiny documents, each page slowed to 400ms on two workers: a run
	// killed within 1.2s finishes four documents at most, and two at most
	// in practice, its start taking a few tenths of a second (the ten
	// killed runs finish 0 to 14 in all, most of them in the first four,
	// whose kills the seeded delays put late), so ten kills do not finish
	// the batch, and some land between a document's end and the next
	// one's start, where the journal and the artifacts are written.
	// (Pages of 600ms made 24 documents enough, but left most loaded
	// runs killed before any document ended.)
	manifest := bigManifest(t, dir, 32)
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o700)
	env := []string{"TMPDIR=" + tmp}
	out := filepath.Join(dir, "out")
	b := onBackend(t, be, out) // skips before any work without the backend
	// What an uninterrupted run ends with: bigManifest's documents are
	// done, its bad rows rejected as the sample's expected.csv says.
	want := bigManifestStates(t, manifest)

	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	var finishedPerRun []int // documents each killed run finished
	for kills < 10 {
		cmd, stderr := start(t, append(env, "REFBATCH_TEST_FAULTS=slow400ms=*"), b.run("--root", "/", "--workers", "2", manifest)...)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-time.After(time.Duration(300+rng.IntN(900)) * time.Millisecond):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			kills++
			finishedPerRun = append(finishedPerRun, strings.Count(stderr.String(), "document finished"))
		case err := <-done:
			t.Fatalf("run finished before kill %d (%v): make the batch longer", kills+1, err)
		}
	}
	r := refbatch(t, env, b.run("--root", "/", manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("final run: exit %d\n%s", r.code, r.stderr)
	}
	got := rowStates(t, out)
	lost := 0
	for id, w := range want {
		if got[id] != w {
			lost++
			t.Errorf("%s: %s after the kill loop, %s uninterrupted", id, got[id], w)
		}
	}
	duplicated := finishedOnce(t, b.journalLocation(), out)
	leftovers := assertNoTemp(t, out, tmp)
	t.Logf("kill loop: %d kills (documents finished by each: %v), %d rows, lost %d, duplicated %d, leftover files %d",
		kills, finishedPerRun, len(want), lost, duplicated, leftovers)
}

// assertNoTemp fails on any temp file under out and on anything in tmp.
func assertNoTemp(t *testing.T, out, tmp string) int {
	t.Helper()
	n := 0
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(info.Name(), ".tmp-") {
			n++
			t.Errorf("temp file left: %s", p)
		}
		return nil
	})
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		n++
		t.Errorf("left in the temp folder: %s", e.Name())
	}
	return n
}

func TestTwoProcesses(t *testing.T) {
	t.Parallel() // it waits on processes more than it computes
	journaltest.Each(t, testTwoProcesses)
}

func testTwoProcesses(t *testing.T, be journaltest.Backend) {
	dir := t.TempDir()
	manifest := bigManifest(t, dir, 12)
	out := filepath.Join(dir, "out")
	on := onBackend(t, be, out)
	// Slowed pages keep either process from taking every document
	// before the other has started.
	env := []string{"REFBATCH_TEST_FAULTS=slow300ms=*"}
	a, errA := start(t, env, on.run("--root", "/", "--workers", "1", manifest)...)
	b, errB := start(t, env, on.run("--root", "/", "--workers", "1", manifest)...)
	for i, c := range []*exec.Cmd{a, b} {
		if err := c.Wait(); exitStatus(err) != exitNeedsPerson {
			t.Errorf("process %d: %v\n%s", i, err, []*bytes.Buffer{errA, errB}[i])
		}
	}
	counts := successfulAttemptsIn(t, on.journalLocation())
	for doc, n := range counts {
		if n != 1 {
			t.Errorf("document %s OCR'd %d times", doc, n)
		}
	}
	started := func(s string) int { return strings.Count(s, "document started") }
	t.Logf("process A started %d documents, B %d; %d documents each OCR'd once", started(errA.String()), started(errB.String()), len(counts))
	if started(errA.String()) == 0 || started(errB.String()) == 0 {
		t.Errorf("one process did no work: the two did not share it")
	}
}

// smallDisk mounts a tmpfs of size in dir/mnt for the test, and skips
// the test when it cannot (not root).
func smallDisk(t *testing.T, dir, size string) string {
	t.Helper()
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o700)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): run as root to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	return mnt
}

// fill writes the file path until its disk is full.
func fill(path string) {
	f, _ := os.Create(path)
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
}

// TestDiskFullAtStart: a command that finds its disk full before it
// starts exits 3 (run it again once there is space), not 1, saying the
// disk is full: a new run, a rerun, a report and keygen.
func TestDiskFullAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mnt := smallDisk(t, dir, "2m")
	manifest := filepath.Join(dir, "manifest.csv")
	os.WriteFile(manifest, []byte("source_id,participant_id,referral_date,consent,path\nR-0001,P-1,2024-01-01,maybe,a.pdf\n"), 0o600)
	out := filepath.Join(mnt, "out")
	if r := refbatch(t, nil, "run", "--plaintext", "--quiet", "--out", out, manifest); r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	fill(filepath.Join(mnt, "filler"))
	for _, args := range [][]string{
		{"run", "--plaintext", "--quiet", "--out", filepath.Join(mnt, "new"), manifest},
		{"run", "--plaintext", "--quiet", "--out", out, manifest},
		{"report", "--out", out},
		{"keygen", "--out", filepath.Join(mnt, "key")},
	} {
		r := refbatch(t, nil, args...)
		if r.code != exitIncomplete || !strings.Contains(r.stderr, "disk is full") {
			t.Errorf("%s on a full disk: exit %d, want %d saying the disk is full\n%s", strings.Join(args, " "), r.code, exitIncomplete, r.stderr)
		}
	}
	assertNoTemp(t, out, t.TempDir())
}

func TestDiskFull(t *testing.T) {
	t.Parallel() // it waits on processes more than it computes
	dir := t.TempDir()
	mnt := smallDisk(t, dir, "4m")
	// Six documents: two finished before the disk fills, the third
	// fails on it, and the rerun has the rest to read.
	manifest := bigManifest(t, dir, 6)
	out := filepath.Join(mnt, "out")
	filler := filepath.Join(mnt, "filler")

	cmd, stderr := start(t, []string{"REFBATCH_TEST_FAULTS=slow200ms=*"}, runArgs(out, "--root", "/", "--workers", "1", manifest)...)
	waitFor(t, 60*time.Second, func() bool { return strings.Count(stderr.String(), "document finished") >= 2 })
	// Fill the disk: the next artifact (or journal write) fails with ENOSPC.
	fill(filler)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitIncomplete {
		t.Fatalf("disk full: %v, want exit 3\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "disk is full") {
		t.Errorf("no clear message:\n%s", stderr.String())
	}
	assertNoTemp(t, out, t.TempDir())

	os.Remove(filler)
	r := refbatch(t, nil, runArgs(out, "--root", "/", manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("rerun with space: exit %d\n%s", r.code, r.stderr)
	}
	for doc, n := range successfulAttempts(t, out) {
		if n != 1 {
			t.Errorf("document %s: %d successful attempts, want 1", doc, n)
		}
	}
	arts, _ := filepath.Glob(filepath.Join(out, "artifacts", "*"))
	if len(arts) != len(successfulAttempts(t, out)) {
		t.Errorf("%d artifacts for %d finished documents: a partial artifact survived", len(arts), len(successfulAttempts(t, out)))
	}
}
