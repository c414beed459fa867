package batch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is admission's side of a run, one row at a time: the
// throttle that keeps it a window ahead of the engines, and the checks
// and verdict of each row.

// throttle waits while the documents admitted and claimed by nobody fill
// the admission window: admission runs ahead of the engines, by the
// window and no more, so that what it holds (admitted) stays bounded.
func (r *runner) throttle(ctx context.Context) error {
	window := 2*r.o.Workers + 8
	for {
		n, err := r.j.Unclaimed()
		if err != nil || n < window {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.claimed.wait():
		case <-time.After(holdPoll):
		}
	}
}

// admit runs the admission checks on one row and records the verdict
// before the next row is read, so that a resumed run never meets the same
// hostile file twice. For an admitted file it also returns the DPI each
// page renders at under o's page policy.
func (r *runner) admit(ctx context.Context, row manifest.Row, o Options) (journal.RowStatus, []int, error) {
	now := time.Now()
	defer func() {
		r.o.Progress.Event(Event{Kind: EventAdmitted, Time: now, Line: row.Line, SourceID: row.SourceID})
	}()
	// The key is taken before the checks: a file that changes while it
	// is checked is admitted again on the next run, never kept refused.
	key := admitKey(o, row)
	reject := func(sha string, reason outcome.Reason, detail string) (journal.RowStatus, []int, error) {
		if err := r.j.RejectDetail(o.Manifest, row.Line, row.SourceID, sha, reason, key, safeDetail(detail, row)); err != nil {
			return journal.RowStatus{}, nil, err
		}
		log := r.log.Info
		if reason == outcome.UnparseablePDF || reason == outcome.Unreadable {
			log = r.log.Warn // a person should hear of these even with --quiet
		}
		log("row rejected", "line", row.Line, "source_id", row.SourceID, "reason", reason, "detail", detail, "why", report.Explain(reason))
		st, _, err := r.j.Row(o.Manifest, row.Line)
		return st, nil, err
	}
	if row.Err != nil {
		return reject("", row.Err.Reason, "column "+row.Err.Field+": "+row.Err.Detail)
	}
	doc, err := admit.Check(ctx, o.Root, row.Path, row.SHA256, o.Limits(), r.inspector)
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
	st, err := r.j.Admit(journal.Admission{Manifest: o.Manifest, Line: row.Line, SourceID: row.SourceID, SHA256: doc.SHA256, Path: doc.Path, Size: doc.Size, Pages: doc.Pages,
		Fields: fields})
	if err != nil {
		return st, nil, err
	}
	r.log.Info("row admitted", "line", row.Line, "source_id", row.SourceID, "sha256", doc.SHA256, "pages", doc.Pages,
		"state", st.State, "reason", st.Reason, "admit_ms", time.Since(now).Milliseconds())
	return st, doc.PageDPI, nil
}

// safeDetail is a refusal's detail as the journal and the reports keep
// it: with the row's path, participant ID and referral date (and the
// path's file name) cut out, so it names neither a file nor a person.
func safeDetail(detail string, row manifest.Row) string {
	for _, v := range []string{row.Path, filepath.Base(row.Path), row.ParticipantID, row.ReferralDate} {
		if len(v) >= 3 {
			detail = strings.ReplaceAll(detail, v, "…")
		}
	}
	return detail
}
