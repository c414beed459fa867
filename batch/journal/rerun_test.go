package journal

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

func row(t *testing.T, j *Journal, line int) RowStatus {
	t.Helper()
	st, ok, err := j.Row("m.csv", line)
	if err != nil || !ok {
		t.Fatalf("row %d: %v, %v", line, ok, err)
	}
	return st
}

func events(t *testing.T, j *Journal) []Event {
	t.Helper()
	var out []Event
	if err := j.Events(func(e Event) error { out = append(out, e); return nil }, HistoryKinds...); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadmitRejectedRow: a rejected row keeps its admission key; Readmit
// records the verdict as an event and removes the row, which may then be
// admitted under another source_id.
func TestReadmitRejectedRow(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		if err := j.Reject("m.csv", 2, "", "", outcome.MissingField, "key-1"); err != nil {
			t.Fatal(err)
		}
		st := row(t, j, 2)
		if st.AdmitKey != "key-1" || st.State != outcome.Rejected {
			t.Fatalf("rejected row = %+v", st)
		}
		if err := j.Readmit(st); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := j.Row("m.csv", 2); ok {
			t.Fatal("a readmitted rejected row is still recorded")
		}
		ev := events(t, j)
		var d Readmission
		if len(ev) != 1 || ev[0].Kind != EventRowReadmitted || ev[0].Line != 2 || json.Unmarshal(ev[0].Data, &d) != nil ||
			d.Reason != outcome.MissingField || d.State != outcome.Rejected {
			t.Fatalf("events = %+v", ev)
		}
		if st := admit(t, j, 2, "R-1", "aa"); st.State != outcome.Queued {
			t.Errorf("admitted again under its source_id: %+v", st)
		}
		// A second Readmit of the verdict that is gone is refused.
		if err := j.Readmit(RowStatus{Manifest: "m.csv", Line: 2, Reason: outcome.MissingField}); !errors.Is(err, ErrNotReadmittable) {
			t.Errorf("Readmit of a row now queued = %v, want ErrNotReadmittable", err)
		}
	})
}

// TestReadmitRefusesConflict: a conflict is never admitted again.
func TestReadmitRefusesConflict(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		admit(t, j, 2, "R-1", "aa")
		st := admit(t, j, 3, "R-1", "bb")
		if st.Reason != outcome.Conflict {
			t.Fatalf("row 3 = %+v, want a conflict", st)
		}
		if err := j.Readmit(st); !errors.Is(err, ErrNotReadmittable) {
			t.Errorf("Readmit(conflict) = %v, want ErrNotReadmittable", err)
		}
		if len(events(t, j)) != 0 {
			t.Error("a refused Readmit recorded an event")
		}
	})
}

// TestReadmitDocument: a document rejected while queued (its file
// vanished) goes back to the queue, its attempts counted afresh and its
// attempt numbers going on.
func TestReadmitDocument(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		p := Policy{MaxAttempts: 1, LeaseTTL: policy.LeaseTTL}
		st := admit(t, j, 2, "R-1", "aa")
		l, err := j.Claim(st.DocID, "me", p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := j.Fail(l, outcome.CauseIO, j.now(), Policy{MaxAttempts: 2}); err != nil {
			t.Fatal(err)
		}
		if err := j.Reject("m.csv", 2, "R-1", "", outcome.MissingFile, "key-1"); err != nil {
			t.Fatal(err)
		}
		st = row(t, j, 2)
		if st.State != outcome.Rejected || st.Reason != outcome.MissingFile || st.AdmitKey != "key-1" {
			t.Fatalf("row = %+v, want rejected missing_file with its key", st)
		}
		if err := j.Readmit(st); err != nil {
			t.Fatal(err)
		}
		st = row(t, j, 2)
		if st.State != outcome.Queued || st.AdmitKey != "" {
			t.Fatalf("readmitted row = %+v, want queued without a key", st)
		}
		// One attempt was used; with a cap of 1 the document is claimable
		// again all the same, as attempt 2.
		l, err = j.Claim(st.DocID, "me", p)
		if err != nil || l.Attempt != 2 {
			t.Fatalf("claim after Readmit = %+v, %v; want attempt 2", l, err)
		}
		if ev := events(t, j); len(ev) != 1 || ev[0].DocID != st.DocID {
			t.Errorf("events = %+v", ev)
		}
	})
}

// TestDigest: the fields column changes with any of the four fields,
// names the ones that changed, differs between journals and never holds
// a value.
func TestDigest(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j, k := be.open(t), be.open(t)
		f := RowFields{Path: "docs/a.pdf", SHA256: "", ParticipantID: "P-000123", ReferralDate: "2021-02-21"}
		a, err := j.Digest(f)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := j.Digest(f); again != a {
			t.Errorf("the same fields digest as %s then %s", a, again)
		}
		if other, _ := k.Digest(f); other == a {
			t.Error("two journals digest the same fields alike: no salt")
		}
		if strings.Contains(a, "P-000123") || !regexp.MustCompile(`^\{("[a-z_0-9]+":"[0-9a-f]{8}",?){4}\}$`).MatchString(a) {
			t.Errorf("digest %s holds more than four 8-hex digests", a)
		}
		g := f
		g.ParticipantID, g.ReferralDate = "P-000124", "2021-02-22"
		b, _ := j.Digest(g)
		if got, want := ChangedFields(a, b), []string{FieldParticipantID, FieldReferralDate}; !slices.Equal(got, want) {
			t.Errorf("ChangedFields = %v, want %v", got, want)
		}
		if got := ChangedFields("", b); got != nil {
			t.Errorf("ChangedFields from no digests = %v, want none", got)
		}
	})
}

// TestRequeue: a row in review whose fields changed sends its document
// back to the queue; the artifact of its reading is recorded as
// superseded; a done row is refused.
func TestRequeue(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		finish := func(line int, source string, state outcome.State, reason outcome.Reason) RowStatus {
			t.Helper()
			st, err := j.Admit(Admission{Manifest: "m.csv", Line: line, SourceID: source, SHA256: source, Path: "a.pdf", Size: 1, Pages: 1, Fields: `{"path":"1"}`})
			if err != nil {
				t.Fatal(err)
			}
			l, err := j.Claim(st.DocID, "me", policy)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Finish(l, Result{State: state, Reason: reason, Artifact: "artifacts/" + source + "_a1.json", ArtifactSHA256: "s-" + source}); err != nil {
				t.Fatal(err)
			}
			return row(t, j, line)
		}
		rev := finish(2, "R-1", outcome.Review, outcome.IDNotFound)
		done := finish(3, "R-2", outcome.Done, "")
		if rev.Fields != `{"path":"1"}` {
			t.Fatalf("fields = %q", rev.Fields)
		}
		if err := j.Requeue("m.csv", 3, `{"path":"2"}`, []string{FieldPath}); !errors.Is(err, ErrNotReadmittable) {
			t.Errorf("Requeue(done) = %v, want ErrNotReadmittable", err)
		}
		if err := j.Requeue("m.csv", 2, `{"path":"2"}`, []string{FieldPath}); err != nil {
			t.Fatal(err)
		}
		st := row(t, j, 2)
		if st.State != outcome.Queued || st.Fields != `{"path":"2"}` {
			t.Errorf("requeued row = %+v", st)
		}
		sup, err := j.EventArtifacts()
		if err != nil {
			t.Fatal(err)
		}
		if len(sup) != 1 || sup[0].Artifact != "artifacts/R-1_a1.json" || sup[0].SHA256 != "s-R-1" || sup[0].SourceID != "R-1" || sup[0].Kind != EventRowChanged {
			t.Errorf("superseded = %+v", sup)
		}
		if l, err := j.Claim(st.DocID, "me", policy); err != nil || l.Attempt != 2 {
			t.Errorf("claim after Requeue = %+v, %v; want attempt 2 (a new artifact name)", l, err)
		}
		if st := row(t, j, 3); st.State != outcome.Done || done.DocID != st.DocID {
			t.Errorf("done row = %+v", st)
		}
	})
}

// TestRerunColumnsOnVersion1: a journal an earlier build wrote has no
// digests or keys; once migrated they read empty and are recorded on
// first sight, never overwritten.
func TestRerunColumnsOnVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	admit(t, j, 2, "R-1", "aa")
	j.Reject("m.csv", 3, "R-2", "", outcome.BadDate, "")
	j.Close()
	downgrade(t, path)
	if j, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if st := row(t, j, 2); st.Fields != "" || st.AdmitKey != "" {
		t.Fatalf("migrated row = %+v", st)
	}
	for i, v := range []string{`{"path":"1"}`, `{"path":"2"}`} {
		if err := j.SetRowFields("m.csv", 2, v); err != nil {
			t.Fatal(err)
		}
		if err := j.SetAdmitKey("m.csv", 3, v); err != nil {
			t.Fatal(err)
		}
		if st := row(t, j, 2); st.Fields != `{"path":"1"}` {
			t.Errorf("SetRowFields #%d: fields %q, want the first", i+1, st.Fields)
		}
		if st := row(t, j, 3); st.AdmitKey != `{"path":"1"}` {
			t.Errorf("SetAdmitKey #%d: key %q, want the first", i+1, st.AdmitKey)
		}
	}
}
