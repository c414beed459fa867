package manifest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScaffold: one row per PDF beneath the folder, in path order, with
// its source_id, path and sha256; names that would collide are refused
// before anything is written.
func TestScaffold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("b.pdf", "")
	write("sub/a.PDF", "x")
	write("notes.txt", "not a pdf")
	var buf bytes.Buffer
	n, err := Scaffold(dir, &buf)
	want := "source_id,participant_id,referral_date,consent,path,sha256\n" +
		"b,,,,b.pdf,e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n" +
		"a,,,,sub/a.PDF,2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881\n"
	if err != nil || n != 2 || buf.String() != want {
		t.Fatalf("Scaffold: %d rows, %v\n%s\nwant\n%s", n, err, buf.String(), want)
	}
	write("A.pdf", "y")
	buf.Reset()
	var ce *CollisionError
	if _, err := Scaffold(dir, &buf); !errors.As(err, &ce) || !strings.Contains(err.Error(), "A.pdf") || !strings.Contains(err.Error(), "a.PDF") || buf.Len() != 0 {
		t.Errorf("Scaffold with A.pdf and sub/a.PDF: %v, wrote %q; want a collision naming both and nothing written", err, buf.String())
	}
}
