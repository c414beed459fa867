package journal

import (
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestRowChangesAreLogged: a row seen again that changes its queued
// document (its file now refused, or its bytes changed) records the
// change in the custody log, with the document, once; a row seen again
// that changes nothing records nothing. The chain then checks clean.
func TestRowChangesAreLogged(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		a := admit(t, j, 2, "R-1", "aaa")
		b := admit(t, j, 3, "R-2", "bbb")
		count := func() (n int, last Event) {
			if err := j.Events(func(e Event) error { n++; last = e; return nil }); err != nil {
				t.Fatal(err)
			}
			return n, last
		}
		n0, _ := count()
		// Seen again, unchanged: nothing to record.
		admit(t, j, 2, "R-1", "aaa")
		if n, _ := count(); n != n0 {
			t.Errorf("a row seen again unchanged added %d events", n-n0)
		}
		// Its bytes changed: its document is a conflict, logged.
		if st := admit(t, j, 2, "R-1", "zzz"); st.State != outcome.Rejected || st.Reason != outcome.Conflict {
			t.Fatalf("changed bytes: %s/%s", st.State, st.Reason)
		}
		n1, last := count()
		if n1 != n0+1 || last.Kind != EventRowRejected || last.DocID != a.DocID || last.Line != 2 {
			t.Errorf("changed bytes logged %d events, last %s of document %d line %d; want one row_rejected of document %d", n1-n0, last.Kind, last.DocID, last.Line, a.DocID)
		}
		// Again: the document is no longer queued, nothing changes.
		admit(t, j, 2, "R-1", "yyy")
		if n, _ := count(); n != n1 {
			t.Errorf("a conflict seen again added %d events", n-n1)
		}
		// The other row's file is now refused: its document is rejected,
		// logged with the document.
		if err := j.Reject("m.csv", 3, "R-2", "bbb", outcome.NotPDF, "k"); err != nil {
			t.Fatal(err)
		}
		n2, last := count()
		if n2 != n1+1 || last.DocID != b.DocID || last.Line != 3 {
			t.Errorf("a refused file logged %d events, last of document %d line %d; want one of document %d", n2-n1, last.DocID, last.Line, b.DocID)
		}
		if d, err := j.Document(b.DocID); err != nil || d.State != outcome.Rejected {
			t.Errorf("document after the refusal: %+v, %v", d, err)
		}
		if err := j.Reject("m.csv", 3, "R-2", "bbb", outcome.NotPDF, "k"); err != nil {
			t.Fatal(err)
		}
		if n, _ := count(); n != n2 {
			t.Errorf("a refusal seen again added %d events", n-n2)
		}
		if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
			t.Errorf("CheckChain: %v, problems %+v", err, c.Problems)
		}
	})
}
