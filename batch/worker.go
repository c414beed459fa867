package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report/outcome"
)

// docLoop takes documents from jobs one at a time and sees each to a
// verdict; the pages themselves go to whichever engine is free.
func (r *runner) docLoop(ctx context.Context, jobs <-chan job) {
	for jb := range jobs {
		if ctx.Err() == nil {
			r.process(ctx, jb)
		}
		jb.wg.Done()
	}
}

func (r *runner) policy() journal.Policy {
	return journal.Policy{MaxAttempts: r.o.Attempts, LeaseTTL: leaseTTL}
}

// process claims one document and takes it to a verdict, a transient
// failure, or a release when the run is interrupted.
func (r *runner) process(ctx context.Context, jb job) {
	l, err := r.j.Claim(jb.docID, r.owner, r.policy())
	if errors.Is(err, journal.ErrNotClaimable) {
		r.reportIfFinal(jb)
		return
	}
	if err != nil {
		r.setFatal(err)
		return
	}
	doc, err := r.j.Document(jb.docID)
	if err != nil {
		r.setFatal(err)
		return
	}
	log := r.log.With("source_id", doc.SourceID, "sha256", doc.SHA256, "trace_id", doc.TraceID, "attempt", l.Attempt)
	start := time.Now()
	r.o.Progress.Event(Event{Kind: EventStarted, Time: start, Line: jb.row.Line, SourceID: doc.SourceID, Pages: doc.Pages})
	log.Info("document started")

	// The heartbeat keeps the lease while the engine works; losing it
	// cancels the work, since another owner now holds the document.
	docCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if r.o.DocTimeout > 0 {
		var c context.CancelFunc
		docCtx, c = context.WithTimeoutCause(docCtx, r.o.DocTimeout, errDocTimeout)
		defer c()
	}
	hbDone := heartbeat(docCtx, r.j, l, func() { cancel(journal.ErrLeaseLost) })
	out := r.ocrDocument(docCtx, l, doc, jb)
	cancel(nil)
	<-hbDone
	out.elapsed = time.Since(start)
	r.settle(ctx, l, doc, jb, out, log)
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
	data, err := admit.ReadSource(r.o.Root, doc.Path, r.o.MaxBytes)
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
		// The next pass re-admits the row and rejects it as a conflict.
		out.err, out.transient = errors.New("source changed since admission"), outcome.CauseSourceChanged
		return out
	}

	d := &docWork{ctx: ctx, id: doc.ID, data: data, pages: doc.Pages, policy: jb.o.Policy, pageDPI: jb.pageDPI,
		results: make(chan pageResult, doc.Pages)}
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

// settle records the outcome of one attempt in the journal: a verdict, a
// transient failure to retry, or a release when the run was interrupted.
func (r *runner) settle(ctx context.Context, l journal.Lease, doc journal.Doc, jb job, out ocrResult, log *slog.Logger) {
	finish := func(res journal.Result) {
		if err := r.j.Finish(l, res); err != nil {
			if errors.Is(err, journal.ErrLeaseLost) {
				log.Warn("lease lost before publishing; another owner has the document")
				if res.Artifact != "" {
					r.st.Remove(filepath.Base(res.Artifact))
				}
				return
			}
			r.setFatal(err)
			return
		}
		log.Info("document finished", "state", res.State, "reason", res.Reason, "pages", len(out.pages),
			"mean_confidence", fmt.Sprintf("%.1f", res.MeanConfidence), "elapsed_ms", out.elapsed.Milliseconds())
		r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: jb.row.Line, SourceID: doc.SourceID,
			State: res.State, Reason: res.Reason, Pages: len(out.pages), Elapsed: out.elapsed})
	}
	fail := func(cause outcome.Cause) {
		r.engineFailed(doc.ID)
		retryAt := time.Now().Add(backoff(l.Attempt))
		exhausted, err := r.j.Fail(l, cause, retryAt, r.policy())
		if err != nil && !errors.Is(err, journal.ErrLeaseLost) {
			r.setFatal(err)
			return
		}
		log.Warn("attempt failed", "cause", cause, "exhausted", exhausted)
		if exhausted {
			r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: jb.row.Line, SourceID: doc.SourceID,
				State: outcome.AttemptsExhausted.State(), Reason: outcome.AttemptsExhausted})
		}
	}

	err := out.err
	var ee *ocr.EngineError
	switch {
	case err == nil:
		r.breaker.ok()
		res, err := r.publish(l, doc, jb, out)
		if err != nil {
			r.j.Release(l)
			r.setFatal(err)
			return
		}
		finish(res)
	case ctx.Err() != nil:
		// Interrupted (or stopped by a fatal error elsewhere): give the
		// document back, uncounted.
		r.j.Release(l)
		log.Info("document released: run interrupted")
	case errors.Is(err, journal.ErrLeaseLost):
		log.Warn("lease lost; another owner has the document")
	case errors.Is(err, errDocTimeout) || errors.Is(err, context.DeadlineExceeded):
		finish(ended(outcome.Timeout))
	case errors.As(err, &ee):
		reason, cause := engineVerdict(ee)
		if cause != "" {
			fail(cause)
			return
		}
		if ee.Cause == ocr.CauseTimeout {
			r.breaker.ok() // the engine answered; the page was slow
		}
		finish(ended(reason))
	case out.rejected != "":
		log.Warn("source refused since admission", "reason", out.rejected, "detail", err.Error())
		finish(ended(out.rejected))
	case out.transient != "":
		fail(out.transient)
	default:
		// An engine that failed in a way it did not classify: treat as a
		// crash so it is retried, bounded by the attempt cap.
		log.Warn("engine error", "error", err)
		fail(outcome.CauseCrash)
	}
}

// ended is the verdict of an attempt that ends its document for reason,
// without a text to publish.
func ended(reason outcome.Reason) journal.Result {
	return journal.Result{State: reason.State(), Reason: reason}
}

// engineVerdict maps an engine failure onto the vocabulary: ocr.Cause is
// the engine's own classification, and this is the one place it becomes a
// row's reason or an attempt's cause. Exactly one of the two is set. A
// failure a fresh worker may not repeat (crash, oom, transient) is a cause:
// the attempt failed and the document is retried. Any other ends the
// document with a reason, since the same bytes would fail the same way: a
// page over its deadline is timeout, a page over the pixel cap even at the
// lowest DPI is page_too_large and a document the engine cannot open is
// malformed_pdf (both rejected, as admission would have), a page MuPDF
// cannot render is render_error.
func engineVerdict(ee *ocr.EngineError) (outcome.Reason, outcome.Cause) {
	switch ee.Cause {
	case ocr.CauseCrash:
		return "", outcome.CauseCrash
	case ocr.CauseOOM:
		return "", outcome.CauseOOM
	case ocr.CauseTransient:
		return "", outcome.CauseTransient
	case ocr.CauseTimeout:
		return outcome.Timeout, ""
	case ocr.CauseTooLarge:
		return outcome.PageTooLarge, ""
	case ocr.CauseOpen:
		return outcome.MalformedPDF, ""
	}
	return outcome.RenderError, ""
}

// reportIfFinal emits the finished event for a document another owner
// finished, so progress counts stay whole.
func (r *runner) reportIfFinal(jb job) {
	st, ok, err := r.j.Row(r.o.Manifest, jb.row.Line)
	if err == nil && ok && st.State.Final() {
		r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: jb.row.Line, SourceID: jb.row.SourceID, State: st.State, Reason: st.Reason})
	}
}

// publish validates the pages, writes the artifact and returns the verdict
// to record. The artifact is durable (fsynced, renamed, re-hashed) before
// the journal hears of it.
func (r *runner) publish(l journal.Lease, doc journal.Doc, jb job, out ocrResult) (journal.Result, error) {
	id, date := jb.row.ParticipantID, jb.row.ReferralDate
	if jb.o.NoIDCheck {
		id, date = "", ""
	}
	v := validate(out.pages, id, date, jb.o)
	art := newArtifact(doc, jb.row.Line, l.Attempt, out, v, jb.o)
	b, err := art.marshal()
	if err != nil {
		return journal.Result{}, err
	}
	name := artifactName(doc.SourceID, doc.SHA256, l.Attempt, r.st.Encrypted())
	sum, err := r.st.Put(name, b)
	if err != nil {
		return journal.Result{}, fmt.Errorf("writing artifact for %s: %w", doc.SourceID, err)
	}
	return journal.Result{State: v.state, Reason: v.reason, MeanConfidence: v.meanConf, Band: v.band,
		Artifact: artifactPath(name), ArtifactSHA256: sum, ContentSHA256: art.ContentSHA256}, nil
}
