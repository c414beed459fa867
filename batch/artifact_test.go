package batch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestSweepOrphans: the artifact of an attempt that never committed goes;
// the committed artifact, a stray of a document another live process holds,
// files refbatch did not name and temp files stay.
func TestSweepOrphans(t *testing.T) {
	out := t.TempDir()
	j, err := journal.Open(filepath.Join(out, layout.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	st, err := store.Open(filepath.Join(out, layout.ArtifactsDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	me, other := journal.NewOwner(), journal.Owner("elsewhere/1/1/0a1b2c3d")
	policy := journal.Policy{MaxAttempts: 3, LeaseTTL: time.Hour}
	put := func(name string) {
		t.Helper()
		if _, err := st.Put(name, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	admitDoc := func(line int, source, sha string) int64 {
		t.Helper()
		s, err := j.Admit(journal.Admission{Manifest: "/m.csv", Line: line, SourceID: source, SHA256: sha, Path: "/" + source + ".pdf", Size: 10, Pages: 1})
		if err != nil {
			t.Fatal(err)
		}
		return s.DocID
	}
	shaA, shaB := strings.Repeat("a", 64), strings.Repeat("b", 64)

	// A is done with its second attempt's artifact; its first attempt's
	// file was left by a process that died before committing.
	a := admitDoc(2, "R-A", shaA)
	l, err := j.Claim(a, me, policy)
	if err != nil {
		t.Fatal(err)
	}
	committed := artifactName("R-A", shaA, 2, false)
	put(committed)
	if err := j.Finish(l, journal.Result{State: outcome.Done, Artifact: layout.ArtifactsDir + "/" + committed, ArtifactSHA256: "aa"}); err != nil {
		t.Fatal(err)
	}
	orphan := artifactName("R-A", shaA, 1, false)
	put(orphan)
	// B is held by another live process, which has just written its file.
	b := admitDoc(3, "R-B", shaB)
	if _, err := j.Claim(b, other, policy); err != nil {
		t.Fatal(err)
	}
	inFlight := artifactName("R-B", shaB, 1, false)
	put(inFlight)
	// Not refbatch's: no document has this key, or no key at all.
	foreign := artifactName("R-C", strings.Repeat("c", 64), 1, false)
	put(foreign)
	put("notes.txt")
	if err := os.WriteFile(filepath.Join(st.Dir(), store.TempPrefix+"left"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	n, err := sweepOrphans(j, st, me)
	if err != nil {
		t.Fatal(err)
	}
	names, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{store.TempPrefix + "left", committed, inFlight, foreign, "notes.txt"}
	slices.Sort(want)
	if n != 1 || !slices.Equal(names, want) {
		t.Errorf("removed %d, left %q; want 1 removed (%s), left %q", n, names, orphan, want)
	}
}
