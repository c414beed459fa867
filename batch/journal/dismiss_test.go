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

// TestDismissedRowsNeedNoPerson: a rejected row a person dismissed no
// longer counts among the rows that need a person (OpenRows, behind
// run's exit 4), and dismissing it again is refused with ErrDismissed;
// a row of another source still counts.
func TestDismissedRowsNeedNoPerson(t *testing.T) {
	j := backends[0].open(t)
	for _, r := range []struct {
		line   int
		source string
	}{{2, "R-1"}, {3, "R-2"}} {
		if err := j.RejectDetail("m.csv", r.line, r.source, "", outcome.BadDate, "key-"+r.source, ""); err != nil {
			t.Fatal(err)
		}
	}
	open := func(want int) {
		t.Helper()
		got, err := j.OpenRows("m.csv")
		if err != nil || got[outcome.BadDate] != want {
			t.Errorf("open rows %v %v, want %d %s", got, err, want, outcome.BadDate)
		}
	}
	open(2)
	if _, err := j.Dismiss("R-1", Decision{User: "alice", Host: "desk"}); err != nil {
		t.Fatal(err)
	}
	open(1)
	if _, err := j.Dismiss("R-1", Decision{User: "alice", Host: "desk"}); !errors.Is(err, ErrDismissed) {
		t.Errorf("second dismissal: %v, want ErrDismissed", err)
	}
	open(1)
}
