package journal

import (
	"errors"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestDismissSince: a dismissal made with the row's version as shown
// (SourceVersions) is recorded; one made with an older version (another
// row with the source_id rejected since, by a run of a longer manifest)
// is refused with a *ChangedError and records nothing.
func TestDismissSince(t *testing.T) {
	eachBackend(t, func(t *testing.T, be backend) {
		j := be.open(t)
		if err := j.RejectDetail("m.csv", 2, "R-1", "", outcome.BadDate, "key-1", "column referral_date: not a date"); err != nil {
			t.Fatal(err)
		}
		shown, err := j.SourceVersions()
		if err != nil {
			t.Fatal(err)
		}
		if shown["R-1"] == 0 {
			t.Fatalf("SourceVersions: %v, want R-1's", shown)
		}
		if err := j.RejectDetail("m.csv", 3, "R-1", "", outcome.MissingFile, "key-2", ""); err != nil {
			t.Fatal(err)
		}
		_, err = j.Dismiss("R-1", Decision{User: "alice", Host: "desk", Since: shown["R-1"]})
		var ch *ChangedError
		if !errors.As(err, &ch) || ch.Latest <= shown["R-1"] {
			t.Fatalf("dismissal with a stale version: %v, want a *ChangedError", err)
		}
		now, err := j.SourceVersions()
		if err != nil {
			t.Fatal(err)
		}
		if now["R-1"] != ch.Latest {
			t.Errorf("refused dismissal: version %d, want %d (nothing recorded)", now["R-1"], ch.Latest)
		}
		ds, err := j.Dismiss("R-1", Decision{User: "alice", Host: "desk", Note: "seen", Since: now["R-1"]})
		if err != nil || len(ds) != 2 {
			t.Fatalf("dismissal with the version shown: %v %+v, want both rows dismissed", err, ds)
		}
	})
}
