package journal

import (
	"strings"
	"testing"
	"time"
)

// TestEventHashKnownAnswer pins the event hash's encoding (custody.go):
// the answers were computed apart from this code, from the documented
// netstrings, so a change to the order, the separators, a field's format
// or the domain string breaks every root an auditor ever pinned and fails
// here first.
func TestEventHashKnownAnswer(t *testing.T) {
	first := Event{ID: 1, At: time.UnixMilli(1_700_000_001_000), Kind: EventRowAdmitted, Manifest: "m.csv", Line: 2,
		DocID: 1, SourceID: "R-1", Data: []byte(`{"custody":[]}`)}
	second := Event{ID: 2, At: time.UnixMilli(1_700_000_002_000), Kind: EventRowRejected, Manifest: "m.csv", Line: 6,
		SourceID: "R-é", Data: []byte(`{}`)}
	const h1 = "007de543855fd7ee9b1fab2e5c0d4b4a492d16b757709b800118d13005a532a8"
	const h2 = "6550f9b900756e4d7ef38cba7b67ef3cecc781cdd0c39a338f685e9bdeb50256"
	if got := EventHash(ZeroHash, first); got != h1 {
		t.Errorf("EventHash(zero, first) = %s, want %s", got, h1)
	}
	if got := EventHash(h1, second); got != h2 {
		t.Errorf("EventHash(h1, second) = %s, want %s", got, h2)
	}
	// Each field is in the hash: changing any one changes it.
	for name, e := range map[string]Event{
		"id": func() Event { e := first; e.ID = 2; return e }(), "at": func() Event { e := first; e.At = e.At.Add(time.Millisecond); return e }(),
		"kind": func() Event { e := first; e.Kind = EventRowRejected; return e }(), "manifest": func() Event { e := first; e.Manifest = "n.csv"; return e }(),
		"line": func() Event { e := first; e.Line = 3; return e }(), "document": func() Event { e := first; e.DocID = 0; return e }(),
		"source": func() Event { e := first; e.SourceID = "R-2"; return e }(), "data": func() Event { e := first; e.Data = []byte(`{"custody": []}`); return e }(),
	} {
		if EventHash(ZeroHash, e) == h1 {
			t.Errorf("the %s is not in the event hash", name)
		}
	}
	if EventHash(h2, first) == h1 {
		t.Error("the previous hash is not in the event hash")
	}
}

// TestCheckChainFindsTamper: each kind of rewrite of the custody log
// itself (an event edited, deleted, inserted, moved, or the log cut
// short) is a problem naming it; cut short, the chain no longer reaches
// the root it had. Real SQLite; the rewrites are plain SQL, as an
// attacker with the file would write them.
func TestCheckChainFindsTamper(t *testing.T) {
	for _, tc := range []struct {
		name string
		sql  []string
		// want is a piece of a problem's detail.
		want string
	}{
		{"edit", []string{`UPDATE events SET source_id='R-9' WHERE id=3`}, "does not match its hash"},
		{"delete", []string{`DELETE FROM events WHERE id=3`}, "events 3 to 3 are missing"},
		{"insert", []string{
			`UPDATE events SET id=id+1000 WHERE id>=3`, `UPDATE events SET id=id-999 WHERE id>=1000`,
			`INSERT INTO events (id, at, kind, manifest, line, document_id, source_id, data, hash)
			   SELECT 3, at, kind, manifest, line, document_id, source_id, data, hash FROM events WHERE id=2`,
		}, "does not match its hash"},
		{"reorder", []string{`UPDATE events SET id=-1 WHERE id=3`, `UPDATE events SET id=3 WHERE id=4`, `UPDATE events SET id=4 WHERE id=-1`}, "does not match its hash"},
		{"truncate", []string{`DELETE FROM events WHERE id=(SELECT max(id) FROM events)`}, "the log says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			at := time.UnixMilli(1_700_000_000_000)
			j := backends[0].open(t, WithClock(func() time.Time { at = at.Add(time.Second); return at }))
			script(t, j)
			before, err := j.CheckChain()
			if err != nil {
				t.Fatal(err)
			}
			if len(before.Problems) != 0 {
				t.Fatalf("before the rewrite: problems %+v", before.Problems)
			}
			for _, q := range tc.sql {
				if _, err := j.db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			c, err := j.CheckChain()
			if err != nil {
				t.Fatal(err)
			}
			var details []string
			for _, p := range c.Problems {
				details = append(details, p.Subject+": "+p.Detail)
			}
			if !strings.Contains(strings.Join(details, "\n"), tc.want) {
				t.Errorf("problems:\n%s\nwant one saying %q", strings.Join(details, "\n"), tc.want)
			}
			if tc.name == "truncate" {
				if _, ok := c.Position(before.Root.Hash); ok || c.Root.Events != before.Root.Events-1 {
					t.Errorf("cut short: root %+v, the root before (%+v) still found: %v", c.Root, before.Root, ok)
				}
			}
		})
	}
}

// TestCheckChainRootRecomputed: the batch root CheckChain reports is the
// chain recomputed from the events' content, not the last event's stored
// hash, on either backend. An event edited in the middle is one problem
// and changes the root (the root pinned before is no longer in the log);
// the last event's stored hash replaced is a problem, and the root is
// still the one the content gives.
func TestCheckChainRootRecomputed(t *testing.T) {
	for _, tc := range []struct {
		name, sql   string
		rootChanges bool
	}{
		{"an event edited", `UPDATE events SET source_id='R-9' WHERE id=3`, true},
		{"the last hash replaced", `UPDATE events SET hash='` + strings.Repeat("ab", 32) + `' WHERE id=(SELECT max(id) FROM events)`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, be backend) {
				j := be.open(t)
				script(t, j)
				before, err := j.CheckChain()
				if err != nil || len(before.Problems) != 0 {
					t.Fatalf("before: %+v, %v", before, err)
				}
				if _, err := j.db.Exec(tc.sql); err != nil {
					t.Fatal(err)
				}
				c, err := j.CheckChain()
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Detail, "does not match its hash") {
					t.Errorf("problems %+v, want one: the event's hash", c.Problems)
				}
				stored, err := j.Root()
				if err != nil {
					t.Fatal(err)
				}
				_, pinned := c.Position(before.Root.Hash)
				switch {
				case c.Root.Events != before.Root.Events:
					t.Errorf("root after %d events, want %d", c.Root.Events, before.Root.Events)
				case tc.rootChanges && (c.Root.Hash == before.Root.Hash || pinned):
					t.Errorf("root %s, the root pinned before found %v: want another root, and the pinned one gone", c.Root.Hash, pinned)
				case !tc.rootChanges && (c.Root.Hash != before.Root.Hash || c.Root.Hash == stored.Hash):
					t.Errorf("root %s, want the content's %s, not the stored %s", c.Root.Hash, before.Root.Hash, stored.Hash)
				}
			})
		})
	}
}
