package journal

import (
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestRebindRows: the manifest sorted, a row deleted, one inserted and one
// appended: each row the journal holds moves to its source_id's line,
// the deleted one is withdrawn (out of the open rows, its verdict kept),
// the custody log still derives every table, and putting the row back
// restores it.
func TestRebindRows(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		admit(t, j, 2, "R-1", "a1")
		admit(t, j, 3, "R-2", "a2")
		admit(t, j, 4, "R-1", "a1") // a duplicate of line 2
		if err := j.Reject("m.csv", 5, "R-3", "", outcome.MissingFile, "k"); err != nil {
			t.Fatal(err)
		}
		b, err := j.Rebind("m.csv", []ManifestLine{{2, "R-1"}, {3, "R-2"}, {4, "R-1"}, {5, "R-3"}})
		if err != nil || b.Changed() {
			t.Fatalf("nothing moved: %+v, %v", b, err)
		}
		// Sorted in reverse, R-2 deleted, R-9 inserted at the top.
		b, err = j.Rebind("m.csv", []ManifestLine{{2, "R-9"}, {3, "R-3"}, {4, "R-1"}, {5, "R-1"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Moved) != 2 || len(b.Withdrawn) != 1 || b.Withdrawn[0].SourceID != "R-2" || b.Withdrawn[0].From != 3 {
			t.Fatalf("rebinding = %+v", b)
		}
		for line, want := range map[int]string{3: "R-3", 4: "R-1", 5: "R-1"} {
			if st := row(t, j, line); st.SourceID != want {
				t.Errorf("line %d = %s, want %s", line, st.SourceID, want)
			}
		}
		if st := row(t, j, 3); st.State != outcome.Rejected || st.Reason != outcome.MissingFile {
			t.Errorf("the rejected row moved without its verdict: %+v", st)
		}
		if _, ok, _ := j.Row("m.csv", 2); ok {
			t.Error("line 2 (new) is recorded")
		}
		w, err := j.WithdrawnRows()
		if err != nil || len(w) != 1 || w[0].SourceID != "R-2" || w[0].Line != 3 || w[0].State != outcome.Queued {
			t.Fatalf("withdrawn rows = %+v, %v", w, err)
		}
		if docs, err := j.WithdrawnDocuments(); err != nil || len(docs) != 1 {
			t.Errorf("withdrawn documents = %v, %v", docs, err)
		}
		open, err := j.OpenRows("")
		if err != nil || open[outcome.MissingFile] != 1 || len(open) != 1 {
			t.Errorf("open rows = %v, %v", open, err)
		}
		var shown []ReportRow
		if err := j.ReportRows("m.csv", func(r ReportRow) error { shown = append(shown, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(shown) != 4 || !shown[0].Withdrawn || shown[0].Line != 3 || shown[0].SourceID != "R-2" {
			t.Errorf("report rows = %+v", shown)
		}
		chainClean(t, j)
		// R-2 back at the end: restored, as it was.
		b, err = j.Rebind("m.csv", []ManifestLine{{2, "R-9"}, {3, "R-3"}, {4, "R-1"}, {5, "R-1"}, {6, "R-2"}})
		if err != nil || len(b.Restored) != 1 || b.Restored[0].To != 6 {
			t.Fatalf("restored: %+v, %v", b, err)
		}
		if st := row(t, j, 6); st.SourceID != "R-2" || st.State != outcome.Queued {
			t.Errorf("restored row = %+v", st)
		}
		if w, _ := j.WithdrawnRows(); len(w) != 0 {
			t.Errorf("still withdrawn: %+v", w)
		}
		chainClean(t, j)
	})
}

// TestLineNow: an event that named a row by its line then finds it where
// it is now, through every move since.
func TestLineNow(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		admit(t, j, 2, "R-1", "a1")
		admit(t, j, 3, "R-2", "a2")
		if _, err := j.Rebind("m.csv", []ManifestLine{{2, "R-2"}, {3, "R-1"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := j.Rebind("m.csv", []ManifestLine{{2, "R-0"}, {3, "R-2"}}); err != nil {
			t.Fatal(err)
		}
		lineNow, err := j.LineNow()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{"R-2": 3, "R-1": -1}
		err = j.Events(func(e Event) error {
			if e.Kind == EventRowAdmitted {
				if got := lineNow(e); got != want[e.SourceID] {
					t.Errorf("%s admitted at line %d: now %d, want %d", e.SourceID, e.Line, got, want[e.SourceID])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func chainClean(t *testing.T, j *Journal) {
	t.Helper()
	c, err := j.CheckChain()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Problems {
		t.Errorf("custody: %s: %s", p.Subject, p.Detail)
	}
}

// TestRebindKeepsAFixedRow: a rejected row whose source_id was filled in
// (missing_field fixed) stays at its line, to be admitted again, rather
// than withdrawn; a rejected row whose line another row took is withdrawn.
func TestRebindKeepsAFixedRow(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		admit(t, j, 2, "R-1", "a1")
		if err := j.Reject("m.csv", 3, "", "", outcome.MissingField, "k1"); err != nil {
			t.Fatal(err)
		}
		if err := j.Reject("m.csv", 4, "R-4", "", outcome.MissingFile, "k2"); err != nil {
			t.Fatal(err)
		}
		b, err := j.Rebind("m.csv", []ManifestLine{{2, "R-5"}, {3, "R-3"}, {4, "R-1"}})
		if err != nil || len(b.Moved) != 1 || len(b.Withdrawn) != 1 || b.Withdrawn[0].SourceID != "R-4" {
			t.Fatalf("rebinding = %+v, %v", b, err)
		}
		if st := row(t, j, 3); st.SourceID != "" || st.Reason != outcome.MissingField {
			t.Errorf("the fixed row moved: %+v", st)
		}
	})
}
