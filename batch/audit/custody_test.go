package audit

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
)

// TestVerifyRootLog: each of the root log's entries for the batch must be
// in the custody log at the place it says: an entry whose root the chain
// does not hold is a rewrite, and so is one whose root is there after
// another number of events; the last entry is where the log was pinned.
// Another batch's entries are not this journal's business; a log with
// none of this batch's is an error, not a pass. Real SQLite.
func TestVerifyRootLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, err := journal.Open(filepath.Join(dir, "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.SetMeta(layout.MetaBatchID, "b-1"); err != nil {
		t.Fatal(err)
	}
	var roots []journal.Root
	for i, id := range []string{"R-1", "R-2"} {
		if _, err := j.Admit(journal.Admission{Manifest: "m.csv", Line: i + 2, SourceID: id, SHA256: id, Path: id + ".pdf", Size: 1, Pages: 1}); err != nil {
			t.Fatal(err)
		}
		r, err := j.Root()
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, r)
	}
	entry := func(batch string, r journal.Root) layout.RootLogEntry {
		return layout.RootLogEntry{Time: time.Unix(1_700_000_000, 0).UTC(), Batch: batch, Root: r.Hash, Events: r.Events}
	}
	first, last := roots[0], roots[1]
	foreign := journal.Root{Hash: strings.Repeat("ab", 32), Events: first.Events}
	for _, tc := range []struct {
		name    string
		entries []layout.RootLogEntry
		// want are pieces of the findings' details, one per finding.
		want     []string
		pinnedAt int64
		err      error
	}{
		{"sound", []layout.RootLogEntry{entry("b-1", first), entry("b-1", last)}, nil, last.Events, nil},
		{"an entry not in the chain", []layout.RootLogEntry{entry("b-1", first), entry("b-1", foreign), entry("b-1", last)},
			[]string{"is not in the custody log"}, last.Events, nil},
		{"an entry after another number of events", []layout.RootLogEntry{entry("b-1", journal.Root{Hash: first.Hash, Events: first.Events + 1}), entry("b-1", last)},
			[]string{"events were added or removed"}, last.Events, nil},
		{"the last entry wrong", []layout.RootLogEntry{entry("b-1", first), entry("b-1", journal.Root{Hash: last.Hash, Events: last.Events - 1})},
			[]string{"events were added or removed"}, 0, nil},
		{"another batch's entries", []layout.RootLogEntry{entry("b-2", foreign), entry("b-1", first)}, nil, first.Events, nil},
		{"no entry of this batch", []layout.RootLogEntry{entry("b-2", last)}, nil, 0, layout.ErrNoCustodyLog},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "roots.jsonl")
			var lines []byte
			for _, e := range tc.entries {
				b, _ := json.Marshal(e)
				lines = append(append(lines, b...), '\n')
			}
			if err := os.WriteFile(log, lines, 0o600); err != nil {
				t.Fatal(err)
			}
			res := &VerifyResult{}
			var got []string
			err := verifyCustody(j, VerifyOptions{RootLog: log}, res, "journal.db", func(kind, _, _, detail string) {
				got = append(got, kind+": "+detail)
			})
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("findings %q, want %d saying %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], FindingJournalRewritten+": ") || !strings.Contains(got[i], w) {
					t.Errorf("finding %q, want a %s saying %q", got[i], FindingJournalRewritten, w)
				}
			}
			if res.PinnedAt != tc.pinnedAt {
				t.Errorf("pinned at event %d, want %d", res.PinnedAt, tc.pinnedAt)
			}
			if tc.err == nil && (res.Custody == nil || res.Custody.Root != last.Hash || res.Custody.Events != last.Events) {
				t.Errorf("custody %+v, want the root %+v", res.Custody, last)
			}
		})
	}
}
