package journal

import (
	"reflect"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestReviewDetail: a review verdict's detail travels in its own event
// and is shown while the document stays in review for that reason: a
// revalidation to another reason hides it, one back to handwriting
// brings its own, and an accepted document has none. The
// rows_need_person notice's page counts follow it, on both backends.
func TestReviewDetail(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		st := admit(t, j, 2, "R-1", "aaa")
		admit(t, j, 3, "R-2", "bbb")
		l, err := j.Claim(st.DocID, "o", policy)
		must(err)
		const two = "handwritten notes on pages 2 and 4 were not transcribed: read them in the scan"
		must(j.Finish(l, Result{State: outcome.Review, Reason: outcome.Handwriting, Band: outcome.BandMedium,
			Artifact: "artifacts/a.json", ArtifactSHA256: "s1", Detail: two, DetailPages: []int{2, 4}}))
		check := func(wantDetail string, wantPages []int, wantNotice map[int]int) {
			t.Helper()
			var got ReportRow
			must(j.ReportRows("m.csv", func(r ReportRow) error {
				if r.Line == 2 {
					got = r
				}
				return nil
			}))
			if got.Detail != wantDetail || !reflect.DeepEqual(got.DetailPages, wantPages) {
				t.Errorf("row 2: detail %q pages %v, want %q %v", got.Detail, got.DetailPages, wantDetail, wantPages)
			}
			pages, err := handwritingPages(j.db, "m.csv")
			must(err)
			if !reflect.DeepEqual(pages, wantNotice) {
				t.Errorf("handwriting pages %v, want %v", pages, wantNotice)
			}
		}
		check(two, []int{2, 4}, map[int]int{2: 1, 4: 1})

		rv := Revalidation{FromState: outcome.Review, FromReason: outcome.Handwriting, State: outcome.Review, Reason: outcome.IncompleteText,
			Band: outcome.BandMedium, Artifact: "artifacts/a.json", ArtifactSHA256: "s1", Validation: "v2"}
		must(j.Revalidate("m.csv", 2, EventRevalidated, rv, ""))
		check("", nil, nil)

		const one = "a handwritten note on page 3 was not transcribed: read it in the scan"
		rv.FromReason, rv.Reason, rv.Detail, rv.Pages, rv.Validation = outcome.IncompleteText, outcome.Handwriting, one, []int{3}, "v3"
		must(j.Revalidate("m.csv", 2, EventRevalidated, rv, ""))
		check(one, []int{3}, map[int]int{3: 1})

		_, err = j.Decide("R-1", Decision{Action: Accept, User: "u", Host: "h"}, "")
		must(err)
		check("", nil, nil)
	})
}

// TestReviewDetailOfAnotherReason: a document sent back to the queue by
// a person and then out of attempts is in review for attempts_exhausted,
// with no new verdict event: its row does not show the handwriting
// detail of the verdict before the retry.
func TestReviewDetailOfAnotherReason(t *testing.T) {
	j := backends[0].open(t)
	doc := admit(t, j, 2, "R-1", "aaa").DocID
	l, err := j.Claim(doc, "o", policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(l, Result{State: outcome.Review, Reason: outcome.Handwriting, Band: outcome.BandMedium,
		Artifact: "artifacts/a.json", ArtifactSHA256: "s1", Detail: "a handwritten note on page 2 was not transcribed", DetailPages: []int{2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Decide("R-1", Decision{Action: Retry, User: "u", Host: "h"}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Claim(doc, "o", Policy{MaxAttempts: 0, LeaseTTL: time.Minute}); err == nil {
		t.Fatal("claimed a document out of attempts")
	}
	err = j.ReportRows("m.csv", func(r ReportRow) error {
		if r.State != outcome.Review || r.Reason != outcome.AttemptsExhausted {
			t.Errorf("row %d: %s %s, want review %s", r.Line, r.State, r.Reason, outcome.AttemptsExhausted)
		}
		if r.Detail != "" || r.DetailPages != nil {
			t.Errorf("row %d: detail %q pages %v of the verdict before the retry", r.Line, r.Detail, r.DetailPages)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReviewDetailNotOnDuplicates: a row that repeats a document's bytes
// (a duplicate) does not show that document's review detail: the
// person acts on the document's own row.
func TestReviewDetailNotOnDuplicates(t *testing.T) {
	j := backends[0].open(t)
	st := admit(t, j, 2, "R-1", "aaa")
	if dup := admit(t, j, 3, "R-1", "aaa"); dup.State != outcome.Duplicate {
		t.Fatalf("row 3: %s, want a duplicate", dup.State)
	}
	const detail = "a handwritten note on page 1 was not transcribed"
	finishDoc(t, j, st, Result{State: outcome.Review, Reason: outcome.Handwriting, Band: outcome.BandMedium,
		Artifact: "artifacts/a.json", ArtifactSHA256: "s1", Detail: detail, DetailPages: []int{1}})
	got := map[int]string{}
	if err := j.ReportRows("m.csv", func(r ReportRow) error { got[r.Line] = r.Detail; return nil }); err != nil {
		t.Fatal(err)
	}
	if got[2] != detail || got[3] != "" {
		t.Errorf("details %v, want row 2's and none on row 3", got)
	}
}
