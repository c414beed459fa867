package audit

import (
	"encoding/json"
	"testing"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
)

// TestVerifyArtifactBatch: an artifact whose provenance names another
// batch than the journal is a batch_mismatch; one with no batch (an
// earlier build's) is not.
func TestVerifyArtifactBatch(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ artifact, journal, want string }{
		{"refbatch-aa", "refbatch-aa", ""},
		{"", "refbatch-aa", ""},
		{"refbatch-bb", "refbatch-aa", FindingBatchMismatch},
	} {
		a := layout.Artifact{Format: layout.ArtifactFormat, Provenance: layout.Provenance{SourceID: "R-1", SourceSHA256: "ab", BatchID: tc.artifact}}
		a.ContentSHA256 = layout.ContentHash(a.Pages)
		b, _ := json.Marshal(a)
		name := "R-1_" + tc.artifact + ".json"
		sum, err := st.Put(name, b)
		if err != nil {
			t.Fatal(err)
		}
		d := journal.Doc{SourceID: "R-1", SHA256: "ab", ArtifactSHA256: sum}
		var got []string
		verifyArtifact(st, d, name, nil, &VerifyResult{batchID: tc.journal}, func(kind, _, _, _ string) { got = append(got, kind) })
		if want := []string{tc.want}; tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || got[0] != want[0]) {
			t.Errorf("artifact of %q, journal of %q: findings %v, want %q", tc.artifact, tc.journal, got, tc.want)
		}
	}
}
