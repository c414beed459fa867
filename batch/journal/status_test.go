package journal

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

func TestOpenReadOnly(t *testing.T) {
	dir := t.TempDir()
	t.Run("a missing journal is not created", func(t *testing.T) {
		path := filepath.Join(dir, "none.db")
		if _, err := OpenReadOnly(path); err == nil {
			t.Fatal("OpenReadOnly of a missing file succeeded")
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("OpenReadOnly created %s", path)
		}
	})
	t.Run("not a journal", func(t *testing.T) {
		path := filepath.Join(dir, "text.db")
		os.WriteFile(path, []byte("hello"), 0o600)
		if _, err := OpenReadOnly(path); err == nil {
			t.Fatal("OpenReadOnly of a text file succeeded")
		}
	})
	t.Run("reads while the writer holds the journal open, and cannot write", func(t *testing.T) {
		path := filepath.Join(dir, "journal.db")
		w, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.Admit(Admission{Manifest: "m.csv", Line: 2, SourceID: "R-1", SHA256: "aaa", Path: "a.pdf", Size: 10, Pages: 2}); err != nil {
			t.Fatal(err)
		}
		r, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		snap, err := r.Snapshot(time.Now(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Rows[outcome.Queued] != 1 || snap.Waiting != 1 || snap.RemainingPages != 2 {
			t.Errorf("snapshot %+v", snap)
		}
		if err := r.SetMeta("x", "y"); err == nil {
			t.Error("a read-only journal accepted a write")
		}
		// The writer goes on while the reader is open.
		if _, err := w.Admit(Admission{Manifest: "m.csv", Line: 3, SourceID: "R-2", SHA256: "bbb", Path: "b.pdf", Size: 10, Pages: 1}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSnapshot(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		a := admit(t, j, 2, "R-1", "aaa")
		b := admit(t, j, 3, "R-2", "bbb")
		admit(t, j, 4, "R-3", "ccc")
		admit(t, j, 5, "R-1", "aaa") // duplicate
		if err := j.Reject("m.csv", 6, "R-9", "", outcome.NotPDF, ""); err != nil {
			t.Fatal(err)
		}
		// a is done, b is running under a live lease, R-3 waits; another
		// process on a host we cannot see holds nothing.
		la, err := j.Claim(a.DocID, NewOwner(), policy)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.PageDone(la, PageMetric{Page: 0, DPI: 150, Render: 100 * time.Millisecond, OCR: 400 * time.Millisecond, Words: 50, MeanConfidence: 90}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(la, Result{State: outcome.Done, MeanConfidence: 90, Band: "high"}); err != nil {
			t.Fatal(err)
		}
		owner := NewOwner()
		if _, err := j.Claim(b.DocID, owner, policy); err != nil {
			t.Fatal(err)
		}
		snap, err := j.Snapshot(time.Now(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		want := map[outcome.State]int{outcome.Done: 1, outcome.Queued: 2, outcome.Duplicate: 1, outcome.Rejected: 1}
		for s, n := range want {
			if snap.Rows[s] != n {
				t.Errorf("rows %s = %d, want %d (%v)", s, snap.Rows[s], n, snap.Rows)
			}
		}
		if snap.Running != 1 || snap.Waiting != 1 || snap.PagesInWindow != 1 || snap.Documents != 3 {
			t.Errorf("running %d waiting %d pages %d documents %d", snap.Running, snap.Waiting, snap.PagesInWindow, snap.Documents)
		}
		if len(snap.Leases) != 1 || snap.Leases[0].Owner != string(owner) || !snap.Leases[0].Live || snap.Leases[0].Documents != 1 {
			t.Errorf("leases %+v, want one live lease of %s", snap.Leases, owner)
		}
		// A minute later the lease has expired: stale, and the document waits.
		later, err := j.Snapshot(time.Now().Add(2*time.Minute), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if later.Running != 0 || later.Waiting != 2 || later.Leases[0].Live || later.PagesInWindow != 0 {
			t.Errorf("after expiry: running %d waiting %d leases %+v pages %d", later.Running, later.Waiting, later.Leases, later.PagesInWindow)
		}
	})
}

// TestHistoryTimes: History gives back the times the journal's clock
// gave each step.
func TestHistoryTimes(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		now := base
		j := be.open(t, WithClock(func() time.Time { return now }))
		a := admit(t, j, 2, "R-1", "aaa")
		now = now.Add(time.Second)
		l, err := j.Claim(a.DocID, "elsewhere/1/1/aaaa", policy)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		if err := j.PageDone(l, PageMetric{Page: 0, DPI: 150, Render: time.Millisecond, OCR: 2 * time.Millisecond}, time.Minute); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		if err := j.Finish(l, Result{State: outcome.Done}); err != nil {
			t.Fatal(err)
		}
		var docs []DocSpan
		var atts []AttemptSpan
		err = j.History(base.Add(time.Hour), func(d DocSpan, a []AttemptSpan) error {
			docs = append(docs, d)
			atts = append(atts, a...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 1 || len(atts) != 1 {
			t.Fatalf("%d documents, %d attempts", len(docs), len(atts))
		}
		d, at := docs[0], atts[0]
		if !d.AdmittedAt.Equal(base) || !d.StartedAt.Equal(base.Add(time.Second)) || !d.FinishedAt.Equal(base.Add(3*time.Second)) {
			t.Errorf("document times %v %v %v", d.AdmittedAt, d.StartedAt, d.FinishedAt)
		}
		if !at.StartedAt.Equal(d.StartedAt) || !at.EndedAt.Equal(d.FinishedAt) || !at.LastPage.Equal(base.Add(2*time.Second)) ||
			at.Pages != 1 || at.Render != time.Millisecond || at.Recognise != 2*time.Millisecond || at.FirstPageCost != 3*time.Millisecond || at.Live {
			t.Errorf("attempt %+v", at)
		}
		if last, err := j.LatestRecorded(); err != nil || !last.Equal(base.Add(3*time.Second)) {
			t.Errorf("LatestRecorded = %v, %v", last, err)
		}
	})
}

// TestHistoryGroupsAttempts: History gives each document once, in
// admission order, with its own attempts oldest first, a document never
// claimed with none, and stops at fn's error.
func TestHistoryGroupsAttempts(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		a := admit(t, j, 2, "R-1", "aaa")
		b := admit(t, j, 3, "R-2", "bbb")
		c := admit(t, j, 4, "R-3", "ccc") // never claimed
		l, err := j.Claim(a.DocID, "elsewhere/1/1/aaaa", policy)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Fail(l, outcome.CauseCrash, time.Now().Add(-time.Minute), policy); err != nil {
			t.Fatal(err)
		}
		lb, err := j.Claim(b.DocID, "elsewhere/1/1/aaaa", policy)
		if err != nil {
			t.Fatal(err)
		}
		for page := range 2 {
			if err := j.PageDone(lb, PageMetric{Page: page, DPI: 150, OCR: time.Millisecond}, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Finish(lb, Result{State: outcome.Done}); err != nil {
			t.Fatal(err)
		}
		if _, err := j.Claim(a.DocID, "elsewhere/1/1/aaaa", policy); err != nil {
			t.Fatal(err)
		}
		type doc struct {
			id       int64
			attempts []int
			pages    []int
		}
		var got []doc
		err = j.History(time.Now(), func(d DocSpan, atts []AttemptSpan) error {
			g := doc{id: d.ID}
			for _, at := range atts {
				if at.DocID != d.ID {
					t.Errorf("document %d holds an attempt of %d", d.ID, at.DocID)
				}
				g.attempts = append(g.attempts, at.Number)
				g.pages = append(g.pages, at.Pages)
			}
			got = append(got, g)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []doc{{a.DocID, []int{1, 2}, []int{0, 0}}, {b.DocID, []int{1}, []int{2}}, {c.DocID, nil, nil}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("history %+v, want %+v", got, want)
		}
		stop := errors.New("stop")
		calls := 0
		if err := j.History(time.Now(), func(DocSpan, []AttemptSpan) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
			t.Errorf("History returned %v after %d calls, want fn's error after one", err, calls)
		}
	})
}
