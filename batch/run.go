package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// Layout of the output folder.
const (
	JournalFile  = "journal.db"
	ArtifactsDir = "artifacts"
)

// leaseTTL is how long a claim lives without renewal; the heartbeat renews
// it every leaseTTL/3 while the engine works.
const leaseTTL = 30 * time.Second

// breakerThreshold is how many transient engine failures in a row, on
// different documents, mean the engines themselves are broken.
const breakerThreshold = 5

// ErrEnginesBroken: the breaker tripped; retrying would burn every
// document's attempts.
var ErrEnginesBroken = errors.New("the OCR engines keep failing")

// Result is what a Run did.
type Result struct {
	// Report is the report Run wrote. It does not hold the rows: its
	// RowSource reads them from the journal in Out.
	Report   *report.Report
	Out      string
	Complete bool
}

// Run imports the manifest described by o. It returns ErrIncomplete
// (wrapped, with the cause) when it stopped before every row reached a state;
// running it again with the same options resumes. A *manifest.FileError or
// journal.ErrManifestChanged means the manifest itself is unusable.
func Run(ctx context.Context, o Options) (*Result, error) {
	o = o.withDefaults()
	started := time.Now()
	if len(o.Recipients) == 0 && !o.Plaintext {
		return nil, ErrNoRecipients
	}
	if o.Engine == nil {
		return nil, errors.New("batch: no engine factory")
	}
	if o.Inspector == nil {
		return nil, errors.New("batch: no admission inspector")
	}
	paths, err := resolvePaths(o)
	if err != nil {
		return nil, err
	}
	o.Manifest, o.Root, o.Out = paths.manifest, paths.root, paths.out
	// Check the manifest's header before creating anything.
	if err := checkManifest(o.Manifest); err != nil {
		return nil, err
	}
	if err := makeOut(o.Out); err != nil {
		return nil, err
	}
	j, err := journal.Open(filepath.Join(o.Out, JournalFile))
	if errors.Is(err, journal.ErrNotJournal) {
		return nil, &UsageError{Msg: fmt.Sprintf("%s holds a %s that is not a refbatch journal", o.Out, JournalFile),
			Hint: "choose another --out; refbatch does not add its tables to another database"}
	}
	if err != nil {
		return nil, err
	}
	defer j.Close()
	if err := recordEncryption(j, len(o.Recipients) > 0); err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(o.Out, ArtifactsDir), o.Recipients)
	if err != nil {
		return nil, err
	}
	owner := journal.NewOwner()
	if n, err := st.SweepTemp(); err != nil {
		return nil, fmt.Errorf("sweeping temp files: %w", err)
	} else if n > 0 {
		o.Logger.Warn("removed temp files left by an earlier crash", "count", n)
	}
	if n, err := sweepOrphans(j, st, owner); err != nil {
		return nil, err
	} else if n > 0 {
		o.Logger.Warn("removed artifacts of attempts that never committed", "count", n)
	}
	settings, _ := json.Marshal(o.Settings())
	runID, err := j.StartRun(owner, string(settings), "{}")
	if err != nil {
		return nil, err
	}
	o.Logger.Info("run started", "out", o.Out, "workers", o.Workers, "dpi", o.DPI, "encrypted", len(o.Recipients) > 0)

	r := &runner{o: o, j: j, st: st, owner: owner, log: o.Logger, budget: semaphore.NewWeighted(o.MaxInflightBytes), pages: newPageQueue()}
	runErr := r.run(ctx)

	if vj, err := json.Marshal(r.versionsMap()); err == nil {
		if err := j.SetRunVersions(runID, string(vj)); err != nil && runErr == nil {
			runErr = err
		}
	}
	exit := "complete"
	if runErr != nil {
		exit = runErr.Error()
	}
	cpu := cpuSeconds()
	if err := j.EndRun(runID, exit, cpu, r.peakInflight.Load()); err != nil && runErr == nil {
		runErr = err
	}
	if err := j.RecordRunMemory(runID, parentMaxRSS(), r.peakWorkerRSS.Load()); err != nil && runErr == nil {
		runErr = err
	}
	rep, err := BuildReport(j, ReportInfo{Manifest: o.Manifest, Started: started, Finished: time.Now(), CPUSeconds: cpu,
		Settings: o.Settings(), Versions: r.versionsMap(), Encrypted: len(o.Recipients) > 0, SLO: o.SLO, PeakInflight: r.peakInflight.Load()})
	if err != nil {
		return nil, diskFull(errors.Join(runErr, err))
	}
	if err := report.WriteFiles(o.Out, rep); err != nil {
		return nil, diskFull(errors.Join(runErr, fmt.Errorf("writing report: %w", err)))
	}
	o.Logger.Info("run ended", "complete", rep.Complete, "wall", time.Since(started).Round(time.Millisecond), "cpu_s", cpu)
	return &Result{Report: rep, Out: o.Out, Complete: rep.Complete}, diskFull(runErr)
}

// makeOut creates the output folder with mode 0700. A folder that exists
// keeps its mode: it may be the user's (--out .), and refbatch changes the
// mode only of what it creates.
func makeOut(out string) error {
	err := os.Mkdir(out, 0o700)
	switch {
	case errors.Is(err, fs.ErrExist):
		fi, err := os.Stat(out)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return &UsageError{Msg: fmt.Sprintf("--out %s is not a folder", out), Hint: "choose a folder for the output"}
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", out, err)
		}
		return makeOut(out)
	case err != nil:
		return fmt.Errorf("creating %s: %w", out, err)
	}
	// Mkdir applies the umask; the mode must be 0700 whatever it is.
	return os.Chmod(out, 0o700)
}

type runPaths struct{ manifest, root, out string }

func resolvePaths(o Options) (runPaths, error) {
	var p runPaths
	m, err := filepath.Abs(o.Manifest)
	if err != nil {
		return p, err
	}
	p.manifest, p.root, p.out = m, filepath.Dir(m), filepath.Join(filepath.Dir(m), "refbatch-out")
	if o.Root != "" {
		if p.root, err = filepath.Abs(o.Root); err != nil {
			return p, err
		}
	}
	if o.Out != "" {
		if p.out, err = filepath.Abs(o.Out); err != nil {
			return p, err
		}
	}
	return p, nil
}

func checkManifest(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &manifest.FileError{Line: 0, Msg: err.Error()}
	}
	defer f.Close()
	_, err = manifest.NewReader(f)
	return err
}

// recordEncryption pins the batch's artifact encryption choice: a batch half
// plaintext and half ciphertext would betray the choice made for it.
func recordEncryption(j *journal.Journal, encrypted bool) error {
	want := "plaintext"
	if encrypted {
		want = "age"
	}
	got, err := j.Meta("artifacts")
	if err != nil {
		return err
	}
	if got != "" && got != want {
		return &UsageError{
			Msg:  fmt.Sprintf("this output folder holds %s artifacts; this run would write %s ones", got, want),
			Hint: "use the same --recipient/--plaintext choice as the first run, or a new --out",
		}
	}
	return j.SetMeta("artifacts", want)
}

// UsageError is a problem with how refbatch was invoked, with a hint.
type UsageError struct{ Msg, Hint string }

func (e *UsageError) Error() string { return e.Msg }

// runner is the state of one Run.
type runner struct {
	o     Options
	j     *journal.Journal
	st    *store.Store
	owner journal.Owner
	log   *slog.Logger

	inflight      atomic.Int64
	peakInflight  atomic.Int64
	budget        *semaphore.Weighted // MaxInflightBytes
	peakWorkerRSS atomic.Int64
	pages         *pageQueue

	mu       sync.Mutex
	versions map[string]string
	failing  map[int64]bool // documents failing in the engine since the last success
	fatal    error          // first fatal error; stops the run
	cancel   context.CancelFunc
}

type job struct {
	row   manifest.Row
	docID int64
	wg    *sync.WaitGroup
}

func (r *runner) run(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.cancel = cancel

	// Workers engines recognise pages; as many documents as engines are in
	// flight, so an engine freed by a short document helps a long one.
	jobs := make(chan job, r.o.Workers)
	var docs, engines sync.WaitGroup
	for i := 0; i < r.o.Workers; i++ {
		docs.Add(1)
		go func() {
			defer docs.Done()
			r.docLoop(ctx, jobs)
		}()
		engines.Add(1)
		go func() {
			defer engines.Done()
			r.engineLoop(ctx)
		}()
	}
	err := r.passes(ctx, jobs)
	close(jobs)
	docs.Wait()
	r.pages.close()
	engines.Wait()
	if f := r.fatalErr(); f != nil {
		return f
	}
	if err != nil {
		return err
	}
	if parent.Err() != nil {
		return fmt.Errorf("%w: interrupted", ErrIncomplete)
	}
	return nil
}

// passes streams the manifest until every document is final. The first pass
// admits every row; later passes only pick up documents that could not be
// claimed earlier (retry backoff, or a lease held by a process that died).
func (r *runner) passes(ctx context.Context, jobs chan<- job) error {
	for pass := 1; ; pass++ {
		var wg sync.WaitGroup
		err := r.pass(ctx, pass, jobs, &wg)
		wg.Wait()
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil // run() reports the interruption or the fatal error
		}
		queued, _, err := r.j.Unfinished()
		if err != nil {
			return err
		}
		if queued == 0 {
			return nil
		}
		wait, err := r.nextChance()
		if err != nil {
			return err
		}
		if wait < 0 {
			return fmt.Errorf("%w: %d documents are queued but none can be claimed", ErrIncomplete, queued)
		}
		r.log.Info("waiting for queued documents", "queued", queued, "wait", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// nextChance returns how long until some queued document may be claimable:
// its backoff ends or its lease expires. -1 when no queued document will
// ever be (which would be a bug).
func (r *runner) nextChance() (time.Duration, error) {
	now := time.Now()
	best := time.Duration(-1)
	consider := func(t time.Time) {
		d := max(t.Sub(now), 100*time.Millisecond)
		if best < 0 || d < best {
			best = d
		}
	}
	err := r.j.QueuedDocuments(func(d journal.Doc) error {
		switch {
		case d.LeasedByOther(r.owner, now):
			consider(d.LeaseExpires)
		case d.NextAttemptAt.After(now):
			consider(d.NextAttemptAt)
		default:
			consider(now) // claimable now (an earlier owner died)
		}
		return nil
	})
	return min(best, 2*time.Second), err
}

// pass streams the manifest once: each row not yet final is admitted (again,
// on a resumed or later pass: admission is cheap beside OCR and proves the
// file has not changed) and its document sent to the engines.
func (r *runner) pass(ctx context.Context, pass int, jobs chan<- job, wg *sync.WaitGroup) error {
	f, err := os.Open(r.o.Manifest)
	if err != nil {
		return &manifest.FileError{Msg: err.Error()}
	}
	defer f.Close()
	mr, err := manifest.NewReader(f)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		row, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		st, seen, err := r.j.Row(r.o.Manifest, row.Line)
		if err != nil {
			return err
		}
		if seen && st.SourceID != row.SourceID {
			return fmt.Errorf("line %d: journal has source_id %q, manifest %q: %w", row.Line, st.SourceID, row.SourceID, journal.ErrManifestChanged)
		}
		if seen && st.State.Final() {
			if pass == 1 {
				r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: row.Line, SourceID: row.SourceID, State: string(st.State), Reason: string(st.Reason), Resumed: true})
			}
			continue
		}
		if seen && st.DocID != 0 {
			d, err := r.j.Document(st.DocID)
			if err != nil {
				return err
			}
			now := time.Now()
			if d.LeasedByOther(r.owner, now) || d.NextAttemptAt.After(now) {
				continue // a later pass, once the lease or backoff ends
			}
			// A document that was in flight when a process died goes
			// behind fresh work: if it is what kills processes, the rest
			// of the batch still gets done first.
			inFlightAtDeath := d.Abandoned > 0 || (d.LeaseOwner != "" && journal.Owner(d.LeaseOwner) != r.owner)
			if pass == 1 && inFlightAtDeath {
				continue
			}
		}
		st, err = r.admit(ctx, row)
		if ctx.Err() != nil {
			return nil // run() reports the interruption
		}
		if err != nil {
			return err
		}
		if st.State.Final() {
			r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: row.Line, SourceID: row.SourceID, State: string(st.State), Reason: string(st.Reason)})
			continue
		}
		wg.Add(1)
		select {
		case jobs <- job{row: row, docID: st.DocID, wg: wg}:
		case <-ctx.Done():
			wg.Done()
		}
	}
	return nil
}

// admit runs the admission checks on one row and records the verdict
// before the next row is read, so that a resumed run never meets the same
// hostile file twice.
func (r *runner) admit(ctx context.Context, row manifest.Row) (journal.RowStatus, error) {
	now := time.Now()
	defer func() {
		r.o.Progress.Event(Event{Kind: EventAdmitted, Time: now, Line: row.Line, SourceID: row.SourceID})
	}()
	reject := func(sha string, reason outcome.Reason, detail string) (journal.RowStatus, error) {
		if err := r.j.Reject(r.o.Manifest, row.Line, row.SourceID, sha, reason); err != nil {
			return journal.RowStatus{}, err
		}
		log := r.log.Info
		if reason == outcome.UnparseablePDF || reason == outcome.Unreadable {
			log = r.log.Warn // a person should hear of these even with --quiet
		}
		log("row rejected", "line", row.Line, "source_id", row.SourceID, "reason", reason, "detail", detail)
		st, _, err := r.j.Row(r.o.Manifest, row.Line)
		return st, err
	}
	if row.Err != nil {
		return reject("", row.Err.Reason, "")
	}
	doc, err := admit.Check(ctx, r.o.Root, row.Path, row.SHA256, r.o.limits(), r.o.Inspector)
	var rej *admit.Rejection
	if errors.As(err, &rej) {
		sha := ""
		if doc != nil {
			sha = doc.SHA256
		}
		return reject(sha, rej.Reason, rej.Detail)
	}
	if err != nil {
		return journal.RowStatus{}, fmt.Errorf("admitting line %d: %w", row.Line, err)
	}
	st, err := r.j.Admit(journal.Admission{Manifest: r.o.Manifest, Line: row.Line, SourceID: row.SourceID, SHA256: doc.SHA256, Path: doc.Path, Size: doc.Size, Pages: doc.Pages})
	if err != nil {
		return st, err
	}
	r.log.Info("row admitted", "line", row.Line, "source_id", row.SourceID, "sha256", doc.SHA256, "pages", doc.Pages,
		"state", st.State, "reason", st.Reason, "admit_ms", time.Since(now).Milliseconds())
	return st, nil
}

// diskFull turns a full output disk into ErrIncomplete: the run stopped
// cleanly and resumes once there is space.
func diskFull(err error) error {
	if err != nil && (errors.Is(err, journal.ErrDiskFull) || store.IsNoSpace(err)) && !errors.Is(err, ErrIncomplete) {
		return fmt.Errorf("%w: the output disk is full: %w", ErrIncomplete, err)
	}
	return err
}

func (r *runner) setFatal(err error) {
	err = diskFull(err)
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.cancel()
}

func (r *runner) fatalErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal
}

// engineFailed counts a transient engine failure towards the breaker. One
// poison document failing again and again is the attempt cap's business;
// many different documents failing with no success between them means the
// engines themselves are broken.
func (r *runner) engineFailed(docID int64) {
	r.mu.Lock()
	if r.failing == nil {
		r.failing = map[int64]bool{}
	}
	r.failing[docID] = true
	n := len(r.failing)
	r.mu.Unlock()
	if n >= breakerThreshold {
		r.setFatal(fmt.Errorf("%w: %d different documents failed in the engine with no success between them", ErrEnginesBroken, n))
	}
}

func (r *runner) engineOK() {
	r.mu.Lock()
	r.failing = nil
	r.mu.Unlock()
}

func (r *runner) versionsMap() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]string{"refbatch": Version()}
	for k, v := range r.versions {
		m[k] = v
	}
	return m
}

// backoff returns the delay before attempt n+1: exponential with full
// jitter, so retries of many documents do not fall in step.
func backoff(attempt int) time.Duration {
	base := time.Second << min(attempt-1, 5)
	return base/2 + time.Duration(rand.Int64N(int64(base/2)+1))
}

// parentMaxRSS is this process's peak resident set size in bytes.
func parentMaxRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Maxrss * 1024 // kilobytes on Linux
}

func cpuSeconds() float64 {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}
