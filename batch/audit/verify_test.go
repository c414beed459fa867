package audit

import (
	"context"
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

// batchSpec is a batch as a run left it: documents done, documents in
// review that a person then accepted, documents in review that a person
// sent back and that were read again (done), documents still queued, and
// how its run ended ("complete", "interrupted", "" for a run still going,
// "none" for no run recorded).
type batchSpec struct {
	done, accepted, retried, queued []string
	run                             string
}

// finishedBatch writes the batch b into a new output folder as a run
// would leave it (the journal's rows and custody log, one artifact per
// document read) and returns the folder.
func finishedBatch(t *testing.T, b batchSpec) string {
	t.Helper()
	out := t.TempDir()
	j, err := journal.Open(filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.SetMeta(layout.MetaBatchID, "b-1"); err != nil {
		t.Fatal(err)
	}
	var run int64
	if b.run != "none" {
		if run, err = j.StartRun("o", "", ""); err != nil {
			t.Fatal(err)
		}
	}
	st, err := store.Open(filepath.Join(out, layout.ArtifactsDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all := slices.Concat(b.done, b.accepted, b.retried, b.queued)
	for i, id := range all {
		row, err := j.Admit(journal.Admission{Manifest: "m.csv", Line: i + 2, SourceID: id, SHA256: "sha-" + id, Path: id + ".pdf", Size: 1, Pages: 1})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(b.queued, id) {
			continue
		}
		state := outcome.Done
		if slices.Contains(b.accepted, id) || slices.Contains(b.retried, id) {
			state = outcome.Review
		}
		read(t, j, st, row.DocID, id, id+".json", state)
		if slices.Contains(b.retried, id) {
			if _, err := j.Decide(id, journal.Decision{Action: journal.Retry, User: "u", Host: "h"}, "{}"); err != nil {
				t.Fatal(err)
			}
			read(t, j, st, row.DocID, id, id+"_2.json", outcome.Done)
		}
	}
	for _, id := range b.accepted {
		if _, err := j.Decide(id, journal.Decision{Action: journal.Accept, User: "u", Host: "h"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if b.run != "none" && b.run != "" {
		if err := j.EndRun(run, b.run, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// read claims the document and publishes an artifact with its verdict
// under name.
func read(t *testing.T, j *journal.Journal, st *store.Store, docID int64, id, name string, state outcome.State) {
	t.Helper()
	l, err := j.Claim(docID, "o", journal.Policy{MaxAttempts: 3, LeaseTTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a := layout.Artifact{Format: layout.ArtifactFormat, Provenance: layout.Provenance{SourceID: id, SourceSHA256: "sha-" + id, BatchID: "b-1", State: state}}
	a.ContentSHA256 = layout.ContentHash(a.Pages)
	b, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	sum, size, err := st.PutSized(name, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Finish(l, journal.Result{State: state, Artifact: layout.ArtifactPath(name), ArtifactSHA256: sum,
		ArtifactSize: size, ContentSHA256: a.ContentSHA256}); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyBatch: Verify over a whole output folder, one case per way
// it can differ from what the run left, with the findings each makes
// and the counts it keeps. Real SQLite.
func TestVerifyBatch(t *testing.T) {
	t.Parallel()
	art := func(out, id string) string { return filepath.Join(out, layout.ArtifactsDir, id+".json") }
	two := batchSpec{done: []string{"R-1", "R-2"}, run: "complete"}
	with := func(f func(b *batchSpec)) batchSpec {
		b := two
		f(&b)
		return b
	}
	for _, tc := range []struct {
		name     string
		batch    batchSpec
		change   func(t *testing.T, out string)
		findings []string
		// artifacts, unfinished and superseded are counts Verify keeps.
		artifacts, unfinished, superseded int
	}{
		{name: "as the run left it", change: func(*testing.T, string) {}, artifacts: 2},
		{name: "an unknown file", change: func(t *testing.T, out string) {
			write(t, filepath.Join(out, layout.ArtifactsDir, "R-9.json"), "{}")
		}, findings: []string{FindingUnknownFile}, artifacts: 2},
		{name: "an artifact deleted", change: func(t *testing.T, out string) {
			if err := os.Remove(art(out, "R-1")); err != nil {
				t.Fatal(err)
			}
		}, findings: []string{FindingMissingArtifact}, artifacts: 1},
		{name: "an artifact edited, its size kept", change: func(t *testing.T, out string) {
			b, err := os.ReadFile(art(out, "R-1"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, art(out, "R-1"), strings.Replace(string(b), "R-1", "R-3", 1))
		}, findings: []string{FindingArtifactHash}, artifacts: 2},
		{name: "two artifacts swapped", change: func(t *testing.T, out string) {
			swap(t, art(out, "R-1"), art(out, "R-2"))
		}, findings: []string{FindingArtifactsSwapped}, artifacts: 2},
		{name: "a document left queued by a complete run", batch: with(func(b *batchSpec) { b.queued = []string{"R-3"} }),
			findings: []string{FindingUnfinished}, artifacts: 2, unfinished: 1},
		{name: "a document left queued by an interrupted run", batch: with(func(b *batchSpec) { b.queued, b.run = []string{"R-3"}, "interrupted" }),
			artifacts: 2, unfinished: 1},
		{name: "a document queued while the run goes on", batch: with(func(b *batchSpec) { b.queued, b.run = []string{"R-3"}, "" }),
			artifacts: 2, unfinished: 1},
		{name: "no run recorded", batch: with(func(b *batchSpec) { b.run = "none" }), artifacts: 2},
		{name: "a verdict a person changed", batch: with(func(b *batchSpec) { b.accepted = []string{"R-3"} }), artifacts: 3},
		{name: "a document sent back and read again", batch: with(func(b *batchSpec) { b.retried = []string{"R-3"} }), artifacts: 4, superseded: 1},
		{name: "the artifact a retry superseded cut short", batch: with(func(b *batchSpec) { b.retried = []string{"R-3"} }), change: func(t *testing.T, out string) {
			b, err := os.ReadFile(art(out, "R-3"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, art(out, "R-3"), string(b[:len(b)-1]))
		}, findings: []string{FindingArtifactUndersized}, artifacts: 3},
		{name: "two artifacts of other sizes swapped", batch: batchSpec{done: []string{"R-1", "R-10"}, run: "complete"}, change: func(t *testing.T, out string) {
			swap(t, art(out, "R-1"), art(out, "R-10"))
		}, findings: []string{FindingArtifactsSwapped}},
		{name: "two swapped and a third cut short", batch: batchSpec{done: []string{"R-1", "R-10", "R-2"}, run: "complete"}, change: func(t *testing.T, out string) {
			swap(t, art(out, "R-1"), art(out, "R-10"))
			b, err := os.ReadFile(art(out, "R-2"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, art(out, "R-2"), string(b[:len(b)-1]))
		}, findings: []string{FindingArtifactsSwapped, FindingArtifactUndersized}, artifacts: 0},
		{name: "one holds the other's bytes, the other not its", batch: batchSpec{done: []string{"R-1", "R-10"}, run: "complete"}, change: func(t *testing.T, out string) {
			one, err := os.ReadFile(art(out, "R-1"))
			if err != nil {
				t.Fatal(err)
			}
			ten, err := os.ReadFile(art(out, "R-10"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, art(out, "R-10"), string(one))
			write(t, art(out, "R-1"), strings.Repeat("x", len(ten)))
		}, findings: []string{FindingArtifactOversized, FindingArtifactUndersized}},
		{name: "the folder marked as another batch's", change: func(t *testing.T, out string) {
			write(t, filepath.Join(out, layout.MarkerFile), "b-2\n")
		}, findings: []string{FindingBatchMismatch}, artifacts: 2},
		{name: "no journal", change: func(t *testing.T, out string) {
			if err := os.Remove(filepath.Join(out, "journal.db")); err != nil {
				t.Fatal(err)
			}
		}, findings: []string{FindingJournalMissing}},
		{name: "not a journal", change: func(t *testing.T, out string) {
			write(t, filepath.Join(out, "journal.db"), "not SQLite at all, but long enough")
		}, findings: []string{FindingJournalCorrupt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.batch.done == nil {
				tc.batch = two
			}
			out := finishedBatch(t, tc.batch)
			if tc.change != nil {
				tc.change(t, out)
			}
			res, err := Verify(context.Background(), VerifyOptions{Out: out})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, f := range res.Findings {
				kinds = append(kinds, f.Kind)
			}
			if !slices.Equal(kinds, tc.findings) {
				t.Errorf("findings %v, want %v", res.Findings, tc.findings)
			}
			for _, f := range res.Findings {
				if f.Kind == FindingArtifactsSwapped && (f.SourceID == "" || f.OtherSourceID == "" || f.SourceID == f.OtherSourceID) {
					t.Errorf("a swap names the sources %q and %q, want its two documents", f.SourceID, f.OtherSourceID)
				}
			}
			if want := tc.batch.run == "" || tc.batch.run == "interrupted"; res.Incomplete != want {
				t.Errorf("incomplete %v, want %v", res.Incomplete, want)
			}
			if res.Artifacts != tc.artifacts || res.Unfinished != tc.unfinished || res.Superseded != tc.superseded || res.Unsized != 0 {
				t.Errorf("checked %d artifacts, %d unfinished, %d superseded, %d unsized; want %d, %d, %d, 0",
					res.Artifacts, res.Unfinished, res.Superseded, res.Unsized, tc.artifacts, tc.unfinished, tc.superseded)
			}
		})
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyPinnedRoot: a root pinned earlier must be in the custody log
// (PinnedAt says at which event); one it does not hold is a rewrite. The
// root Verify reports is the journal's own.
func TestVerifyPinnedRoot(t *testing.T) {
	t.Parallel()
	out := finishedBatch(t, batchSpec{done: []string{"R-1"}, run: "complete"})
	j, err := journal.OpenReadOnly(filepath.Join(out, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := j.Root()
	j.Close()
	if err != nil || root.Hash == "" {
		t.Fatalf("root %+v, %v", root, err)
	}
	for _, tc := range []struct {
		name, pinned string
		findings     []string
		at           int64
	}{
		{"the root now", root.Hash, nil, root.Events},
		{"the root now, in capitals", strings.ToUpper(root.Hash), nil, root.Events},
		{"another root", strings.Repeat("0", 64), []string{FindingJournalRewritten}, 0},
	} {
		res, err := Verify(context.Background(), VerifyOptions{Out: out, Root: tc.pinned})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, f := range res.Findings {
			kinds = append(kinds, f.Kind)
		}
		if !slices.Equal(kinds, tc.findings) || res.PinnedAt != tc.at || res.Custody == nil || res.Custody.Root != root.Hash {
			t.Errorf("%s: findings %v, pinned at %d, custody %+v; want %v at %d, root %s", tc.name, res.Findings, res.PinnedAt, res.Custody, tc.findings, tc.at, root.Hash)
		}
	}
}

// swap exchanges the files at a and b.
func swap(t *testing.T, a, b string) {
	t.Helper()
	for _, mv := range [][2]string{{a, a + ".tmp"}, {b, a}, {a + ".tmp", b}} {
		if err := os.Rename(mv[0], mv[1]); err != nil {
			t.Fatal(err)
		}
	}
}
