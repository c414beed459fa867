package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/batchtest/finished"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// These tests run the real binary, built once in TestMain, with real
// Tesseract, MuPDF and SQLite: they assert exit codes, stdout, stderr and
// the files refbatch leaves.

var binary string

func TestMain(m *testing.M) {
	if code, ok := finished.ChildMain(); ok {
		os.Exit(code)
	}
	if p := os.Getenv("REFBATCH_CLI_CRASH"); p != "" {
		crashMain(p)
		os.Exit(0)
	}
	widenParallel()
	dir, err := os.MkdirTemp("", "refbatch-cli-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "refbatch")
	fixtureRoot = filepath.Join(dir, "fixtures")
	seedBinary(os.Getenv("REFBATCH_TEST_SEED"), binary)
	build := exec.Command("go", "build", "-ldflags", stampFlags(), "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		panic("building refbatch: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// seedBinary copies the binary at seed (make test's make build, named by
// REFBATCH_TEST_SEED) to path before TestMain's go build, which then
// finds it up to date instead of linking the same binary a second time
// (about 4 CPU-s). go build compares the build ID it records with the one
// this tree and stampFlags give, so a seed from another tree or other
// flags is relinked, never run. No seed, or one that cannot be read,
// leaves go build to link as before.
func seedBinary(seed, path string) {
	if seed == "" {
		return
	}
	b, err := os.ReadFile(seed)
	if err != nil {
		return
	}
	_ = os.WriteFile(path, b, 0o755)
}

// stampFlags are the -ldflags make build links refbatch with (the
// Makefile's LDFLAGS: the version git describe gives), or none outside a
// git checkout. The binary the tests run is then the one make install
// would build from the same tree, and TestMakeInstall's make finds it up
// to date instead of linking it a second time.
func stampFlags() string {
	describe, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return "-X github.com/refbatch/refbatch/batch/layout.version=" + strings.TrimSpace(string(describe))
}

// result is one finished invocation.
type result struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func refbatch(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return refbatchIn(t, "", env, args...)
}

// refbatchIn runs refbatch in the folder dir ("" for the test's own).
func refbatchIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running refbatch: %v", err)
	}
	return r
}

// repoRoot is the folder holding go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// sampleDir is the committed sample (REFBATCH_SAMPLE_DIR overrides it, to
// try the tests on another generated corpus).
func sampleDir(t testing.TB) string {
	if d := os.Getenv("REFBATCH_SAMPLE_DIR"); d != "" {
		return d
	}
	return filepath.Join(repoRoot(t), "testdata", "sample")
}

// fastFlags keep the tests quick: the sample is drawn at 150–200 DPI, so
// 150 loses little.
var fastFlags = []string{"--dpi", "150", "--page-timeout", "60s"}

// tinyFlags are the cheapest reading that still reads a tiny referral
// (batchtest.TinyReferral: 20-point print on a small page) as done: 72
// DPI, none of the page steps. A test of processes, kills or the journal
// that reads only tiny referrals runs with them: a page costs about a
// sixth of what it costs with fastFlags.
var tinyFlags = append(slices.Clip(tinyReading), "--page-timeout", "60s")

// tinyReading is tinyFlags without the page timeout.
var tinyReading = append([]string{"--dpi", "72"}, noPageSteps...)

// noPageSteps turn off the page steps (orientation, deskew, despeckle,
// coverage). The sample's scans and the eval corpus read the same
// without them, at two thirds of the CPU; the product's reading, steps
// included, is held by make eval and make holdout and by
// TestEvalRealCorpus.
var noPageSteps = []string{"--no-orientation", "--no-deskew", "--no-despeckle", "--no-coverage"}

// runArgs are run's arguments for a plaintext batch in out of tiny
// referrals, or of rows refused before any reading: one worker,
// tinyFlags, then extra (a --workers there wins). A second worker
// costs a process start and a Tesseract load on every run, and a few
// tiny referrals keep one busy; the tests of two workers at once say so.
func runArgs(out string, extra ...string) []string {
	args := append([]string{"run", "--plaintext", "--out", out, "--workers", "1"}, tinyFlags...)
	return append(args, extra...)
}

// sampleArgs are runArgs for a batch that reads the sample's scans:
// fastFlags and noPageSteps instead of tinyFlags, on the default
// workers. The sample's rows end as expected.csv says either way (the
// sample's run 12.1 against 8.4 CPU-s with them).
func sampleArgs(out string, extra ...string) []string {
	args := append(append([]string{"run", "--plaintext", "--out", out}, fastFlags...), noPageSteps...)
	return append(args, extra...)
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			if i < len(rec) {
				m[strings.TrimPrefix(h, "\ufeff")] = rec[i]
			}
		}
		out = append(out, m)
	}
	return out
}

func readReport(t *testing.T, out string) *report.Report {
	t.Helper()
	rep, err := report.ReadJSON(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// expectRows checks each report row against the expected (state, reason)
// of its source_id, in manifest order.
func expectRows(t *testing.T, rep *report.Report, expected []map[string]string) {
	t.Helper()
	if len(rep.Rows) != len(expected) {
		t.Fatalf("report has %d rows, expected.csv %d", len(rep.Rows), len(expected))
	}
	for i, row := range rep.Rows {
		want := expected[i]
		if row.SourceID != want["source_id"] || string(row.State) != want["state"] || string(row.Reason) != want["reason"] {
			t.Errorf("line %d: %s %s/%s, want %s %s/%s", row.ManifestLine, row.SourceID, row.State, row.Reason,
				want["source_id"], want["state"], want["reason"])
		}
	}
}

func TestSampleRunAndRerun(t *testing.T) {
	reads(t)
	out := filepath.Join(t.TempDir(), "out")
	manifest := filepath.Join(sampleDir(t), "manifest.csv")
	r := sampleRun(t, out)
	if r.code != exitNeedsPerson {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "rows need a person") {
		t.Errorf("exit 4 without its line on stderr:\n%s", lastLines(r.stderr, 3))
	}
	for _, want := range []string{"done", "review", "rejected", "duplicate", "report.json", "report.html"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	expectRows(t, readReport(t, out), readCSV(t, filepath.Join(sampleDir(t), "expected.csv")))
	assertModes(t, out)
	assertNoPHI(t, out, manifest, r)

	// The same finished command again does no OCR, exits as before, and is
	// quick.
	again := refbatch(t, nil, sampleArgs(out, manifest)...)
	if again.code != exitNeedsPerson {
		t.Fatalf("rerun exit %d\n%s", again.code, again.stderr)
	}
	if strings.Contains(again.stderr, "document started") || strings.Contains(again.stderr, "row admitted") {
		t.Errorf("rerun of a finished batch did work:\n%s", again.stderr)
	}
	t.Logf("rerun of the finished sample took %v", again.elapsed)
	assertNoPHI(t, out, manifest, again)
}

// assertModes checks the output folder's modes: folders 0700, files 0600, no temp file.
func assertModes(t *testing.T, out string) {
	t.Helper()
	filepath.Walk(out, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		want := os.FileMode(0o600)
		if info.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, info.Mode().Perm(), want)
		}
		if strings.HasPrefix(info.Name(), ".tmp-") {
			t.Errorf("temp file left: %s", path)
		}
		return nil
	})
}

// assertNoPHI greps everything refbatch wrote outside artifacts/ (stdout,
// stderr, reports, the journal and its WAL) for the manifest's participant
// IDs and for every line of OCR text in the artifacts.
func assertNoPHI(t *testing.T, out, manifestPath string, r result) {
	t.Helper()
	var secrets []string
	for _, row := range readCSV(t, manifestPath) {
		if id := row["participant_id"]; len(id) >= 4 {
			secrets = append(secrets, id)
		}
	}
	arts, _ := filepath.Glob(filepath.Join(out, "artifacts", "*.json"))
	for _, a := range arts {
		b, _ := os.ReadFile(a)
		for _, line := range artifactLines(t, b) {
			if len(line) >= 12 { // short lines ("Page 1") would match by chance
				secrets = append(secrets, line)
			}
		}
	}
	if len(secrets) == 0 {
		t.Fatal("no secrets to look for")
	}
	blobs := map[string][]byte{"stdout": []byte(r.stdout), "stderr": []byte(r.stderr)}
	filepath.Walk(out, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		if rel, _ := filepath.Rel(out, path); strings.HasPrefix(rel, "artifacts"+string(filepath.Separator)) {
			return nil
		}
		b, _ := os.ReadFile(path)
		blobs[path] = b
		return nil
	})
	for name, b := range blobs {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s contains document data (%d bytes of it)", name, len(s))
			}
		}
	}
}

// TestInterruptThenResume: SIGINT mid-batch stops the run with exit 3 and
// the resume hint; the same command again finishes the batch as an
// uninterrupted run would. The documents are tiny (bigManifest): the
// text is not the point.
func TestInterruptThenResume(t *testing.T) {
	t.Parallel() // it waits on processes more than it computes
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	manifest := bigManifest(t, dir, 8)
	cmd := exec.Command(binary, runArgs(out, "--root", "/", "--workers", "1", manifest)...)
	cmd.Env = append(os.Environ(), "REFBATCH_TEST_FAULTS=slow300ms=*")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, func() bool { return strings.Contains(stderr.String(), "document finished") })
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitIncomplete {
		t.Fatalf("interrupted run: %v, want exit 3\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "run the same command again") {
		t.Errorf("no resume hint:\n%s", stderr.String())
	}
	r := refbatch(t, nil, runArgs(out, "--root", "/", manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("resume exit %d\n%s", r.code, r.stderr)
	}
	expectStates(t, out, manifest)
}

// expectStates checks the batch in out against what an uninterrupted run
// of the bigManifest ends with.
func expectStates(t *testing.T, out, manifest string) {
	t.Helper()
	got := rowStates(t, out)
	for id, want := range bigManifestStates(t, manifest) {
		if got[id] != want {
			t.Errorf("%s: %s, want %s", id, got[id], want)
		}
	}
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in time")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	badHeader := filepath.Join(dir, "bad.csv")
	os.WriteFile(badHeader, []byte("source_id,path\nR-1,a.pdf\n"), 0o600)
	good := filepath.Join(sampleDir(t), "manifest.csv")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"no manifest", []string{"run", "--plaintext"}, exitUsage, []string{"refbatch: error:", "refbatch: hint:"}},
		{"missing manifest file", []string{"run", "--plaintext", filepath.Join(dir, "nope.csv")}, exitUsage, []string{"cannot read manifest"}},
		{"manifest without required columns", []string{"run", "--plaintext", "--out", filepath.Join(dir, "o1"), badHeader}, exitUsage, []string{"line 1", "participant_id"}},
		{"no recipients and no --plaintext", []string{"run", "--out", filepath.Join(dir, "o2"), good}, exitUsage, []string{"--recipient", "--plaintext"}},
		{"bad recipient", []string{"run", "--recipient", "nope", good}, exitUsage, []string{"bad recipient"}},
		{"plaintext and an added recipient", []string{"run", "--plaintext", "--add-recipient", "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p", good}, exitUsage, []string{"--plaintext and recipients both given"}},
		{"bad added recipient", []string{"run", "--add-recipient", "nope", good}, exitUsage, []string{"bad recipient"}},
		{"unknown flag", []string{"run", "--frobnicate", good}, exitUsage, []string{"frobnicate"}},
		{"low band above the high band", []string{"run", "--plaintext", "--out", filepath.Join(dir, "o1"), "--low-confidence", "95", good},
			exitUsage, []string{"refbatch: error: --low-confidence 95: want above 0 and not above the high confidence, 94.3"}},
		{"explicit zero that would mean the default", []string{"run", "--plaintext", "--out", filepath.Join(dir, "o1"), "--coverage-threshold", "0", good},
			exitUsage, []string{"refbatch: error: --coverage-threshold 0 is not a value it takes", "refbatch: hint: leave --coverage-threshold out for its default (0.16)"}},
		{"zero workers", []string{"run", "--plaintext", "--out", filepath.Join(dir, "o1"), "--workers", "0", good},
			exitUsage, []string{"--workers 0 is not a value it takes"}},
		{"negative dpi", []string{"run", "--plaintext", "--out", filepath.Join(dir, "o1"), "--dpi", "-300", good},
			exitUsage, []string{"refbatch: error: --dpi -300: want 1 or more"}},
		{"negative page cap", []string{"run", "--plaintext", "--out", filepath.Join(dir, "o1"), "--max-page-pixels", "-1", good},
			exitUsage, []string{"refbatch: error: --max-page-pixels -1: want 1 or more"}},
		{"coverage threshold over 1", []string{"run", "--plaintext", "--out", filepath.Join(dir, "o1"), "--coverage-threshold", "1.5", good},
			exitUsage, []string{"refbatch: error: --coverage-threshold 1.5: want above 0 and at most 1"}},
		{"in-flight budget under 1", []string{"run", "--plaintext", "--out", filepath.Join(dir, "o1"), "--max-inflight-bytes", "-5", good},
			exitUsage, []string{"refbatch: error: --max-inflight-bytes -5: want 1 or more"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := refbatch(t, []string{"REFBATCH_RECIPIENTS="}, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", r.code, tc.code, r.stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "o1")); err == nil {
		t.Error("a manifest or settings error still created the output folder")
	}
}

func TestKeygen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "id.txt")
	r := refbatch(t, nil, "keygen", "--out", path)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "age1") {
		t.Fatalf("keygen: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("identity file: %v %v", info, err)
	}
	if r := refbatch(t, nil, "keygen", "--out", path); r.code != exitUsage {
		t.Errorf("keygen over an existing file: exit %d, want 2", r.code)
	}
}

// corpusDir is ../shared/corpus/real beside the repository, when present.
func corpusDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "..", "shared", "corpus", "real")
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Skipf("real corpus not found at %s", dir)
	}
	return dir
}

// TestSIGKILLThenResume: SIGKILL of the whole process group mid-batch
// loses nothing; the same command again finishes the batch, each
// document read by one successful attempt. Tiny documents, as above.
func TestSIGKILLThenResume(t *testing.T) {
	t.Parallel() // it waits on processes more than it computes
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	manifest := bigManifest(t, dir, 8)
	cmd := exec.Command(binary, runArgs(out, "--root", "/", "--workers", "2", manifest)...)
	cmd.Env = append(os.Environ(), "REFBATCH_TEST_FAULTS=slow300ms=*")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, func() bool { return strings.Count(stderr.String(), "document finished") >= 2 })
	// Kill the whole process group, workers included, as the OOM killer or
	// a power cut would: nothing gets to clean up.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	before := strings.Count(stderr.String(), "document finished")

	r := refbatch(t, nil, runArgs(out, "--root", "/", manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("resume exit %d\n%s", r.code, r.stderr)
	}
	expectStates(t, out, manifest)
	counts := successfulAttempts(t, out)
	for doc, n := range counts {
		if n != 1 {
			t.Errorf("document %s has %d successful attempts, want 1", doc, n)
		}
	}
	t.Logf("killed after %d documents finished; %d documents with one successful attempt each", before, len(counts))
	assertModes(t, out)
}

// successfulAttempts counts, per finished document, the attempts that ended
// with a verdict (done or review).
func successfulAttempts(t *testing.T, out string) map[string]int {
	t.Helper()
	return successfulAttemptsIn(t, filepath.Join(out, "journal.db"))
}

// finishedOnce checks that each document the journal at location
// finished was finished by one successful attempt, and that out holds
// one artifact for each: nothing repeated, no orphan of a killed
// attempt. It returns how many documents were finished more than once.
func finishedOnce(t *testing.T, location, out string) (repeated int) {
	t.Helper()
	finished := successfulAttemptsIn(t, location)
	for doc, n := range finished {
		if n != 1 {
			repeated++
			t.Errorf("document %s: %d successful attempts, want 1", doc, n)
		}
	}
	arts, _ := filepath.Glob(filepath.Join(out, "artifacts", "*"))
	if len(arts) != len(finished) {
		t.Errorf("%d artifacts for %d finished documents", len(arts), len(finished))
	}
	return repeated
}

// successfulAttemptsIn is successfulAttempts of the journal at location:
// a journal.db, or a PostgreSQL URL.
func successfulAttemptsIn(t *testing.T, location string) map[string]int {
	t.Helper()
	j, err := journal.Open(location)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	finished := map[int64]string{} // document ID → source ID
	err = j.Documents(func(d journal.Doc) error {
		if d.State == outcome.Done || d.State == outcome.Review {
			finished[d.ID] = d.SourceID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	err = j.History(time.Now(), func(d journal.DocSpan, atts []journal.AttemptSpan) error {
		source, ok := finished[d.ID]
		if !ok {
			return nil
		}
		counts[source] = 0
		for _, a := range atts {
			if a.Outcome == journal.AttemptDone || a.Outcome == journal.AttemptReview {
				counts[source]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// artifactLines returns the non-empty, trimmed lines of text of a plaintext
// artifact.
func artifactLines(t *testing.T, b []byte) []string {
	t.Helper()
	var a struct {
		Pages []struct {
			Text string `json:"text"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("artifact: %v", err)
	}
	var out []string
	for _, p := range a.Pages {
		for _, line := range strings.Split(p.Text, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
	}
	return out
}

// exitStatus is the exit code of a finished command's Wait or Run error:
// 0 for nil, -1 when the command did not exit (it could not start, or a
// signal ended it).
func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}
