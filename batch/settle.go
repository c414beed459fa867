package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is the end of one attempt at a document: its verdict, or a
// transient failure to retry, recorded in the journal.

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
		// The attempt is recorded first: a probe of the engines may
		// outlast the lease.
		r.engineFailed(ctx, doc.ID)
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
		log.Warn("document stopped: over its time budget", "budget", jb.o.DocBudget(doc.Pages).String(), "pages", doc.Pages)
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
	b, err := art.Marshal()
	if err != nil {
		return journal.Result{}, err
	}
	name := artifactName(doc.SourceID, doc.SHA256, l.Attempt, r.st.Encrypted())
	sum, size, err := r.st.PutSized(name, b)
	if err != nil {
		return journal.Result{}, fmt.Errorf("writing artifact for %s: %w", doc.SourceID, err)
	}
	return journal.Result{State: v.state, Reason: v.reason, MeanConfidence: v.meanConf, Band: v.band,
		Artifact: layout.ArtifactPath(name), ArtifactSHA256: sum, ArtifactSize: size, ContentSHA256: art.ContentSHA256, Detail: v.detail, DetailPages: v.pages}, nil
}
