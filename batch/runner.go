package batch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// runner is the state of one Run.
type runner struct {
	o     Options
	j     *journal.Journal
	st    *store.Store
	owner journal.Owner
	log   *slog.Logger

	engines   engineFactory
	inspector admit.Inspector

	pages         *pageQueue
	budget        *byteBudget
	breaker       breaker
	stop          stopper
	versions      engineVersions
	peakWorkerRSS atomic.Int64
}

type job struct {
	row   manifest.Row
	docID int64
	// pageDPI is the resolution admission gave each page (from its exact
	// size, under the page policy): the engines render each page at it.
	pageDPI []int
	// o are the run's options with the page policy the document is read
	// under: the run's, or the one a retry decision set (docOptions).
	o  Options
	wg *sync.WaitGroup
}

func (r *runner) run(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.stop.cancel = cancel

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
	if f := r.stop.err(); f != nil {
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
		return &manifest.FileError{Msg: "cannot open the manifest", Err: err}
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
		if seen {
			// What was fixed since is admitted again (rerun.go).
			if st, seen, err = r.revisit(row, st); err != nil {
				return err
			}
		}
		if seen && st.SourceID != row.SourceID {
			return fmt.Errorf("line %d: journal has source_id %q, manifest %q: %w", row.Line, st.SourceID, row.SourceID, journal.ErrManifestChanged)
		}
		if seen && st.State.Final() {
			if pass == 1 {
				r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: row.Line, SourceID: row.SourceID, State: st.State, Reason: st.Reason, Resumed: true})
			}
			continue
		}
		o := r.o
		if seen && st.DocID != 0 {
			d, err := r.j.Document(st.DocID)
			if err != nil {
				return err
			}
			if o, err = r.o.docOptions(d); err != nil {
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
		st, pageDPI, err := r.admit(ctx, row, o)
		if ctx.Err() != nil {
			return nil // run() reports the interruption
		}
		if err != nil {
			return err
		}
		if st.State.Final() {
			r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: row.Line, SourceID: row.SourceID, State: st.State, Reason: st.Reason})
			continue
		}
		wg.Add(1)
		select {
		case jobs <- job{row: row, docID: st.DocID, pageDPI: pageDPI, o: o, wg: wg}:
		case <-ctx.Done():
			wg.Done()
		}
	}
	return nil
}

// admit runs the admission checks on one row and records the verdict
// before the next row is read, so that a resumed run never meets the same
// hostile file twice. For an admitted file it also returns the DPI each
// page renders at under o's page policy (the document's: see docOptions).
func (r *runner) admit(ctx context.Context, row manifest.Row, o Options) (journal.RowStatus, []int, error) {
	now := time.Now()
	defer func() {
		r.o.Progress.Event(Event{Kind: EventAdmitted, Time: now, Line: row.Line, SourceID: row.SourceID})
	}()
	// The key is taken before the checks: a file that changes while it
	// is checked is admitted again on the next run, never kept refused.
	key := r.admitKey(row)
	reject := func(sha string, reason outcome.Reason, detail string) (journal.RowStatus, []int, error) {
		if err := r.j.Reject(r.o.Manifest, row.Line, row.SourceID, sha, reason, key); err != nil {
			return journal.RowStatus{}, nil, err
		}
		log := r.log.Info
		if reason == outcome.UnparseablePDF || reason == outcome.Unreadable {
			log = r.log.Warn // a person should hear of these even with --quiet
		}
		log("row rejected", "line", row.Line, "source_id", row.SourceID, "reason", reason, "detail", detail, "why", report.Explain(reason))
		st, _, err := r.j.Row(r.o.Manifest, row.Line)
		return st, nil, err
	}
	if row.Err != nil {
		return reject("", row.Err.Reason, "column "+row.Err.Field+": "+row.Err.Detail)
	}
	doc, err := admit.Check(ctx, r.o.Root, row.Path, row.SHA256, o.limits(), r.inspector)
	var rej *admit.Rejection
	if errors.As(err, &rej) {
		sha := ""
		if doc != nil {
			sha = doc.SHA256
		}
		return reject(sha, rej.Reason, rej.Detail)
	}
	if err != nil {
		return journal.RowStatus{}, nil, fmt.Errorf("admitting line %d: %w", row.Line, err)
	}
	fields, err := r.j.Digest(rowFields(row))
	if err != nil {
		return journal.RowStatus{}, nil, err
	}
	st, err := r.j.Admit(journal.Admission{Manifest: r.o.Manifest, Line: row.Line, SourceID: row.SourceID, SHA256: doc.SHA256, Path: doc.Path, Size: doc.Size, Pages: doc.Pages,
		Fields: fields})
	if err != nil {
		return st, nil, err
	}
	r.log.Info("row admitted", "line", row.Line, "source_id", row.SourceID, "sha256", doc.SHA256, "pages", doc.Pages,
		"state", st.State, "reason", st.Reason, "admit_ms", time.Since(now).Milliseconds())
	return st, doc.PageDPI, nil
}

// setFatal stops the run with err, the first fatal error winning.
func (r *runner) setFatal(err error) { r.stop.set(diskFull(err)) }

// engineFailed counts a transient engine failure of a document towards the
// breaker and stops the run when it trips.
func (r *runner) engineFailed(docID int64) {
	if n, tripped := r.breaker.failed(docID); tripped {
		r.setFatal(fmt.Errorf("%w: %d different documents failed in the engine with no success between them", ErrEnginesBroken, n))
	}
}
