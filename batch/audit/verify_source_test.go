package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/refbatch/refbatch/batch/journal"
)

// TestSourceFindings: a source checked against the journal, by its hash
// (VerifySource, verify --sources) and by its bytes (ReadVerifiedSource,
// export), is as admitted or one finding saying how it is not; only a
// source as admitted is handed on.
func TestSourceFindings(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	admitted := []byte("%PDF-1.4 the source as admitted")
	sum := sha256.Sum256(admitted)
	doc := journal.Doc{SourceID: "R-1", SHA256: hex.EncodeToString(sum[:]), Size: int64(len(admitted))}
	put := func(name string, b []byte) string {
		if err := os.WriteFile(filepath.Join(root, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
		return name
	}
	fifo := "fifo.pdf"
	if err := syscall.Mkfifo(filepath.Join(root, fifo), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, finding, detail string
	}{
		{"as admitted", put("same.pdf", admitted), "", ""},
		{"other bytes", put("other.pdf", bytes.ToUpper(admitted)), FindingSourceChanged, "sha256 "},
		{"grown", put("grown.pdf", append(slices.Clone(admitted), '!')), FindingSourceChanged, "larger than the 31 bytes admitted"},
		{"gone", "gone.pdf", FindingSourceMissing, ""},
		{"a FIFO in its place", fifo, FindingSourceChanged, "not a regular file"},
		{"no path recorded", "", FindingSourceMissing, ""},
	} {
		d := doc
		d.Path = tc.path
		var want []string
		if tc.finding != "" {
			want = []string{tc.finding}
		}
		check := func(how string, kinds, details []string) {
			if !slices.Equal(kinds, want) || tc.detail != "" && !strings.Contains(details[0], tc.detail) {
				t.Errorf("%s, %s: %v %q, want %v with %q", tc.name, how, kinds, details, want, tc.detail)
			}
		}
		var kinds, details []string
		add := func(kind, _, _, detail string) { kinds, details = append(kinds, kind), append(details, detail) }
		VerifySource(root, d, add)
		check("hashed", kinds, details)
		kinds, details = nil, nil
		if err := verifySourceUntil(context.Background(), root, d, add); err != nil {
			t.Fatal(err)
		}
		check("hashed until cancelled", kinds, details)
		kinds, details = nil, nil
		got := ReadVerifiedSource(root, d, add)
		check("read", kinds, details)
		if handed := got != nil; handed != (tc.finding == "") || handed && !bytes.Equal(got, admitted) {
			t.Errorf("%s: read %q", tc.name, got)
		}
	}
}
