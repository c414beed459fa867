package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/ocr/result"
)

// TestAmendmentChain: an encrypted artifact amended twice reads, with
// the identity, as the artifact with both transcriptions, oldest first;
// each amendment is a small file; a version amended that was replaced
// since (its hash not the one recorded) makes the chain an error naming
// both files.
func TestAmendmentChain(t *testing.T) {
	t.Parallel()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "artifacts")
	st, err := store.Open(dir, []age.Recipient{id.Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pages := []result.PageResult{{Index: 0, Width: 100, Height: 100, Text: strings.Repeat("word ", 20_000)}}
	base := &Artifact{Format: ArtifactFormat, Pages: pages, ContentSHA256: ContentHash(pages),
		Transcriptions: []Transcription{{Source: "person", Text: "legacy, kept whole"}}}
	b, _ := base.Marshal()
	prev, err := st.Put("R-1_a1.json.age", b)
	if err != nil {
		t.Fatal(err)
	}
	prevName := "R-1_a1.json.age"
	for i, text := range []string{"first", "second"} {
		m := Amendment{Amends: ArtifactPath(prevName), AmendsSHA256: prev, SourceID: "R-1", Transcription: Transcription{Source: "person", Text: text}}
		b, _ := m.Marshal()
		name := "R-1_a1_t" + string(rune('1'+i)) + "-00000000.json.age"
		if prev, err = st.Put(name, b); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Size() > 1024 {
			t.Errorf("amendment %s is %d bytes, want the transcription's few hundred", name, fi.Size())
		}
		prevName = name
	}
	a, err := ReadArtifactSized(st, prevName, store.AtMost(MaxArtifactBytes(1)), MaxArtifactBytes(1), []age.Identity{id})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range a.Transcriptions {
		got = append(got, tr.Text)
	}
	if strings.Join(got, "|") != "legacy, kept whole|first|second" || ContentHash(a.Pages) != a.ContentSHA256 {
		t.Errorf("transcriptions %q, want the legacy one then first, second, and the text as read", got)
	}
	// "first" withdrawn: it is read apart, with who withdrew it, and
	// "second" stands; a withdrawal of what the chain does not hold, or
	// of one withdrawn already, is an error.
	withdraw := func(of, name string) error {
		w := Withdrawal{Amends: ArtifactPath(prevName), AmendsSHA256: prev, SourceID: "R-1", Withdraws: of, User: "alice", Host: "desk"}
		b, _ := w.Marshal()
		sum, err := st.Put(name, b)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ReadArtifactSized(st, name, store.AtMost(MaxArtifactBytes(1)), MaxArtifactBytes(1), []age.Identity{id})
		if err == nil {
			prev, prevName = sum, name
		}
		return err
	}
	if err := withdraw("artifacts/R-1_a1_t1-00000000.json.age", "R-1_a1_t3-00000000.json.age"); err != nil {
		t.Fatal(err)
	}
	a, err = ReadArtifactSized(st, prevName, store.AtMost(MaxArtifactBytes(1)), MaxArtifactBytes(1), []age.Identity{id})
	if err != nil || len(a.Transcriptions) != 2 || a.Transcriptions[1].Text != "second" || a.Transcriptions[1].ID != "artifacts/R-1_a1_t2-00000000.json.age" ||
		len(a.WithdrawnTranscriptions) != 1 || a.WithdrawnTranscriptions[0].Text != "first" || a.WithdrawnTranscriptions[0].Withdrawn.User != "alice" {
		t.Fatalf("after the withdrawal: %+v %+v (%v), want legacy and second standing, first withdrawn by alice", a.Transcriptions, a.WithdrawnTranscriptions, err)
	}
	for _, of := range []string{"artifacts/R-9_a1_t1-00000000.json.age", "artifacts/R-1_a1_t1-00000000.json.age"} {
		if err := withdraw(of, "R-1_a1_t4-00000000.json.age"); err == nil {
			t.Errorf("a withdrawal of %s read without an error", of)
		}
		os.Remove(filepath.Join(dir, "R-1_a1_t4-00000000.json.age"))
	}
	// The first amendment replaced by other bytes: the chain breaks there.
	m := Amendment{Amends: "artifacts/R-1_a1.json.age", AmendsSHA256: strings.Repeat("0", 64), SourceID: "R-1"}
	b, _ = m.Marshal()
	os.Remove(filepath.Join(dir, "R-1_a1_t1-00000000.json.age"))
	if _, err := st.Put("R-1_a1_t1-00000000.json.age", b); err != nil {
		t.Fatal(err)
	}
	_, err = ReadArtifactSized(st, prevName, store.AtMost(MaxArtifactBytes(1)), MaxArtifactBytes(1), []age.Identity{id})
	if err == nil || !strings.Contains(err.Error(), "R-1_a1_t1-00000000.json.age") || !strings.Contains(err.Error(), "not the") {
		t.Errorf("a replaced link: %v, want an error naming it", err)
	}
}
