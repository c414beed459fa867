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
// of each row and the verdict of a row refused (admitbatch.go records
// the rows that passed).

// throttle waits while the documents admitted and claimed by nobody,
// with the rows q has yet to record, fill the admission window:
// admission runs ahead of the engines, by the window and no more, so
// that what it holds (admitted) stays bounded. It counts in the journal
// only once the room it found last is used up, a row at a time: claims
// only make more room, and a round trip a row capped admission at a
// thousand rows a second at half a millisecond.
func (r *runner) throttle(ctx context.Context, q *admitQueue) error {
	window := 2*r.o.Workers + 8
	if q.room > 0 {
		q.room--
		return nil
	}
	for {
		n, err := r.j.Unclaimed()
		if err != nil {
			return err
		}
		if used := n + int(q.unrecorded.Load()); used < window {
			q.room = window - used - 1
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.claimed.wait():
		case <-time.After(holdPoll):
		}
	}
}

// admit runs the admission checks on one row. A row refused is recorded
// before the next row is read, so that a resumed run never meets the
// same hostile file twice: admit returns its status. A row that passed
// is returned to be recorded by the batch (admitQueue), with the DPI
// each page renders at under o's page policy: one that is not recorded
// when the process stops passed and is checked again by the next run.
func (r *runner) admit(ctx context.Context, row manifest.Row, o Options) (*checkedRow, journal.RowStatus, error) {
	now := time.Now()
	// The key is taken before the checks: a file that changes while it
	// is checked is admitted again on the next run, never kept refused.
	key := admitKey(o, row)
	reject := func(sha string, reason outcome.Reason, detail string) (*checkedRow, journal.RowStatus, error) {
		defer r.o.Progress.Event(Event{Kind: EventAdmitted, Time: now, Line: row.Line, SourceID: row.SourceID})
		if err := r.j.RejectDetail(o.Manifest, row.Line, row.SourceID, sha, reason, key, safeDetail(detail, row)); err != nil {
			return nil, journal.RowStatus{}, err
		}
		log := r.log.Info
		if reason == outcome.UnparseablePDF || reason == outcome.Unreadable {
			log = r.log.Warn // a person should hear of these even with --quiet
		}
		log("row rejected", "line", row.Line, "source_id", row.SourceID, "reason", reason, "detail", detail, "why", report.Explain(reason))
		st, _, err := r.j.Row(o.Manifest, row.Line)
		return nil, st, err
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
		return nil, journal.RowStatus{}, fmt.Errorf("admitting line %d: %w", row.Line, err)
	}
	fields, err := r.j.Digest(rowFields(row))
	if err != nil {
		return nil, journal.RowStatus{}, err
	}
	return &checkedRow{row: row, o: o, pageDPI: doc.PageDPI, start: now,
		a: journal.Admission{Manifest: o.Manifest, Line: row.Line, SourceID: row.SourceID, SHA256: doc.SHA256, Path: doc.Path,
			Size: doc.Size, Pages: doc.Pages, Fields: fields}}, journal.RowStatus{}, nil
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
