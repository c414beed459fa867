package audit

import (
	"slices"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
)

// artifactCase is one artifact as verifyArtifact meets it: the store it
// sits in, the journal's document, the name it is read by and the
// identities the auditor holds.
type artifactCase struct {
	st   *store.Store
	d    journal.Doc
	name string
	ids  []age.Identity
}

// putArtifact stores an artifact of R-1 (source bytes "ab") under name in
// st and returns the journal's document for it, its size recorded.
func putArtifact(t *testing.T, st *store.Store, name string) journal.Doc {
	t.Helper()
	a := layout.Artifact{Format: layout.ArtifactFormat, Provenance: layout.Provenance{SourceID: "R-1", SourceSHA256: "ab"}}
	a.ContentSHA256 = layout.ContentHash(a.Pages)
	b, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	sum, size, err := st.PutSized(name, b)
	if err != nil {
		t.Fatal(err)
	}
	return journal.Doc{SourceID: "R-1", SHA256: "ab", Pages: 1, Artifact: layout.ArtifactPath(name),
		ArtifactSHA256: sum, ArtifactSize: size, ContentSHA256: a.ContentSHA256}
}

// openStore opens a store in a new folder, encrypting to the recipients.
func openStore(t *testing.T, dir string, recipients ...age.Recipient) *store.Store {
	t.Helper()
	st, err := store.Open(dir, recipients)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestVerifyArtifactChecks: each check verifyArtifact makes of one
// artifact, one case per way it can differ from the journal, with the
// findings it adds, the counts it keeps and whether it hands the
// artifact on (only when every check passed and it was read).
func TestVerifyArtifactChecks(t *testing.T) {
	t.Parallel()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	plain := func(t *testing.T) artifactCase {
		st := openStore(t, t.TempDir())
		return artifactCase{st: st, d: putArtifact(t, st, "R-1.json"), name: "R-1.json"}
	}
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T) artifactCase
		findings []string
		// detail is a part of the first finding's detail.
		detail                        string
		artifacts, decrypted, unsized int
		returned                      bool
	}{
		{name: "every check passes", setup: plain, artifacts: 1, decrypted: 1, returned: true},
		{name: "no size recorded", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.d.ArtifactSize = 0
			return c
		}, artifacts: 1, decrypted: 1, unsized: 1, returned: true},
		{name: "no content hash recorded", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.d.ContentSHA256 = ""
			return c
		}, artifacts: 1, decrypted: 1, returned: true},
		{name: "another content hash recorded", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.d.ContentSHA256 = strings.Repeat("0", 64)
			return c
		}, findings: []string{FindingContentHash}, detail: "the journal recorded", artifacts: 1, decrypted: 1},
		{name: "another source's bytes", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.d.SHA256 = "cd"
			return c
		}, findings: []string{FindingProvenance}, artifacts: 1, decrypted: 1},
		{name: "another source's id", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.d.SourceID = "R-2"
			return c
		}, findings: []string{FindingProvenance}, artifacts: 1, decrypted: 1},
		{name: "other bytes", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.d.ArtifactSHA256 = strings.Repeat("0", 64)
			return c
		}, findings: []string{FindingArtifactHash}, artifacts: 1},
		{name: "larger than recorded", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.d.ArtifactSize--
			return c
		}, findings: []string{FindingArtifactOversized}, detail: "more than the"},
		{name: "smaller than recorded", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.d.ArtifactSize++
			return c
		}, findings: []string{FindingArtifactUndersized}, detail: "fewer than the"},
		{name: "missing", setup: func(t *testing.T) artifactCase {
			c := plain(t)
			c.name = "R-2.json"
			return c
		}, findings: []string{FindingMissingArtifact}},
		{name: "encrypted, no identity", setup: func(t *testing.T) artifactCase {
			st := openStore(t, t.TempDir(), id.Recipient())
			return artifactCase{st: st, d: putArtifact(t, st, "R-1.json"), name: "R-1.json"}
		}, artifacts: 1},
		{name: "encrypted, with its identity", setup: func(t *testing.T) artifactCase {
			st := openStore(t, t.TempDir(), id.Recipient())
			return artifactCase{st: st, d: putArtifact(t, st, "R-1.json.age"), name: "R-1.json.age", ids: []age.Identity{id}}
		}, artifacts: 1, decrypted: 1, returned: true},
		{name: "age file read without recipients or identity", setup: func(t *testing.T) artifactCase {
			dir := t.TempDir()
			d := putArtifact(t, openStore(t, dir, id.Recipient()), "R-1.json.age")
			return artifactCase{st: openStore(t, dir), d: d, name: "R-1.json.age"}
		}, artifacts: 1},
		{name: "amended version no longer the size it recorded", setup: amendedShrunk,
			findings: []string{FindingArtifactUndersized}, detail: "replaced after it was hashed", artifacts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := tc.setup(t)
			res := &VerifyResult{}
			var kinds, details []string
			got := verifyArtifact(c.st, c.d, c.name, c.ids, res, func(kind, _, _, detail string) {
				kinds = append(kinds, kind)
				details = append(details, detail)
			})
			if !slices.Equal(kinds, tc.findings) {
				t.Errorf("findings %v %q, want %v", kinds, details, tc.findings)
			}
			if tc.detail != "" && (len(details) == 0 || !strings.Contains(details[0], tc.detail)) {
				t.Errorf("details %q, want one with %q", details, tc.detail)
			}
			if res.Artifacts != tc.artifacts || res.Decrypted != tc.decrypted || res.Unsized != tc.unsized {
				t.Errorf("checked %d, decrypted %d, unsized %d; want %d, %d, %d",
					res.Artifacts, res.Decrypted, res.Unsized, tc.artifacts, tc.decrypted, tc.unsized)
			}
			if (got != nil) != tc.returned {
				t.Errorf("returned %v, want an artifact: %v", got, tc.returned)
			}
		})
	}
}

// amendedShrunk is an amendment whose bytes are the journal's while the
// version it amends is no longer the size the amendment recorded: found
// only when the chain is read, after the amendment was hashed.
func amendedShrunk(t *testing.T) artifactCase {
	st := openStore(t, t.TempDir())
	base := putArtifact(t, st, "R-1.json")
	m := layout.Amendment{Amends: base.Artifact, AmendsSHA256: base.ArtifactSHA256, AmendsSize: base.ArtifactSize + 1, SourceID: "R-1"}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	name := "R-1_a1_t1.json"
	sum, size, err := st.PutSized(name, b)
	if err != nil {
		t.Fatal(err)
	}
	d := base
	d.Artifact, d.ArtifactSHA256, d.ArtifactSize = layout.ArtifactPath(name), sum, size
	return artifactCase{st: st, d: d, name: name}
}
