package admit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestResolveSymlinkLoop: a symlink loop, on the file or on a folder of
// its path, is unreadable "the path is a symlink loop", not a missing file;
// a loop whose links lead outside the root is path_outside_root.
func TestResolveSymlinkLoop(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(root, "self.pdf"):     "self.pdf",
		filepath.Join(root, "a.pdf"):        "b.pdf",
		filepath.Join(root, "b.pdf"):        "a.pdf",
		filepath.Join(root, "dir"):          "dir",
		filepath.Join(root, "out.pdf"):      "../outside/l1.pdf",
		filepath.Join(outside, "l1.pdf"):    "l2.pdf",
		filepath.Join(outside, "l2.pdf"):    "l1.pdf",
		filepath.Join(root, "dangling.pdf"): "nope.pdf",
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path   string
		reason outcome.Reason
		detail string
	}{
		{"self.pdf", outcome.Unreadable, "the path is a symlink loop"},
		{"a.pdf", outcome.Unreadable, "the path is a symlink loop"},
		{"dir/x.pdf", outcome.Unreadable, "the path is a symlink loop"},
		{"out.pdf", outcome.PathOutsideRoot, "the path resolves outside the root through a symlink"},
		{"dangling.pdf", outcome.MissingFile, "the file does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := Resolve(root, tt.path)
			r, ok := IsRejection(err)
			if !ok || r.Reason != tt.reason || r.Detail != tt.detail {
				t.Errorf("Resolve(%q) = %v, want %s %q", tt.path, err, tt.reason, tt.detail)
			}
		})
	}
}

// TestMissingFileNearestName: a missing file whose folder holds a name a
// slip away says that name; one whose folder holds nothing near does not.
func TestMissingFileNearestName(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"R-0002.PDF", "R-0031.pdf", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(root, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"R-0002.pdf", `its folder has "R-0002.PDF" (the same name in another case)`},
		{"R-31.pdf", `its folder has "R-0031.pdf" (2 characters away)`},
		{"R-0O31.pdf", `its folder has "R-0031.pdf" (1 character away)`},
		{"letter-from-gp.pdf", "the file does not exist"},
	} {
		_, err := Resolve(root, tc.path)
		var rej *Rejection
		if !errors.As(err, &rej) || rej.Reason != outcome.MissingFile || !strings.Contains(rej.Detail, tc.want) {
			t.Errorf("%s: %v, want missing_file saying %q", tc.path, err, tc.want)
		}
	}
}
