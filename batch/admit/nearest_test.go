package admit

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNameDistance: the edit distance of two file names, with a case
// difference alone counting one.
func TestNameDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"scan.pdf", "scan.pdf", 0},
		{"scan.pdf", "SCAN.pdf", 1},
		{"scan.pdf", "scan", 4},
		{"scan.pdf", "scan.pdf.pdf", 4},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
		{"abc", "", 3},
		{"flaw", "lawn", 2},
		{"ab", "ba", 2},
		{"Référé.pdf", "refere.pdf", 3},
	} {
		if got := nameDistance(c.a, c.b); got != c.want {
			t.Errorf("nameDistance(%q, %q) = %d; want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestMissingDetail: a missing file's detail names the file of its folder
// a slip away, the nearest and then the first by name, and nothing past
// a quarter of the name's length (two at least).
func TestMissingDetail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"referral-001.pdf", "referral-101.pdf", "b1.pdf", "a1.pdf", "abcdefghijklmnop", "xy.c"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const missing = "the file does not exist"
	found := func(name, how string) string {
		return missing + `; its folder has "` + name + `" (` + how + `): fix the path if that is the file`
	}
	for _, c := range []struct{ path, want string }{
		{"referral-002.pdf", found("referral-001.pdf", "1 character away")},
		{"referral-00.pdf", found("referral-001.pdf", "1 character away")},
		{"REFERRAL-001.PDF", found("referral-001.pdf", "the same name in another case")},
		{"referral-001", missing},
		{"c1.pdf", found("a1.pdf", "1 character away")},
		{"abcdefghijklWXYZ", found("abcdefghijklmnop", "4 characters away")},
		{"abcdefghijkVWXYZ", missing},
		{"ab.c", found("xy.c", "2 characters away")},
		{"no-such-folder/referral-001.pdf", missing},
	} {
		if got := missingDetail(filepath.Join(dir, c.path)); got != c.want {
			t.Errorf("missingDetail(%q) = %q; want %q", c.path, got, c.want)
		}
	}
}
