package store

import (
	"os"
	"strings"
	"testing"
)

// TestPutNoticesALyingStore: when the file on disk after the rename is not
// what Put wrote (a filesystem that lies, a disk that flipped a byte), Put
// fails instead of returning a hash for the journal to record. The fault
// is injected at the one moment between publishing and reading back;
// everything else is the real store on the real filesystem.
func TestPutNoticesALyingStore(t *testing.T) {
	st, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	afterPut = func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 1
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { afterPut = nil }()
	sum, err := st.Put("a.json", []byte(`{"pages":[]}`))
	if err == nil || !strings.Contains(err.Error(), "reads back as sha256") {
		t.Errorf("Put on a lying store: %q, %v; want the read-back error", sum, err)
	}
}
