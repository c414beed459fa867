package journal

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// toReview admits a document and takes it to review low_confidence with
// an artifact named for its attempt.
func toReview(t *testing.T, j *Journal, line int, source string) RowStatus {
	t.Helper()
	st := admit(t, j, line, source, source+"-sha")
	l, err := j.Claim(st.DocID, "o", policy)
	if err != nil {
		t.Fatal(err)
	}
	err = j.Finish(l, Result{State: outcome.Review, Reason: outcome.LowConfidence, MeanConfidence: 50, Band: outcome.BandLow,
		Artifact: "artifacts/" + source + "_a1.json", ArtifactSHA256: "sum-" + source})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestDecide(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		for i, s := range []string{"R-1", "R-2", "R-3"} {
			toReview(t, j, i+2, s)
		}
		queued := admit(t, j, 5, "R-4", "R-4-sha")
		by := Decision{User: "alice", Host: "desk", Note: "checked"}
		tests := []struct {
			name   string
			source string
			action Action
			state  outcome.State
			reason outcome.Reason
		}{
			{"accept makes it done", "R-1", Accept, outcome.Done, ""},
			{"reject makes it rejected_by_person", "R-2", Reject, outcome.Rejected, outcome.RejectedByPerson},
			{"retry queues it", "R-3", Retry, outcome.Queued, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				d := by
				d.Action = tc.action
				got, err := j.Decide(tc.source, d, `{"dpi":400}`)
				if err != nil {
					t.Fatal(err)
				}
				if got.FromState != outcome.Review || got.FromReason != outcome.LowConfidence || got.Artifact == "" || got.At.IsZero() {
					t.Errorf("recorded %+v, want from review low_confidence with the artifact and a time", got)
				}
				doc, _, err := j.DocumentBySource(tc.source)
				if err != nil {
					t.Fatal(err)
				}
				if doc.State != tc.state || doc.Reason != tc.reason {
					t.Errorf("document %s %s, want %s %s", doc.State, doc.Reason, tc.state, tc.reason)
				}
				last, ok, err := j.LatestDecision(doc.ID)
				if err != nil || !ok || last.Action != tc.action || last.User != "alice" || last.Note != "checked" {
					t.Errorf("latest decision %+v %v %v", last, ok, err)
				}
			})
		}

		t.Run("a second decision is refused, naming the first", func(t *testing.T) {
			_, err := j.Decide("R-1", Decision{Action: Reject, User: "bob"}, "")
			var nr *NotInReviewError
			if !errors.As(err, &nr) || nr.State != outcome.Done || nr.Earlier == nil || nr.Earlier.Action != Accept || nr.Earlier.User != "alice" {
				t.Fatalf("got %v, want NotInReviewError naming done and alice's accept", err)
			}
			doc, _, _ := j.DocumentBySource("R-1")
			if doc.State != outcome.Done {
				t.Errorf("the refused decision changed the document to %s", doc.State)
			}
		})
		t.Run("a queued document is refused", func(t *testing.T) {
			_, err := j.Decide("R-4", Decision{Action: Accept}, "")
			var nr *NotInReviewError
			if !errors.As(err, &nr) || nr.State != outcome.Queued || nr.Earlier != nil {
				t.Fatalf("got %v, want NotInReviewError naming queued", err)
			}
			_ = queued
		})
		t.Run("an unknown source_id", func(t *testing.T) {
			if _, err := j.Decide("R-9", Decision{Action: Accept}, ""); !errors.Is(err, ErrNoDocument) {
				t.Fatalf("got %v, want ErrNoDocument", err)
			}
		})
		t.Run("events and report rows carry the decisions", func(t *testing.T) {
			ds, err := j.Decisions()
			if err != nil || len(ds) != 3 {
				t.Fatalf("%d decisions, %v; want 3", len(ds), err)
			}
			if string(ds[2].Settings) != `{"dpi":400}` || ds[2].Attempts != 1 {
				t.Errorf("retry recorded %+v, want its settings and the attempts it superseded", ds[2].Decision)
			}
			arts, err := j.EventArtifacts()
			if err != nil || len(arts) != 3 || arts[2].Artifact != "artifacts/R-3_a1.json" || arts[2].SHA256 != "sum-R-3" {
				t.Fatalf("event artifacts %+v, %v", arts, err)
			}
			got := map[string]Action{}
			err = j.ReportRows("", func(r ReportRow) error {
				if r.Decision != nil {
					got[r.SourceID] = r.Decision.Action
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || got["R-1"] != Accept || got["R-2"] != Reject || got["R-3"] != Retry {
				t.Errorf("report rows' decisions %v", got)
			}
		})
	})
}

// TestRetryCountsAttemptsAfresh: a document that used up its attempts
// and was sent back by a person gets the full cap again, while its attempt
// numbers (and so its artifacts' names) keep increasing.
func TestRetryCountsAttemptsAfresh(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		st := admit(t, j, 2, "R-1", "sha")
		for i := 0; i < policy.MaxAttempts; i++ {
			l, err := j.Claim(st.DocID, "o", policy)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.Fail(l, outcome.CauseCrash, time.Time{}, policy); err != nil {
				t.Fatal(err)
			}
		}
		doc, _ := j.Document(st.DocID)
		if doc.State != outcome.Review || doc.Reason != outcome.AttemptsExhausted {
			t.Fatalf("after %d failures: %s %s", policy.MaxAttempts, doc.State, doc.Reason)
		}
		policyJSON, _ := json.Marshal(map[string]any{"dpi": 400})
		if _, err := j.Decide("R-1", Decision{Action: Retry, User: "alice"}, string(policyJSON)); err != nil {
			t.Fatal(err)
		}
		doc, _ = j.Document(st.DocID)
		if doc.AttemptsBase != policy.MaxAttempts || doc.RetryPolicy != string(policyJSON) {
			t.Errorf("attempts_base %d retry_policy %q", doc.AttemptsBase, doc.RetryPolicy)
		}
		for i := 0; i < policy.MaxAttempts; i++ {
			l, err := j.Claim(st.DocID, "o", policy)
			if err != nil {
				t.Fatalf("claim %d after the retry: %v", i+1, err)
			}
			if want := policy.MaxAttempts + i + 1; l.Attempt != want {
				t.Errorf("attempt number %d, want %d", l.Attempt, want)
			}
			exhausted, err := j.Fail(l, outcome.CauseCrash, time.Time{}, policy)
			if err != nil {
				t.Fatal(err)
			}
			if exhausted != (i == policy.MaxAttempts-1) {
				t.Errorf("attempt %d after the retry: exhausted %v", i+1, exhausted)
			}
		}
	})
}
