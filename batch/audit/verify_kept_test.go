package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/report/outcome"
)

// TestVerifyArtifactNotAFile: what stands in an artifact's place and is
// not the file the journal recorded is refused unread, and the finding
// says what it is: a link, a FIFO, a sparse file larger than the
// document's pages can hold when the journal recorded no size.
func TestVerifyArtifactNotAFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, finding, detail string
		replace               func(t *testing.T, path string, d *journal.Doc)
	}{
		{"a link", FindingArtifactNotRegular, "a symbolic link in the artifact's place", func(t *testing.T, path string, _ *journal.Doc) {
			if err := os.Rename(path, path+".real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path+".real", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a FIFO", FindingArtifactNotRegular, "a FIFO in the artifact's place: not read", func(t *testing.T, path string, _ *journal.Doc) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("no FIFO here: %v", err)
			}
		}},
		{"larger than its pages hold, no size recorded", FindingArtifactOversized, "its document's pages can hold", func(t *testing.T, path string, d *journal.Doc) {
			d.ArtifactSize = 0
			if err := os.Truncate(path, layout.MaxArtifactBytes(d.Pages)+1); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := openStore(t, t.TempDir())
			d := putArtifact(t, st, "R-1.json")
			tc.replace(t, filepath.Join(st.Dir(), "R-1.json"), &d)
			var kinds, details []string
			got := verifyArtifact(st, d, "R-1.json", nil, &VerifyResult{}, func(kind, _, _, detail string) {
				kinds = append(kinds, kind)
				details = append(details, detail)
			})
			if got != nil || len(kinds) != 1 || kinds[0] != tc.finding || !strings.Contains(details[0], tc.detail) {
				t.Errorf("findings %v %q, returned %v; want one %s with %q", kinds, details, got, tc.finding, tc.detail)
			}
		})
	}
}

// TestVerifyKept: an artifact a later reading superseded is checked
// against the size and hash its event recorded, and a finding names the
// event.
func TestVerifyKept(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                           string
		change                         func(a *journal.EventArtifact)
		finding, detail                string
		artifacts, superseded, unsized int
	}{
		{name: "as recorded", change: func(*journal.EventArtifact) {}, artifacts: 1, superseded: 1},
		{name: "no size recorded", change: func(a *journal.EventArtifact) { a.Size = 0 }, artifacts: 1, superseded: 1, unsized: 1},
		{name: "other bytes", change: func(a *journal.EventArtifact) { a.SHA256 = strings.Repeat("0", 64) },
			finding: FindingArtifactHash, detail: "the journal's done event 7", artifacts: 1, superseded: 1},
		{name: "gone", change: func(a *journal.EventArtifact) { a.Artifact = "R-2.json" },
			finding: FindingMissingArtifact, detail: "named by the journal's done event 7"},
		{name: "larger than recorded", change: func(a *journal.EventArtifact) { a.Size-- },
			finding: FindingArtifactOversized, detail: "named by the journal's done event 7: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := openStore(t, t.TempDir())
			d := putArtifact(t, st, "R-1.json")
			a := journal.EventArtifact{EventID: 7, Kind: "done", SourceID: "R-1", Artifact: "R-1.json", SHA256: d.ArtifactSHA256, Size: d.ArtifactSize}
			tc.change(&a)
			res := &VerifyResult{}
			var kinds, details []string
			verifyKept(st, a.Artifact, a, 1, res, func(kind, _, _, detail string) {
				kinds = append(kinds, kind)
				details = append(details, detail)
			})
			var want []string
			if tc.finding != "" {
				want = []string{tc.finding}
			}
			if !slices.Equal(kinds, want) || tc.detail != "" && !strings.Contains(details[0], tc.detail) {
				t.Errorf("findings %v %q, want %v with %q", kinds, details, want, tc.detail)
			}
			if res.Artifacts != tc.artifacts || res.Superseded != tc.superseded || res.Unsized != tc.unsized {
				t.Errorf("checked %d, superseded %d, unsized %d; want %d, %d, %d",
					res.Artifacts, res.Superseded, res.Unsized, tc.artifacts, tc.superseded, tc.unsized)
			}
		})
	}
}

// TestVerifyState: a document's state that is not its artifact's verdict
// is a finding unless a decision explains it.
func TestVerifyState(t *testing.T) {
	t.Parallel()
	a := &layout.Artifact{Provenance: layout.Provenance{State: outcome.Review}}
	for _, tc := range []struct {
		name      string
		state     outcome.State
		explained []outcome.State
		finding   bool
	}{
		{"the artifact's verdict", outcome.Review, nil, false},
		{"explained by a decision", outcome.Done, []outcome.State{outcome.Done}, false},
		{"unexplained", outcome.Done, []outcome.State{outcome.Rejected}, true},
		{"unexplained, nothing decided", outcome.Done, nil, true},
	} {
		var kinds []string
		verifyState("f", journal.Doc{SourceID: "R-1", State: tc.state}, a, tc.explained, func(kind, _, _, _ string) { kinds = append(kinds, kind) })
		if got := len(kinds) == 1 && kinds[0] == FindingUndecidedState; got != tc.finding || len(kinds) > 1 {
			t.Errorf("%s: findings %v, want an undecided_state: %v", tc.name, kinds, tc.finding)
		}
	}
}

// TestNotSQLite: the journal's first bytes tell a SQLite database from
// anything else in its place, a FIFO found without blocking.
func TestNotSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"a database", write("db", "SQLite format 3\x00 and pages"), ""},
		{"short", write("short", "SQLite"), "not a SQLite database"},
		{"other bytes", write("other", "SQLite format 4\x00 and pages"), "not a SQLite database"},
		{"a FIFO", fifo, "is a FIFO, not a regular file"},
	} {
		got, err := notSQLite(tc.path)
		if err != nil || tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := notSQLite(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing journal is no error")
	}
}

// TestUnknownDetail: an unknown file named as a transcription says what
// it is and what to do; any other says only that it is unknown.
func TestUnknownDetail(t *testing.T) {
	t.Parallel()
	for name, desk := range map[string]bool{
		"R-1_a2_t3.json":              true,
		"R-1_a2_t3-0123abcd.json.age": true,
		"R-1_a2_t3.json.bak":          false,
		"R-1.json":                    false,
	} {
		if got := strings.Contains(unknownDetail(name), "transcribe the region again"); got != desk {
			t.Errorf("%s: %q", name, unknownDetail(name))
		}
	}
}

// TestSourceRoot: the sources' folder is the one the latest run
// recorded; none when no run recorded settings.
func TestSourceRoot(t *testing.T) {
	t.Parallel()
	at := func(root string) journal.Run { return journal.Run{Settings: layout.Settings{Root: root}.Encode()} }
	for _, tc := range []struct {
		name string
		runs []journal.Run
		want string
	}{
		{"no run", nil, ""},
		{"one run", []journal.Run{at("/scans")}, "/scans"},
		{"the latest run's", []journal.Run{at("/scans"), at("/moved")}, "/moved"},
		{"settings an earlier build did not record", []journal.Run{{Settings: "{}"}}, ""},
	} {
		if got := SourceRoot(tc.runs); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
