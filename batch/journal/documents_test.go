package journal

import (
	"errors"
	"slices"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestDocumentsInOrder: Documents visits every document in manifest
// order, QueuedDocuments and QueuedOf those not final (a document never
// claimed has no next attempt's time and no lease's); an error of fn
// ends the walk and is returned.
func TestDocumentsInOrder(t *testing.T) {
	j := backends[0].open(t)
	admit(t, j, 4, "R-4", "ddd")
	done := admit(t, j, 2, "R-2", "bbb")
	admit(t, j, 3, "R-3", "ccc")
	finishDoc(t, j, done, Result{State: outcome.Done, Band: outcome.BandHigh, Artifact: "artifacts/b.json", ArtifactSHA256: "s"})
	walk := func(name string, each func(func(Doc) error) error, want []string) {
		t.Helper()
		var got []string
		if err := each(func(d Doc) error { got = append(got, d.SourceID); return nil }); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", name, got, err, want)
		}
	}
	walk("Documents", j.Documents, []string{"R-2", "R-3", "R-4"})
	if err := j.QueuedDocuments(func(d Doc) error {
		if !d.NextAttemptAt.IsZero() || !d.LeaseExpires.IsZero() {
			t.Errorf("%s, never claimed: next attempt at %v, lease expires %v; want neither", d.SourceID, d.NextAttemptAt, d.LeaseExpires)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	walk("QueuedDocuments", j.QueuedDocuments, []string{"R-3", "R-4"})
	walk("QueuedOf", func(fn func(Doc) error) error { return j.QueuedOf([]string{"m.csv"}, fn) }, []string{"R-3", "R-4"})
	stop := errors.New("stop")
	visited := 0
	if err := j.Documents(func(Doc) error { visited++; return stop }); !errors.Is(err, stop) || visited != 1 {
		t.Errorf("fn's error: %v after %d documents, want it after 1", err, visited)
	}
}

// TestRejectionDetail: a refused row's detail is kept and shown with
// its row; a refusal without one shows none.
func TestRejectionDetail(t *testing.T) {
	j := backends[0].open(t)
	const detail = "column referral_date: not a date"
	if err := j.RejectDetail("m.csv", 2, "R-1", "", outcome.BadDate, "key-1", detail); err != nil {
		t.Fatal(err)
	}
	if err := j.RejectDetail("m.csv", 3, "R-2", "", outcome.MissingFile, "key-2", ""); err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	if err := j.ReportRows("m.csv", func(r ReportRow) error { got[r.Line] = r.Detail; return nil }); err != nil {
		t.Fatal(err)
	}
	if got[2] != detail || got[3] != "" {
		t.Errorf("details %v, want line 2's %q and none on line 3", got, detail)
	}
}
