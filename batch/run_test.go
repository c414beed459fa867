package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/journal/journaltest"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// The tests run real engines: the test binary re-executes itself as the
// worker child process. Faults are injected through ocr.FaultsEnv only.

const childEnv = "REFBATCH_BATCH_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "1":
		os.Exit(ocr.ServeMain())
	case "admit":
		os.Exit(admit.ServeMain())
	}
	code := m.Run()
	removeFixtures()
	os.Exit(code)
}

// testAdmission runs admission's PDF checks in real children: the test
// binary in its admission mode.
var testAdmission = layout.Process{Path: os.Args[0], Env: []string{childEnv + "=admit"}}

// testWorker is the test binary as the OCR worker child, with faults.
func testWorker(faults string) layout.Process {
	env := []string{childEnv + "=1"}
	if faults != "" {
		env = append(env, ocr.FaultsEnv+"="+faults)
	}
	return layout.Process{Path: os.Args[0], Env: env}
}

// faultKey names the file at path in ocr.FaultsEnv: a prefix of the
// SHA-256 of its bytes.
func faultKey(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// sampleRow is a good document: its manifest fields and its file.
type sampleRow struct{ sourceID, participantID, date, path string }

// writeManifest writes a manifest of rows (source_id, path, participant_id,
// referral_date) where path is absolute; the root is "/".
func writeManifest(t *testing.T, dir string, rows [][4]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("source_id,participant_id,referral_date,consent,path\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,yes,%s\n", r[0], r[2], r[3], r[1])
	}
	p := filepath.Join(dir, fmt.Sprintf("manifest-%d.csv", time.Now().UnixNano()))
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testOptions are the options of a test run: real children, faults for
// the workers, and the cheapest reading that still reads a tiny referral
// (batchtest.TinyReferral) as done: 72 DPI, none of the page steps, as
// cmd/refbatch's tinyFlags. These tests are of runs, joins, journals and
// faults, not of reading (the ocr package's and the real binary's tests
// are); at 150 DPI with the steps the package took 37 CPU-s on SQLite
// alone, now 19. One worker: a second one's start and Tesseract cost
// more than the few tiny documents it would share. A test that needs the
// steps, a DPI or more workers sets them.
func testOptions(t *testing.T, manifest, out, faults string) Options {
	o := Options{Manifest: manifest, Out: out, Plaintext: true, Worker: testWorker(faults), Admission: testAdmission}
	o.Root, o.Workers, o.DPI, o.PageTimeout = "/", 1, 72, 60*time.Second
	o.NoOrientation, o.NoDeskew, o.NoDespeckle, o.NoCoverage = true, true, true, true
	o.WorkerMemory = ocr.DefaultMemoryLimit
	return o
}

// reportRows reads every row of a report, which Run's reports stream from
// the journal rather than hold.
func reportRows(t *testing.T, rep *report.Report) []report.Row {
	t.Helper()
	if rep.RowSource == nil {
		return rep.Rows
	}
	var rows []report.Row
	if err := rep.RowSource(func(r report.Row) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return rows
}

func rowsBySource(t *testing.T, rep *report.Report) map[string]report.Row {
	t.Helper()
	m := map[string]report.Row{}
	for _, r := range reportRows(t, rep) {
		if _, ok := m[r.SourceID]; !ok {
			m[r.SourceID] = r
		}
	}
	return m
}

// onBackend is o with a journal of t's own on be: journal.db in o.Out, or
// a schema of the test PostgreSQL database (journaltest).
func onBackend(t *testing.T, be journaltest.Backend, o Options) Options {
	o.Journal = be.Shared(t)
	return o
}

// openJournalFor opens the journal of the batch o ran.
func openJournalFor(o Options) (*journal.Journal, error) {
	return journal.Open(layout.Place{Out: o.Out, Journal: o.Journal}.JournalPath())
}

// attemptsOf returns the attempts of the document sourceID in the batch
// o ran.
func attemptsOf(t *testing.T, o Options, sourceID string) []journal.AttemptSpan {
	t.Helper()
	j, err := openJournalFor(o)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	d, ok, err := j.DocumentBySource(sourceID)
	if err != nil || !ok {
		t.Fatalf("document %s: %v (found %v)", sourceID, err, ok)
	}
	var atts []journal.AttemptSpan
	err = j.History(time.Now(), func(doc journal.DocSpan, a []journal.AttemptSpan) error {
		if doc.ID == d.ID {
			atts = append(atts, a...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return atts
}

// TestFaults injects one fault per case into one document of a small batch:
// the document ends as the design says, and every other document is done.
func TestFaults(t *testing.T) { journaltest.Each(t, testFaults) }

func testFaults(t *testing.T, be journaltest.Backend) {
	good := tinySamples(t)[:3]
	victim := tinySamples(t)[3]
	tests := []struct {
		name     string
		fault    string // the fault's kind; it strikes the victim's bytes
		opts     func(*Options)
		state    outcome.State
		reason   outcome.Reason
		attempts int // attempts recorded on the victim
	}{
		{"a worker that crashes every time exhausts the attempts", "crash", nil, "review", "attempts_exhausted", 3},
		// The documents' budget is given apart: the one a 10 s page
		// timeout gives (10 s + 0.5 s a page) is tight on a loaded machine.
		{"a page that hangs is a timeout, never retried", "hang", func(o *Options) { o.PageTimeout, o.DocTimeout = 10*time.Second, time.Minute }, "review", "timeout", 1},
		// The budget counts the engines' time on a document, summed over
		// the workers reading its pages: 20 s leaves the good documents
		// room on a loaded machine.
		{"a document over --doc-timeout is a timeout, never retried", "slow30s", func(o *Options) { o.DocTimeout = 20 * time.Second }, "review", "timeout", 1},
		{"a transient failure is retried", "transient1", nil, "done", "", 2},
		{"a worker that allocates without bound dies at its limit and is retried", "alloc", func(o *Options) { o.Attempts = 2 }, "review", "attempts_exhausted", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // most of its time is a hang, a timeout or a retry waited out
			dir := t.TempDir()
			rows := [][4]string{}
			for _, g := range good {
				rows = append(rows, [4]string{g.sourceID, g.path, g.participantID, g.date})
			}
			rows = append(rows, [4]string{"V", victim.path, victim.participantID, victim.date})
			fault := tc.fault + "=" + faultKey(t, victim.path)
			o := onBackend(t, be, testOptions(t, writeManifest(t, dir, rows), filepath.Join(dir, "out"), fault))
			if tc.opts != nil {
				tc.opts(&o)
			}
			if tc.fault == "alloc" {
				// An idle worker reserves about 1.3 GiB of address space:
				// 2 GiB lets the runaway allocation start, and stops it
				// sooner than the default.
				o.WorkerMemory = 2 << 30
			}
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			byID := rowsBySource(t, res.Report)
			if v := byID["V"]; v.State != tc.state || v.Reason != tc.reason {
				t.Errorf("victim %s/%s, want %s/%s", v.State, v.Reason, tc.state, tc.reason)
			}
			for _, g := range good {
				if r := byID[g.sourceID]; r.State != "done" {
					t.Errorf("%s: %s/%s, want done", g.sourceID, r.State, r.Reason)
				}
			}
			atts := attemptsOf(t, o, "V")
			if len(atts) != tc.attempts {
				t.Errorf("victim has %d attempts, want %d: %+v", len(atts), tc.attempts, atts)
			}
			for _, a := range atts {
				t.Logf("attempt %d: %s %s", a.Number, a.Outcome, a.Cause)
			}
		})
	}
}

// TestBreakerStopsBrokenEngines: engines that crash on every page, the
// probe page included, stop the run before every document's attempts
// are burnt.
func TestBreakerStopsBrokenEngines(t *testing.T) {
	dir := t.TempDir()
	var rows [][4]string
	g := tinySamples(t)[0]
	for i := 0; i < 7; i++ {
		// Seven documents of the same bytes, under seven source IDs.
		rows = append(rows, [4]string{fmt.Sprintf("C-%d", i), g.path, g.participantID, g.date})
	}
	o := testOptions(t, writeManifest(t, dir, rows), filepath.Join(dir, "out"), "crash=*")
	o.Attempts = 10
	_, err := Run(context.Background(), o)
	if !errors.Is(err, ErrEnginesBroken) {
		t.Fatalf("err %v, want ErrEnginesBroken", err)
	}
}

// TestPoisonIsNotBreakage: documents that crash their engines, more in a
// row than the breaker's threshold, do not stop the run when a fresh
// engine reads the probe page: each costs its attempts and goes to
// review, and the good document is done.
func TestPoisonIsNotBreakage(t *testing.T) {
	dir := t.TempDir()
	s := tinySamples(t)
	var rows [][4]string
	for i := 0; i < breakerThreshold+1; i++ {
		rows = append(rows, [4]string{fmt.Sprintf("C-%d", i), s[0].path, s[0].participantID, s[0].date})
	}
	rows = append(rows, [4]string{"G", s[1].path, s[1].participantID, s[1].date})
	o := testOptions(t, writeManifest(t, dir, rows), filepath.Join(dir, "out"), "crash="+faultKey(t, s[0].path))
	o.Attempts, o.DPI = 1, 100
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("err %v, want none", err)
	}
	// Every row is reported: the loop below says nothing of a row missing.
	if n := len(reportRows(t, res.Report)); n != breakerThreshold+2 {
		t.Errorf("%d rows in the report, want %d", n, breakerThreshold+2)
	}
	for id, r := range rowsBySource(t, res.Report) {
		want := "review/attempts_exhausted"
		if id == "G" {
			want = "done/"
		}
		if got := string(r.State) + "/" + string(r.Reason); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}

func TestDuplicatesAndConflictsAcrossRuns(t *testing.T) {
	journaltest.Each(t, testDuplicatesAndConflictsAcrossRuns)
}

func testDuplicatesAndConflictsAcrossRuns(t *testing.T, be journaltest.Backend) {
	dir := t.TempDir()
	s := tinySamples(t)
	out := filepath.Join(dir, "out")
	jr := be.Shared(t)
	on := func(o Options) Options { o.Journal = jr; return o }
	first := writeManifest(t, dir, [][4]string{{"A", s[0].path, s[0].participantID, s[0].date}, {"A", s[0].path, s[0].participantID, s[0].date}})
	res, err := Run(context.Background(), on(testOptions(t, first, out, "")))
	if err != nil {
		t.Fatal(err)
	}
	if got := reportRows(t, res.Report)[1].State; got != "duplicate" {
		t.Errorf("same source and bytes in one manifest: %s, want duplicate", got)
	}
	// A second manifest into the same output folder.
	second := writeManifest(t, dir, [][4]string{{"A", s[0].path, s[0].participantID, s[0].date}, {"A", s[1].path, s[1].participantID, s[1].date}})
	res, err = Run(context.Background(), on(testOptions(t, second, out, "")))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"duplicate", ""}, {"rejected", "conflict"}}
	for i, w := range want {
		if r := reportRows(t, res.Report)[i]; string(r.State) != w[0] || string(r.Reason) != w[1] {
			t.Errorf("second manifest row %d: %s/%s, want %s/%s", i, r.State, r.Reason, w[0], w[1])
		}
	}
	if n := len(attemptsOf(t, on(Options{Out: out}), "A")); n != 1 {
		t.Errorf("A was attempted %d times, want 1", n)
	}
}

// TestTwoProcessesShareTheWork stands two runs (separate journals handles,
// owners and engines) on one output folder at once.
func TestTwoRunsShareTheWork(t *testing.T) { journaltest.Each(t, testTwoRunsShareTheWork) }

func testTwoRunsShareTheWork(t *testing.T, be journaltest.Backend) {
	dir := t.TempDir()
	jr := be.Shared(t)
	var rows [][4]string
	for i, g := range tinySamples(t) {
		rows = append(rows, [4]string{fmt.Sprintf("S-%d", i), g.path, g.participantID, g.date})
	}
	manifest := writeManifest(t, dir, rows)
	out := filepath.Join(dir, "out")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := testOptions(t, manifest, out, "slow200ms=*")
			o.Journal = jr
			_, errs[i] = Run(context.Background(), o)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range rows {
		atts := attemptsOf(t, Options{Out: out, Journal: jr}, fmt.Sprintf("S-%d", i))
		if len(atts) != 1 || atts[0].Outcome != "done" {
			t.Errorf("S-%d attempts %+v, want exactly one, done", i, atts)
		}
	}
}

func TestInterruptReleasesUncounted(t *testing.T) {
	dir := t.TempDir()
	s := tinySamples(t)
	manifest := writeManifest(t, dir, [][4]string{{"A", s[0].path, s[0].participantID, s[0].date}, {"B", s[1].path, s[1].participantID, s[1].date}})
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	o := testOptions(t, manifest, out, "slow5s=*")
	o.Workers = 2 // the cancel may find both documents in flight
	o.Progress = progressFunc(func(e Event) {
		if e.Kind == EventStarted {
			cancel()
		}
	})
	_, err := Run(ctx, o)
	if !errors.Is(err, layout.ErrIncomplete) {
		t.Fatalf("interrupted run: %v, want ErrIncomplete", err)
	}
	res, err := Run(context.Background(), testOptions(t, manifest, out, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reportRows(t, res.Report) {
		if r.State != "done" || r.Attempts != 1 {
			t.Errorf("%s: %s after %d counted attempts, want done after 1", r.SourceID, r.State, r.Attempts)
		}
	}
}

type progressFunc func(Event)

func (f progressFunc) Event(e Event) { f(e) }
