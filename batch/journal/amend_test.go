package journal

import (
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestAmendAndRunVersionsAreLogged: an amendment records the row's new
// field digests, and a revalidation without any leaves them; a run's
// engine versions are recorded with their event. Each change is in the
// custody log, which checks clean.
func TestAmendAndRunVersionsAreLogged(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		st := admit(t, j, 2, "R-1", "aaa")
		l, err := j.Claim(st.DocID, "o", policy)
		must(err)
		must(j.Finish(l, Result{State: outcome.Review, Reason: outcome.LowConfidence, Band: outcome.BandLow,
			Artifact: "artifacts/a.json", ArtifactSHA256: "s1"}))
		fields := func() string {
			t.Helper()
			row, ok, err := j.Row("m.csv", 2)
			if err != nil || !ok {
				t.Fatalf("Row: %v, %v", ok, err)
			}
			return row.Fields
		}
		rv := Revalidation{FromState: outcome.Review, FromReason: outcome.LowConfidence, State: outcome.Review, Reason: outcome.LowConfidence,
			Band: outcome.BandLow, Artifact: "artifacts/a.json", ArtifactSHA256: "s1", Validation: "v2"}
		must(j.Revalidate("m.csv", 2, EventAmended, rv, "d1"))
		if got := fields(); got != "d1" {
			t.Errorf("fields after the amendment: %q, want d1", got)
		}
		must(j.Revalidate("m.csv", 2, EventRevalidated, rv, ""))
		if got := fields(); got != "d1" {
			t.Errorf("fields after a revalidation without any: %q, want d1 kept", got)
		}
		run, err := j.StartRun("o", `{}`, `{}`)
		must(err)
		must(j.SetRunVersions(run, `{"tesseract":"5"}`))
		n := 0
		must(j.Events(func(Event) error { n++; return nil }, EventRunVersions))
		if n != 1 {
			t.Errorf("%d run_versions events, want 1", n)
		}
		if c, err := j.CheckChain(); err != nil || len(c.Problems) != 0 {
			t.Errorf("CheckChain: %v, problems %+v", err, c.Problems)
		}
	})
}
