package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report/outcome"
)

// docLoop claims documents from the journal one at a time and sees each
// to a verdict; the pages themselves go to whichever engine is free. It
// returns when the run is over: nothing of its manifests is left to do,
// or the run was interrupted, or admission failed.
func (r *runner) docLoop(ctx context.Context) {
	for ctx.Err() == nil && !r.draining.Load() {
		c, err := r.claimable()
		if err != nil {
			r.setFatal(err)
			return
		}
		wake := r.wake.wait()
		l, doc, err := r.j.ClaimNext(r.owner, r.policy(), c)
		switch {
		case err == nil:
			r.claimed.notify()
			r.process(ctx, l, doc)
			continue
		case !errors.Is(err, journal.ErrNothingClaimable):
			r.setFatal(err)
			return
		}
		done, wait, err := r.idle(c.Fresh)
		if err != nil {
			r.setFatal(err)
			return
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-r.wake.one():
		case <-time.After(wait):
		}
	}
}

// claimable is what the runner's workers may claim now: the documents of
// its manifests, but those it cannot work on; fresh ones only while a
// manifest is still being admitted.
func (r *runner) claimable() (journal.Claimable, error) {
	c := journal.Claimable{Manifests: r.manifestPaths(), Skip: r.skipped.list()}
	if r.admitting.Load() > 0 {
		c.Fresh = true
		return c, nil
	}
	others, err := r.others.get(r.j, c.Manifests, r.owner)
	c.Fresh = others
	return c, err
}

// idle says what a worker that found nothing to claim does: stop, when
// every document of the runner's manifests is final (or one it cannot
// work on) and no process is admitting more; otherwise wait until the
// next lease or backoff ends, at most 2s.
func (r *runner) idle(admitting bool) (done bool, wait time.Duration, err error) {
	now := time.Now()
	wait, pending := 2*time.Second, 0
	err = r.j.QueuedOf(r.manifestPaths(), func(d journal.Doc) error {
		if r.skipped.has(d.ID) {
			return nil
		}
		pending++
		next := now
		switch {
		case d.LeasedByOther(r.owner, now):
			next = d.LeaseExpires
		case d.NextAttemptAt.After(now):
			next = d.NextAttemptAt
		}
		wait = min(wait, max(next.Sub(now), 100*time.Millisecond))
		return nil
	})
	if err != nil || (pending == 0 && !admitting) {
		return err == nil, 0, err
	}
	return false, wait, nil
}

func (r *runner) policy() journal.Policy {
	return journal.Policy{MaxAttempts: r.o.Attempts, LeaseTTL: leaseTTL}
}

// process takes one claimed document to a verdict, a transient failure,
// or a release when the run is interrupted.
func (r *runner) process(ctx context.Context, l journal.Lease, doc journal.Doc) {
	log := r.log.With("source_id", doc.SourceID, "sha256", doc.SHA256, "trace_id", doc.TraceID, "attempt", l.Attempt)
	jb, verdict, err := r.jobFor(ctx, l, doc)
	switch {
	case err != nil:
		r.j.Release(l)
		if ctx.Err() == nil {
			r.setFatal(err)
		}
		return
	case verdict == skip:
		r.skipped.add(doc.ID)
		r.j.Release(l)
		log.Warn("manifest row changed since admission: left for refbatch run on its manifest to decide", "line", jb.row.Line)
		return
	}
	start := time.Now()
	r.o.Progress.Event(Event{Kind: EventStarted, Time: start, Line: jb.row.Line, SourceID: doc.SourceID, Pages: doc.Pages})
	log.Info("document started")

	// The heartbeat keeps the lease while the engine works; losing it
	// cancels the work, since another owner now holds the document. The
	// document's time budget counts the engines' time on it (docWork).
	docCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hbDone := heartbeat(docCtx, r.j, l, func() { cancel(journal.ErrLeaseLost) })
	var out ocrResult
	if verdict != "" {
		// The file no longer passes admission: the row ends as
		// admission would have ended it.
		out.err, out.rejected = errors.New("the source no longer passes admission"), outcome.Reason(verdict)
	} else {
		out = r.ocrDocument(docCtx, l, doc, jb)
	}
	cancel(nil)
	<-hbDone
	out.elapsed = time.Since(start)
	r.settle(ctx, l, doc, jb, out, log)
}

// skip is jobFor's verdict on a document whose manifest row changed since
// it was admitted: the process leaves it alone.
const skip = "skip"

// jobFor returns the job of a document just claimed under l: the one
// admission left when this process admitted it, else one made from its
// manifest row, read through the manifest's index, and the admission
// checks made again on its file (the bytes must be the ones admitted).
// verdict is "" when the document is to be read; skip when its row
// changed since (its fields, or another source_id), which a run of its
// manifest decides; or the reason the file no longer passes admission
// (outcome.Conflict when its bytes changed).
func (r *runner) jobFor(ctx context.Context, l journal.Lease, doc journal.Doc) (jb job, verdict string, err error) {
	if jb, ok := r.admitted.take(doc.ID); ok {
		jb.o, err = jb.o.docOptions(doc)
		return jb, "", err
	}
	path, line, ok, err := r.j.OwnerRow(doc.ID)
	if err != nil {
		return jb, "", err
	}
	m := r.manifest(path)
	if !ok || m == nil {
		return jb, "", fmt.Errorf("document %s: no row of this run's manifests owns it", doc.SourceID)
	}
	row, ok, err := m.row(line)
	if err != nil {
		return jb, "", err
	}
	jb = job{row: row, docID: doc.ID}
	st, seen, err := r.j.Row(path, line)
	if err != nil {
		return jb, "", err
	}
	fields, err := r.j.Digest(rowFields(row))
	if err != nil {
		return jb, "", err
	}
	if !ok || !seen || row.SourceID != doc.SourceID || row.Err != nil || (st.Fields != "" && len(journal.ChangedFields(st.Fields, fields)) > 0) {
		return jb, skip, nil
	}
	if jb.o, err = m.o.docOptions(doc); err != nil {
		return jb, "", err
	}
	checked, err := admit.Check(ctx, jb.o.Root, row.Path, row.SHA256, jb.o.Limits(), r.inspector)
	if rej, ok := admit.IsRejection(err); ok {
		return jb, string(rej.Reason), nil
	}
	if err != nil {
		return jb, "", fmt.Errorf("checking the file of line %d again: %w", line, err)
	}
	if checked.SHA256 != doc.SHA256 {
		return jb, string(outcome.Conflict), nil
	}
	jb.pageDPI = checked.PageDPI
	return jb, "", nil
}

// manifest returns the runner's manifest at path, nil if it has none.
func (r *runner) manifest(path string) *manifestWork {
	for _, m := range r.manifests {
		if m.o.Manifest == path {
			return m
		}
	}
	return nil
}

// row reads the manifest's row at line through its index, indexing the
// manifest first, or again when it changed since.
func (m *manifestWork) row(line int) (manifest.Row, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for try := 0; ; try++ {
		if m.index == nil {
			x, err := manifest.NewIndex(m.o.Manifest)
			if err != nil {
				return manifest.Row{}, false, err
			}
			m.index = x
		}
		row, ok, err := m.index.Row(line)
		if errors.Is(err, manifest.ErrChanged) && try == 0 {
			m.index = nil
			continue
		}
		return row, ok, err
	}
}

// ocrResult is what OCR of one document produced, before it is settled in the
// journal.
type ocrResult struct {
	pages     []ocr.PageResult
	versions  ocr.Versions
	err       error          // nil: pages are complete
	rejected  outcome.Reason // the source no longer passes admission: this reason
	transient outcome.Cause
	elapsed   time.Duration
}

// ocrDocument reads the document's bytes again and has the engines
// recognise its pages under the job's page policy, each at the DPI
// admission gave it.
func (r *runner) ocrDocument(ctx context.Context, l journal.Lease, doc journal.Doc, jb job) ocrResult {
	var out ocrResult
	// Wait for room in the byte budget before reading: memory in flight
	// stays bounded whatever the documents' sizes.
	release, err := r.budget.acquire(ctx, doc.Size)
	if err != nil {
		out.err = context.Cause(ctx)
		return out
	}
	defer release()
	// doc.Path was resolved inside the root at admission; it is read
	// again under the same rules (inside the root, a regular file, at most
	// the byte cap), and the hash check below proves the bytes are still
	// the ones admitted. A file that no longer passes those rules ends the
	// document as admission would have ended its row.
	data, err := admit.ReadSource(jb.o.Root, doc.Path, jb.o.MaxBytes)
	if rej, ok := admit.IsRejection(err); ok {
		out.err, out.rejected = err, rej.Reason
		return out
	}
	if err != nil {
		out.err, out.transient = err, outcome.CauseIO
		return out
	}
	r.budget.hold(int64(len(data)))
	defer r.budget.hold(-int64(len(data)))
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != doc.SHA256 {
		// Claimed again, the checks made again find the bytes changed
		// and reject it as a conflict (jobFor).
		out.err, out.transient = errors.New("source changed since admission"), outcome.CauseSourceChanged
		return out
	}

	d := &docWork{ctx: ctx, id: doc.ID, data: data, pages: doc.Pages, policy: jb.o.Policy, pageDPI: jb.pageDPI,
		budget: jb.o.DocBudget(doc.Pages), perPage: jb.o.DocBudgetPerPage(), results: make(chan pageResult, doc.Pages)}
	r.pages.add(d)
	defer r.pages.remove(d)
	out.pages = make([]ocr.PageResult, doc.Pages)
	for done := 0; done < doc.Pages; done++ {
		var res pageResult
		select {
		case <-ctx.Done():
			out.err = context.Cause(ctx)
			return out
		case res = <-d.results:
		}
		if res.err != nil {
			out.err = res.err
			return out
		}
		pr := res.page
		out.versions = res.versions
		if err := r.j.PageDone(l, journal.PageMetric{Page: res.index, DPI: pr.DPI, Render: pr.RenderTime, OCR: pr.RecogniseTime,
			Words: len(pr.Words), MeanConfidence: pr.MeanConf}, leaseTTL); err != nil {
			out.err = err
			return out
		}
		r.o.Progress.Event(Event{Kind: EventPageDone, Time: time.Now(), SourceID: doc.SourceID, Page: done + 1, Pages: doc.Pages, Elapsed: pr.RenderTime + pr.RecogniseTime})
		out.pages[res.index] = pr
	}
	return out
}
