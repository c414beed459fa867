package journal

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

var policy = Policy{MaxAttempts: 3, LeaseTTL: time.Minute}

func admit(t *testing.T, j *Journal, line int, source, sha string) RowStatus {
	t.Helper()
	st, err := j.Admit(Admission{Manifest: "m.csv", Line: line, SourceID: source, SHA256: sha, Path: source + ".pdf", Size: 10, Pages: 1})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAdmit(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		first := admit(t, j, 2, "R-1", "aaa")
		tests := []struct {
			name      string
			line      int
			source    string
			sha       string
			want      outcome.State
			reason    outcome.Reason
			sameDocAs int64
		}{
			{"new document is queued", 3, "R-2", "bbb", outcome.Queued, "", 0},
			{"same bytes again is a duplicate", 4, "R-1", "aaa", outcome.Duplicate, "", first.DocID},
			{"different bytes is a conflict", 5, "R-1", "ccc", outcome.Rejected, outcome.Conflict, 0},
			{"a row seen before keeps its status", 2, "R-1", "aaa", outcome.Queued, "", first.DocID},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				st := admit(t, j, tc.line, tc.source, tc.sha)
				if st.State != tc.want || st.Reason != tc.reason {
					t.Errorf("state %s/%s, want %s/%s", st.State, st.Reason, tc.want, tc.reason)
				}
				if tc.sameDocAs != 0 && st.DocID != tc.sameDocAs {
					t.Errorf("doc %d, want %d", st.DocID, tc.sameDocAs)
				}
			})
		}
		if _, err := j.Admit(Admission{Manifest: "m.csv", Line: 2, SourceID: "R-9", SHA256: "aaa"}); !errors.Is(err, ErrManifestChanged) {
			t.Errorf("changed source_id at a known line: %v, want ErrManifestChanged", err)
		}
		// The file of a queued document changed between runs: conflict, never overwritten.
		st := admit(t, j, 3, "R-2", "zzz")
		if st.State != outcome.Rejected || st.Reason != outcome.Conflict {
			t.Errorf("changed bytes on resume: %s/%s, want rejected/conflict", st.State, st.Reason)
		}
	})
}

func TestLeaseLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		doc := admit(t, j, 2, "R-1", "aaa").DocID
		a, b := NewOwner(), NewOwner()
		l, err := j.Claim(doc, a, policy)
		if err != nil {
			t.Fatal(err)
		}
		if l.Attempt != 1 {
			t.Errorf("attempt %d, want 1", l.Attempt)
		}
		if _, err := j.Claim(doc, b, policy); !errors.Is(err, ErrNotClaimable) {
			t.Fatalf("second claim: %v, want ErrNotClaimable", err)
		}
		if err := j.PageDone(l, PageMetric{Page: 0, DPI: 300, Render: time.Millisecond, OCR: time.Second, Words: 5, MeanConfidence: 90}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(l, Result{State: outcome.Done, MeanConfidence: 90, Band: "high", Artifact: "x", ArtifactSHA256: "h"}); err != nil {
			t.Fatal(err)
		}
		if err := j.Finish(l, Result{State: outcome.Done}); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("finishing twice: %v, want ErrLeaseLost", err)
		}
		if _, err := j.Claim(doc, b, policy); !errors.Is(err, ErrNotClaimable) {
			t.Errorf("claiming a done document: %v, want ErrNotClaimable", err)
		}
		st, _, _ := j.Row("m.csv", 2)
		if st.State != outcome.Done {
			t.Errorf("row state %s, want done", st.State)
		}
		tm, err := j.Timings()
		if err != nil || tm.Pages != 1 {
			t.Errorf("timings %+v %v, want 1 page", tm, err)
		}
		// The page took 1 ms to render and 1 s to read.
		if len(tm.PageOCR) != 1 || tm.PageOCR[0] < 1 || tm.PageOCR[0] > 1.01 || tm.PageSecondsTotal != tm.PageOCR[0] {
			t.Errorf("page seconds %v, total %v; want one page of about 1 s, and it the total", tm.PageOCR, tm.PageSecondsTotal)
		}
	})
}

func TestExpiredLeaseIsTakenOver(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		doc := admit(t, j, 2, "R-1", "aaa").DocID
		short := Policy{MaxAttempts: 3, LeaseTTL: -time.Second} // already expired
		old, err := j.Claim(doc, Owner("otherhost/1/1/x"), short)
		if err != nil {
			t.Fatal(err)
		}
		l, err := j.Claim(doc, NewOwner(), policy)
		if err != nil {
			t.Fatalf("claim after expiry: %v", err)
		}
		if err := j.Finish(old, Result{State: outcome.Done}); !errors.Is(err, ErrLeaseLost) {
			t.Errorf("old owner finishing: %v, want ErrLeaseLost", err)
		}
		if err := j.Finish(l, Result{State: outcome.Done}); err != nil {
			t.Fatal(err)
		}
		atts := attemptsOf(t, j, doc)
		if len(atts) != 2 || atts[0].Outcome != AttemptAbandoned || atts[1].Outcome != AttemptDone {
			t.Errorf("attempts %+v, want abandoned then done", atts)
		}
	})
}

// attemptsOf returns the attempts on a document, oldest first, as History
// gives them.
func attemptsOf(t *testing.T, j *Journal, doc int64) []AttemptSpan {
	t.Helper()
	var atts []AttemptSpan
	err := j.History(time.Now(), func(d DocSpan, a []AttemptSpan) error {
		if d.ID == doc {
			atts = append(atts, a...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return atts
}

func TestDeadOwnerOnThisHostIsTakenOver(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		doc := admit(t, j, 2, "R-1", "aaa").DocID
		o := NewOwner()
		// Same host, a pid with another start time: a dead process.
		dead := Owner(string(o)[:len(string(o))-len("/xxxxxxxx")] + "9/zzzzzzzz")
		if _, err := j.Claim(doc, dead, policy); err != nil {
			t.Fatal(err)
		}
		if _, err := j.Claim(doc, o, policy); err != nil {
			t.Fatalf("claim from a dead owner: %v", err)
		}
	})
}

func TestFailUntilExhausted(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		doc := admit(t, j, 2, "R-1", "aaa").DocID
		o := NewOwner()
		for i := 1; i <= 3; i++ {
			l, err := j.Claim(doc, o, policy)
			if err != nil {
				t.Fatalf("claim %d: %v", i, err)
			}
			exhausted, err := j.Fail(l, outcome.CauseCrash, time.Now(), policy)
			if err != nil {
				t.Fatal(err)
			}
			if exhausted != (i == 3) {
				t.Errorf("attempt %d: exhausted=%v", i, exhausted)
			}
		}
		d, _ := j.Document(doc)
		if d.State != outcome.Review || d.Reason != outcome.AttemptsExhausted || d.Attempts != 3 {
			t.Errorf("doc %s/%s after %d attempts, want review/attempts_exhausted after 3", d.State, d.Reason, d.Attempts)
		}
	})
}

func TestBackoffAndRelease(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		doc := admit(t, j, 2, "R-1", "aaa").DocID
		o := NewOwner()
		l, _ := j.Claim(doc, o, policy)
		if _, err := j.Fail(l, outcome.CauseIO, time.Now().Add(time.Hour), policy); err != nil {
			t.Fatal(err)
		}
		if _, err := j.Claim(doc, o, policy); !errors.Is(err, ErrNotClaimable) {
			t.Errorf("claim during backoff: %v, want ErrNotClaimable", err)
		}
		doc2 := admit(t, j, 3, "R-2", "bbb").DocID
		l2, _ := j.Claim(doc2, o, policy)
		if err := j.Release(l2); err != nil {
			t.Fatal(err)
		}
		d, _ := j.Document(doc2)
		if d.Attempts != 0 || d.State != outcome.Queued {
			t.Errorf("released doc: attempts %d state %s, want 0 queued", d.Attempts, d.State)
		}
	})
}

// Two handles on one file stand for two processes: each document is claimed
// exactly once.
func TestConcurrentClaims(t *testing.T) {
	eachBackend(t, testConcurrentClaims)
}

func testConcurrentClaims(t *testing.T, be backend) {
	path := be.location(t)
	j1, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j1.Close()
	j2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	var docs []int64
	for i := 0; i < 50; i++ {
		docs = append(docs, admit(t, j1, i+2, string(rune('A'+i%26))+string(rune('a'+i/26)), "h").DocID)
	}
	var mu sync.Mutex
	claimed := map[int64]int{}
	var wg sync.WaitGroup
	for _, j := range []*Journal{j1, j2} {
		wg.Add(1)
		go func(j *Journal) {
			defer wg.Done()
			o := NewOwner()
			for _, d := range docs {
				l, err := j.Claim(d, o, policy)
				if errors.Is(err, ErrNotClaimable) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if err := j.Finish(l, Result{State: outcome.Done}); err != nil {
					t.Error(err)
				}
				mu.Lock()
				claimed[d]++
				mu.Unlock()
			}
		}(j)
	}
	wg.Wait()
	for _, d := range docs {
		if claimed[d] != 1 {
			t.Errorf("doc %d claimed %d times", d, claimed[d])
		}
	}
}
