package batch

import (
	"sync/atomic"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/manifest"
)

// This file records the rows whose admission checks passed by the batch:
// the manifest's reader hands each to an admitQueue, whose writer
// records whatever has come while it wrote the last batch (up to
// journal.AdmitBatch rows) in one transaction (journal.AdmitMany), and
// wakes one idle worker for each document it made. On PostgreSQL a row
// at a time took about eight round trips, which capped a manifest's
// admission near 200 rows a second at half a millisecond of round trip;
// the writer's batches grow with the round trip, so the checks of the
// next rows never wait for it. Admission takes no lock a claim holds:
// a claim locks only the document it takes (SKIP LOCKED), and the new
// rows are no one else's.

// checkedRow is a row whose admission checks passed, to be recorded.
type checkedRow struct {
	row     manifest.Row
	o       Options
	a       journal.Admission
	pageDPI []int
	start   time.Time // when its checks began
}

// admitQueue is the writer of a manifest pass's checked rows.
type admitQueue struct {
	rows   chan checkedRow
	done   chan struct{}
	err    error // the writer's; read after done
	failed atomic.Bool
	// unrecorded counts the rows sent and not yet recorded: the
	// throttle counts them in the window.
	unrecorded atomic.Int64
	// room is how many more rows the throttle lets through before it
	// counts the window again (the reader's alone).
	room int
}

// admitQueue starts the writer of a pass's checked rows.
func (r *runner) admitQueue() *admitQueue {
	q := &admitQueue{rows: make(chan checkedRow, journal.AdmitBatch), done: make(chan struct{})}
	go func() {
		defer close(q.done)
		if q.err = r.recordAdmissions(q); q.err != nil {
			q.failed.Store(true)
			for range q.rows { // the reader stops at its next row
			}
		}
	}()
	return q
}

// send hands c to the writer; false when the writer has failed (finish
// says why).
func (q *admitQueue) send(c checkedRow) bool {
	if q.failed.Load() {
		return false
	}
	q.unrecorded.Add(1)
	q.rows <- c
	return true
}

// finish waits until every row sent is recorded and returns the
// writer's error.
func (q *admitQueue) finish() error {
	close(q.rows)
	<-q.done
	return q.err
}

// recordAdmissions records the rows sent, by the batch, until the queue
// is closed.
func (r *runner) recordAdmissions(q *admitQueue) error {
	rows := q.rows
	for c := range rows {
		batch := []checkedRow{c}
	gather:
		for len(batch) < journal.AdmitBatch {
			select {
			case c, ok := <-rows:
				if !ok {
					break gather
				}
				batch = append(batch, c)
			default:
				break gather
			}
		}
		err := r.recordBatch(batch)
		q.unrecorded.Add(-int64(len(batch)))
		if err != nil {
			return err
		}
	}
	return nil
}

// recordBatch records batch in one transaction and hands each document
// it queued to the workers, one wake-up each.
func (r *runner) recordBatch(batch []checkedRow) error {
	as := make([]journal.Admission, len(batch))
	for i, c := range batch {
		as[i] = c.a
	}
	sts, err := r.j.AdmitMany(as)
	if err != nil {
		return err
	}
	for i, c := range batch {
		st := sts[i]
		r.o.Progress.Event(Event{Kind: EventAdmitted, Time: c.start, Line: c.row.Line, SourceID: c.row.SourceID})
		r.log.Info("row admitted", "line", c.row.Line, "source_id", c.row.SourceID, "sha256", c.a.SHA256, "pages", c.a.Pages,
			"state", st.State, "reason", st.Reason, "admit_ms", time.Since(c.start).Milliseconds(), "batch", len(batch))
		if st.State.Final() {
			r.o.Progress.Event(Event{Kind: EventFinished, Time: time.Now(), Line: c.row.Line, SourceID: c.row.SourceID, State: st.State, Reason: st.Reason})
			continue
		}
		r.admitted.put(job{row: c.row, docID: st.DocID, pageDPI: c.pageDPI, o: c.o})
		r.wake.notifyOne()
	}
	return nil
}
