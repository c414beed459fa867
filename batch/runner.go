package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report"
)

// A run has two halves that meet only in the journal. Admission streams
// each manifest it works on into the journal, one row at a time, and
// holds nothing but the documents it admitted and nobody has claimed yet.
// The workers claim the next claimable document from the journal
// (journal.ClaimNext), whoever admitted it: this process, another run of
// the same manifest, or a process on another machine. So any number of
// processes, here or elsewhere, share one batch the same way: every
// document is claimed by one of them at a time, and a lease that is not
// renewed frees it for the others.
//
// Only one process at a time streams a manifest (journal.HoldAdmission);
// another one that wants to (a second run of it, a join) claims work
// meanwhile and streams it once the hold is free, which costs it a lookup
// per row already recorded.

// runner is the state of one Run or Join.
type runner struct {
	o     Options
	j     *journal.Journal
	st    *store.Store
	owner journal.Owner
	log   *slog.Logger

	engines   engineFactory
	inspector admit.Inspector

	// manifests are the manifests the runner works on, each under the
	// options its rows are admitted and read under: a run's one, a join's
	// every manifest of the batch.
	manifests []*manifestWork

	pages         *pageQueue
	budget        *byteBudget
	breaker       breaker
	stop          stopper
	versions      engineVersions
	peakWorkerRSS atomic.Int64

	// admitting counts this process's admission passes not yet ended;
	// draining stops the workers from claiming more (admission failed).
	admitting atomic.Int32
	draining  atomic.Bool
	// admitted are the jobs of the documents this process admitted and
	// has not claimed yet; skipped the documents it found it cannot work
	// on; wake tells waiting workers that there may be work.
	admitted jobCache
	skipped  skipSet
	wake     signal
	// claimed tells admission's throttle that a worker here took a
	// document: there may be room in the window.
	claimed signal
	others  otherAdmitters
	// reval validates documents in review again from their artifacts
	// (revalidate.go).
	reval revalidation
}

// manifestWork is one manifest a runner works on.
type manifestWork struct {
	o Options // o.Manifest is the manifest, absolute
	// index is where its rows are, for the documents this process claims
	// without having admitted them; made when first needed.
	mu    sync.Mutex
	index *manifest.Index
}

type job struct {
	row   manifest.Row
	docID int64
	// pageDPI is the resolution admission gave each page (from its exact
	// size, under the page policy): the engines render each page at it.
	pageDPI []int
	// o are the options of the row's manifest, with the page policy the
	// document is read under: the run's, or the one a retry decision set
	// (docOptions).
	o Options
}

func (r *runner) manifestPaths() []string {
	out := make([]string, len(r.manifests))
	for i, m := range r.manifests {
		out[i] = m.o.Manifest
	}
	return out
}

func (r *runner) run(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.stop.cancel = cancel

	// Workers engines recognise pages; as many documents as engines are in
	// flight, so an engine freed by a short document helps a long one.
	var docs, engines sync.WaitGroup
	r.admitting.Add(1)
	r.wake.setWaiters(r.o.Workers)
	for i := 0; i < r.o.Workers; i++ {
		docs.Add(1)
		go func() {
			defer docs.Done()
			r.docLoop(ctx)
		}()
		engines.Add(1)
		go func() {
			defer engines.Done()
			r.engineLoop(ctx)
		}()
	}
	err := r.admitAll(ctx)
	if err != nil {
		// The documents in flight finish; no more are claimed.
		r.draining.Store(true)
	}
	r.admitting.Add(-1)
	r.wake.notify()
	docs.Wait()
	r.pages.close()
	engines.Wait()
	if f := r.stop.err(); f != nil {
		return f
	}
	if err != nil {
		return err
	}
	if parent.Err() != nil {
		return fmt.Errorf("%w: interrupted", layout.ErrIncomplete)
	}
	if n := r.skipped.len(); n > 0 {
		return fmt.Errorf("%w: %d documents are queued whose manifest rows changed since they were admitted; run refbatch run on their manifest to decide them", layout.ErrIncomplete, n)
	}
	return nil
}

// admitAll streams every manifest of the runner, in turn, each once its
// admission hold is this process's.
func (r *runner) admitAll(ctx context.Context) error {
	for _, m := range r.manifests {
		if err := r.admitManifest(ctx, m); err != nil || ctx.Err() != nil {
			return err
		}
	}
	return nil
}

// holdPoll is how often a process waiting for a manifest's admission hold
// asks again.
const holdPoll = time.Second

// admitManifest waits for m's admission hold, keeps it while it streams m
// into the journal, and lets it go.
func (r *runner) admitManifest(ctx context.Context, m *manifestWork) error {
	path := m.o.Manifest
	for waited := false; ; waited = true {
		ok, err := r.j.HoldAdmission(path, r.owner, leaseTTL)
		if err != nil {
			return err
		}
		if ok {
			break
		}
		if !waited {
			r.log.Info("another process is admitting the manifest's rows; claiming its documents until it is done")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(holdPoll):
		}
	}
	hctx, stop := context.WithCancel(ctx)
	held := make(chan struct{})
	go func() {
		defer close(held)
		t := time.NewTicker(leaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				if ok, err := r.j.HoldAdmission(path, r.owner, leaseTTL); err != nil || !ok {
					// Another process took the hold (this one stalled past
					// it): both may admit a row twice, which the journal
					// records once.
					r.log.Warn("lost the admission hold of the manifest", "error", err)
				}
			}
		}
	}()
	defer func() {
		stop()
		<-held
		if err := r.j.ReleaseAdmission(path, r.owner); err != nil {
			r.log.Warn("could not release the admission hold", "error", err)
		}
	}()
	return r.pass(ctx, m)
}

// pass streams m once: each row not yet recorded is admitted, each row the
// journal has seen is revisited under the rerun rules (rerun.go), and the
// documents admitted are left to the workers' claims.
func (r *runner) pass(ctx context.Context, m *manifestWork) (err error) {
	path := m.o.Manifest
	f, err := manifest.Open(path)
	if err != nil {
		return &manifest.FileError{Msg: "cannot open the manifest", Err: err}
	}
	defer f.Close()
	mr, err := manifest.NewReader(f)
	if err != nil {
		return err
	}
	q := r.admitQueue()
	defer func() {
		if qerr := q.finish(); err == nil {
			err = qerr
		}
	}()
	for ctx.Err() == nil && !r.draining.Load() {
		row, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		st, seen, err := r.j.Row(path, row.Line)
		if err != nil {
			return err
		}
		if seen {
			// What was fixed since is admitted again (rerun.go).
			if st, seen, err = r.revisit(m.o, row, st); err != nil {
				return err
			}
		}
		if seen && st.SourceID != row.SourceID {
			return fmt.Errorf("line %d: journal has source_id %q, manifest %q: %w", row.Line, st.SourceID, row.SourceID, journal.ErrManifestChanged)
		}
		if seen && st.State.Final() {
			r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: row.Line, SourceID: row.SourceID, State: st.State, Reason: st.Reason, Resumed: true})
			continue
		}
		if seen {
			// Queued: a worker, here or in another process, claims it and
			// checks its file again before reading it (jobFor).
			continue
		}
		if err := r.throttle(ctx, q); err != nil || ctx.Err() != nil {
			return err
		}
		checked, st, err := r.admit(ctx, row, m.o)
		if ctx.Err() != nil {
			return nil // run() reports the interruption
		}
		if err != nil {
			return err
		}
		if checked != nil {
			if !q.send(*checked) {
				return nil // finish returns the writer's error
			}
			continue
		}
		r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: row.Line, SourceID: row.SourceID, State: st.State, Reason: st.Reason})
	}
	return nil
}

// sessionEnd is what a run and a join do differently as they end: the
// outbox's events of the end (events, given the run's error), and what
// happens just before and just after they are recorded (the run's
// courier stops, then delivers them).
type sessionEnd struct {
	events        func(error) []journal.RunEnd
	before, after func()
}

// session works under the run record runID until the run is over, and
// records how it ended: the engines' versions, the exit, the CPU time and
// the peaks, with end's events. It returns the CPU seconds and the run's
// error, the first error wins.
func (r *runner) session(ctx context.Context, runID int64, end sessionEnd) (cpu float64, runErr error) {
	stopBeat := beat(r.j, runID, r.log)
	runErr = r.run(ctx)
	stopBeat()
	keep := func(err error) {
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr == nil {
		keep(r.sweepOrphans())
	}
	if vj, err := json.Marshal(r.versions.snapshot()); err == nil {
		keep(r.j.SetRunVersions(runID, string(vj)))
	}
	exit := "complete"
	if runErr != nil {
		exit = runErr.Error()
	}
	cpu = cpuSeconds()
	if end.before != nil {
		end.before()
	}
	keep(r.j.EndRun(runID, exit, cpu, r.budget.peak.Load(), end.events(runErr)...))
	if end.after != nil {
		end.after()
	}
	keep(r.j.RecordRunMemory(runID, parentMaxRSS(), r.peakWorkerRSS.Load()))
	return cpu, runErr
}

// writeReport builds the report of manifest (of every manifest when "")
// at the end of a session that began at started, and writes it into the
// output folder.
func (r *runner) writeReport(manifest string, started time.Time, cpu float64) (*report.Report, error) {
	rep, err := standing.BuildReport(r.j, standing.ReportInfo{Manifest: manifest, Started: started, Finished: time.Now(), CPUSeconds: cpu,
		Settings: &r.o.Settings, Versions: r.versions.snapshot(), Encrypted: r.o.Encrypted, PeakInflight: r.budget.peak.Load()})
	if err != nil {
		return nil, err
	}
	return rep, standing.WriteReport(r.o.Out, rep)
}

// sweepOrphans removes, at the end of a run, the artifacts of attempts
// that never committed: a process beside this one, here or on another
// machine, may have died between writing one and recording it, after this
// one started (and swept).
func (r *runner) sweepOrphans() error {
	n, err := sweepOrphans(r.j, r.st, r.owner)
	if n > 0 {
		r.log.Warn("removed artifacts of attempts that never committed", "count", n)
	}
	return err
}

// setFatal stops the run with err, the first fatal error winning.
func (r *runner) setFatal(err error) { r.stop.set(diskFull(err)) }
