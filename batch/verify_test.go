package batch

import (
	"cmp"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"

	_ "modernc.org/sqlite" // to tamper with the journal as an attacker would

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/ocr/page"
)

// finishedBatch is a small encrypted batch, run once for the test binary
// in a folder the tests share: they read it, or work on their own copy
// (copyTree), which is the same as a fresh finished batch. Its sources
// are recorded by absolute path: a test that alters one restores it.
// They are tiny referrals: verify, show and review check bytes, hashes
// and the custody log, and the text only has to be a referral's.
func finishedBatch(t *testing.T) (dir string, id *age.X25519Identity) {
	t.Helper()
	finished.once.Do(func() {
		finished.dir, finished.id = buildFinishedBatch(t)
	})
	if finished.id == nil {
		t.Fatal("the shared finished batch could not be built (see the first test that asked for it)")
	}
	return finished.dir, finished.id
}

var finished struct {
	once sync.Once
	dir  string
	id   *age.X25519Identity
}

func buildFinishedBatch(t *testing.T) (dir string, id *age.X25519Identity) {
	t.Helper()
	dir = fixtureDir(t)
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "sources")
	os.MkdirAll(src, 0o700)
	var rows [][4]string
	for i, g := range tinySamples(t)[:3] {
		b, err := os.ReadFile(g.path)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(src, filepath.Base(g.path))
		os.WriteFile(p, b, 0o600)
		rows = append(rows, [4]string{[]string{"A", "B", "C"}[i], p, g.participantID, g.date})
	}
	o := testOptions(t, writeManifest(t, dir, rows), filepath.Join(dir, "out"), "")
	o.Plaintext, o.Recipients = false, []age.Recipient{id.Recipient()}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return dir, id
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if info.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func artifacts(t *testing.T, out string) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(out, layout.ArtifactsDir, "*.age"))
	sort.Strings(names)
	if len(names) < 2 {
		t.Fatalf("%d artifacts, want at least 2", len(names))
	}
	return names
}

func TestVerifyTamperMatrix(t *testing.T) {
	base, id := finishedBatch(t)
	type finding struct{ kind, file, other string } // file, other: suffixes of the finding's files
	tests := []struct {
		name    string
		tamper  func(t *testing.T, out, sources string) []finding
		sources bool
	}{
		{"untouched", func(t *testing.T, out, _ string) []finding { return nil }, true},
		{"flip one byte of an artifact", func(t *testing.T, out, _ string) []finding {
			a := artifacts(t, out)[0]
			b, _ := os.ReadFile(a)
			b[len(b)/2] ^= 0x01
			os.WriteFile(a, b, 0o600)
			return []finding{{audit.FindingArtifactHash, filepath.Base(a), ""}}
		}, false},
		{"swap two artifacts", func(t *testing.T, out, _ string) []finding {
			a := artifacts(t, out)
			x, _ := os.ReadFile(a[0])
			y, _ := os.ReadFile(a[1])
			os.WriteFile(a[0], y, 0o600)
			os.WriteFile(a[1], x, 0o600)
			return []finding{{audit.FindingArtifactsSwapped, filepath.Base(a[0]), filepath.Base(a[1])}}
		}, false},
		{"swap two artifacts and alter a third", func(t *testing.T, out, _ string) []finding {
			a := artifacts(t, out)
			x, _ := os.ReadFile(a[1])
			y, _ := os.ReadFile(a[2])
			os.WriteFile(a[1], y, 0o600)
			os.WriteFile(a[2], x, 0o600)
			z, _ := os.ReadFile(a[0])
			os.WriteFile(a[0], y, 0o600) // a copy of another's bytes is no swap
			// Of another size than recorded, it is refused unread.
			kind := map[int]string{-1: audit.FindingArtifactUndersized, 0: audit.FindingArtifactHash, 1: audit.FindingArtifactOversized}[cmp.Compare(len(y), len(z))]
			return []finding{{kind, filepath.Base(a[0]), ""}, {audit.FindingArtifactsSwapped, filepath.Base(a[1]), filepath.Base(a[2])}}
		}, false},
		{"delete an artifact", func(t *testing.T, out, _ string) []finding {
			a := artifacts(t, out)[1]
			os.Remove(a)
			return []finding{{audit.FindingMissingArtifact, filepath.Base(a), ""}}
		}, false},
		{"add a stray file", func(t *testing.T, out, _ string) []finding {
			os.WriteFile(filepath.Join(out, layout.ArtifactsDir, "stray.json"), []byte("{}"), 0o600)
			return []finding{{audit.FindingUnknownFile, "stray.json", ""}}
		}, false},
		{"truncate an artifact", func(t *testing.T, out, _ string) []finding {
			a := artifacts(t, out)[0]
			os.Truncate(a, 100) // shorter than recorded: refused unread
			return []finding{{audit.FindingArtifactUndersized, filepath.Base(a), ""}}
		}, false},
		{"change a source file", func(t *testing.T, out, sources string) []finding {
			names, _ := filepath.Glob(filepath.Join(sources, "*.pdf"))
			f, _ := os.OpenFile(names[0], os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("%%EOF\n")
			f.Close()
			return []finding{{audit.FindingSourceChanged, filepath.Base(names[0]), ""}}
		}, true},
		{"delete a source file", func(t *testing.T, out, sources string) []finding {
			names, _ := filepath.Glob(filepath.Join(sources, "*.pdf"))
			os.Remove(names[1])
			return []finding{{audit.FindingSourceMissing, filepath.Base(names[1]), ""}}
		}, true},
		{"alter the journal's recorded hash", func(t *testing.T, out, _ string) []finding {
			db, err := sql.Open("sqlite", filepath.Join(out, layout.JournalFile))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var artifact string
			if err := db.QueryRow(`SELECT artifact FROM documents WHERE source_id='B'`).Scan(&artifact); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`UPDATE documents SET artifact_sha256=? WHERE source_id='B'`, strings.Repeat("0", 64)); err != nil {
				t.Fatal(err)
			}
			// The custody log still holds the hash published: the
			// table's row is a rewrite, named.
			return []finding{{audit.FindingArtifactHash, filepath.Base(artifact), ""}, {audit.FindingJournalRewritten, layout.JournalFile, ""}}
		}, false},
		{"another batch's marker", func(t *testing.T, out, _ string) []finding {
			os.WriteFile(filepath.Join(out, layout.MarkerFile), []byte("refbatch-0123456789abcdef01234567\n"), 0o600)
			return []finding{{audit.FindingBatchMismatch, layout.MarkerFile, ""}}
		}, false},
		{"corrupt journal.db", func(t *testing.T, out, _ string) []finding {
			p := filepath.Join(out, layout.JournalFile)
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte(strings.Repeat("\xff", 8192)), 4096)
			f.Close()
			return []finding{{audit.FindingJournalCorrupt, layout.JournalFile, ""}}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, base, dir)
			// Sources are recorded by absolute path: tamper with the
			// originals only in the cases that need it, on a copy of them.
			sources := filepath.Join(base, "sources")
			if tc.sources {
				bak := filepath.Join(t.TempDir(), "sources")
				copyTree(t, sources, bak)
				t.Cleanup(func() { os.RemoveAll(sources); copyTree(t, bak, sources) })
			}
			out := filepath.Join(dir, "out")
			want := tc.tamper(t, out, sources)
			res, err := audit.Verify(context.Background(), audit.VerifyOptions{Out: out, Identities: []age.Identity{id}, Sources: tc.sources})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) != len(want) {
				t.Fatalf("findings %+v, want %+v", res.Findings, want)
			}
			for _, w := range want {
				found := false
				for _, f := range res.Findings {
					if f.Kind == w.kind && strings.HasSuffix(f.File, w.file) && strings.HasSuffix(f.OtherFile, w.other) && (w.other == "") == (f.OtherSourceID == "") {
						found = true
					}
				}
				if !found {
					t.Errorf("no %s finding naming %s in %+v", w.kind, w.file, res.Findings)
				}
			}
			if tc.name == "untouched" && (res.Decrypted != 3 || res.Sources != 3) {
				t.Errorf("clean verify decrypted %d and hashed %d sources, want 3 and 3", res.Decrypted, res.Sources)
			}
			if want := id.Recipient().String(); tc.name == "untouched" && (!res.Encrypted || len(res.Recipients) != 1 || res.Recipients[0] != want) {
				t.Errorf("verify reports encrypted %v to %v, want the batch's recipient %s", res.Encrypted, res.Recipients, want)
			}
		})
	}
}

func TestShowRoundTrips(t *testing.T) {
	base, id := finishedBatch(t)
	out := filepath.Join(base, "out")
	a, err := audit.Show(context.Background(), layout.Place{Out: out}, "A", []age.Identity{id})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.ToUpper(layout.ContentText(a.Pages)), "PARTICIPANT") {
		t.Errorf("shown text does not look like the referral")
	}
	if _, err := audit.Show(context.Background(), layout.Place{Out: out}, "A", nil); err == nil {
		t.Error("show without an identity decrypted an encrypted artifact")
	}
	if _, err := audit.Show(context.Background(), layout.Place{Out: out}, "nope", []age.Identity{id}); err == nil {
		t.Error("show of an unknown source_id succeeded")
	}
}

// TestVerifyDecisions: a retry decision's superseded artifact is checked
// against the decision, not reported unknown, and its document waits for
// the next run; a document whose state its artifact's verdict and no
// decision explain is a finding.
func TestVerifyDecisions(t *testing.T) {
	base, id := finishedBatch(t)
	out := filepath.Join(t.TempDir(), "out")
	copyTree(t, filepath.Join(base, "out"), out)
	db, err := sql.Open("sqlite", filepath.Join(out, layout.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	// B went to review (as a low-confidence reading would have); C was
	// rejected behind the journal's back.
	for _, q := range []string{`UPDATE documents SET state='review', reason='low_confidence' WHERE source_id='B'`,
		`UPDATE documents SET state='rejected', reason='not_pdf' WHERE source_id='C'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	res, err := review.Decide(context.Background(), review.DecideOptions{Out: out, Action: journal.Retry, SourceIDs: []string{"B"}, User: "alice", Host: "desk",
		Retry: page.Policy{DPI: 200}, RetrySet: []string{"dpi"}})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("retry: %+v, %v", res, err)
	}
	vr, err := audit.Verify(context.Background(), audit.VerifyOptions{Out: out, Identities: []age.Identity{id}})
	if err != nil {
		t.Fatal(err)
	}
	// C's state was changed behind the journal: its artifact's verdict
	// does not explain it, and the custody log shows the rewrite.
	kinds := map[string]string{}
	for _, f := range vr.Findings {
		kinds[f.Kind] = f.SourceID
	}
	if len(vr.Findings) != 2 || kinds[audit.FindingUndecidedState] != "C" || kinds[audit.FindingJournalRewritten] != "C" {
		t.Errorf("findings %+v, want undecided_state and journal_rewritten for C", vr.Findings)
	}
	if vr.Decisions != 1 || vr.Artifacts != 3 || !vr.Incomplete || vr.Unfinished != 1 {
		t.Errorf("decisions %d, artifacts %d, incomplete %v, unfinished %d; want 1, 3 (B's superseded one among them), true, 1",
			vr.Decisions, vr.Artifacts, vr.Incomplete, vr.Unfinished)
	}
}
