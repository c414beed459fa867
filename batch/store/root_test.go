package store

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bothWays runs test with openat2 and with the walk that stands in for it
// where the kernel lacks it.
func bothWays(t *testing.T, test func(t *testing.T)) {
	t.Run("openat2", func(t *testing.T) {
		if _, err := os.Stat("/proc/self"); err != nil {
			t.Skip("no /proc")
		}
		noOpenat2.Store(false)
		test(t)
	})
	t.Run("walk", func(t *testing.T) {
		noOpenat2.Store(true)
		defer noOpenat2.Store(false)
		test(t)
	})
}

// linkFixture is a root folder beside an "elsewhere" folder holding a
// file, with links planted in the root: a (to elsewhere, absolute), rel
// (to sub, which stays beneath), file (to elsewhere/target) and dangling
// (to a file that does not exist, elsewhere/new).
func linkFixture(t *testing.T) (root *Root, dir, elsewhere string) {
	t.Helper()
	base := t.TempDir()
	dir, elsewhere = filepath.Join(base, "root"), filepath.Join(base, "elsewhere")
	for _, d := range []string{filepath.Join(dir, "sub"), elsewhere} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "target"), []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"a": elsewhere, "rel": "sub", "file": filepath.Join(elsewhere, "target"), "dangling": filepath.Join(elsewhere, "new"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root, dir, elsewhere
}

// listDir is what dir holds, names and contents.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out = append(out, e.Name()+"="+string(b))
	}
	return out
}

func TestRootRefusesLinks(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, dir, elsewhere := linkFixture(t)
		write := func(ws []io.Writer) error {
			for _, w := range ws {
				io.WriteString(w, "plaintext")
			}
			return nil
		}
		for _, tc := range []struct {
			name, link string
			do         func() error
		}{
			{"file beneath a linked folder", "a", func() error {
				_, err := root.OpenFile("a/x.txt", os.O_WRONLY|os.O_CREATE, 0o600)
				return err
			}},
			{"folder beneath a linked folder", "a", func() error { return root.MkdirAll("a/b/c", 0o700) }},
			{"set beneath a linked folder", "a", func() error { return root.WriteFiles("a", []string{"x.txt"}, 0o600, write) }},
			{"set beneath a link that stays beneath", "rel", func() error { return root.WriteFiles("rel", []string{"x.txt"}, 0o600, write) }},
			{"linked file", "file", func() error {
				_, err := root.OpenFile("file", os.O_WRONLY|os.O_TRUNC, 0)
				return err
			}},
			{"dangling link created through", "dangling", func() error {
				_, err := root.OpenFile("dangling", os.O_WRONLY|os.O_CREATE, 0o600)
				return err
			}},
			{"folder made through a dangling link", "dangling", func() error { return root.MkdirAll("dangling/x", 0o700) }},
			{"chmod through a link", "file", func() error { return root.Chmod("file", 0o644) }},
			{"sweep through a link", "a", func() error {
				_, err := root.SweepTemp("a")
				return err
			}},
		} {
			err := tc.do()
			var le *LinkError
			if !errors.As(err, &le) || !errors.Is(err, ErrLink) {
				t.Errorf("%s: %v, want a *LinkError", tc.name, err)
				continue
			}
			if want := filepath.Join(dir, tc.link); le.Path != want {
				t.Errorf("%s: the error names %s, want %s", tc.name, le.Path, want)
			}
			if !strings.Contains(err.Error(), "is a symbolic link") {
				t.Errorf("%s: %q does not say it is a link", tc.name, err)
			}
		}
		if got := listDir(t, elsewhere); !slices.Equal(got, []string{"target=untouched"}) {
			t.Errorf("written through a link: elsewhere holds %q", got)
		}
		if got := listDir(t, filepath.Join(dir, "sub")); len(got) > 0 {
			t.Errorf("written through a link that stays beneath: %q", got)
		}
		if fi, _ := os.Stat(filepath.Join(elsewhere, "target")); fi.Mode().Perm() != 0o600 {
			t.Errorf("chmod went through a link: %v", fi.Mode())
		}
	})
}

func TestRootRefusesLeaving(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, _, _ := linkFixture(t)
		for _, name := range []string{"..", "../x", "sub/../../x", "/etc/passwd", "/tmp", "x\x00y"} {
			if f, err := root.OpenFile(name, os.O_RDONLY, 0); err == nil {
				f.Close()
				t.Errorf("%q opened beneath the root", name)
			}
			if err := root.MkdirAll(name, 0o700); err == nil {
				t.Errorf("%q made beneath the root", name)
			}
		}
		// ".." that stays beneath is only a longer name.
		f, err := root.OpenFile("sub/../sub/y", os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if _, err := root.Lstat("sub/y"); err != nil {
			t.Error(err)
		}
	})
}

// A link is replaced as a name, never written through: a set written
// over a link leaves a regular file there and the link's target as it
// was.
func TestRootWriteFilesReplacesLink(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, dir, elsewhere := linkFixture(t)
		err := root.WriteFiles(".", []string{"file", "dangling"}, 0o640, func(ws []io.Writer) error {
			for _, w := range ws {
				io.WriteString(w, "new")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"file", "dangling"} {
			fi, err := os.Lstat(filepath.Join(dir, name))
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o640 {
				t.Errorf("%s: %v %v, want a regular file, mode 0640", name, fi.Mode(), err)
			}
		}
		if got := listDir(t, elsewhere); !slices.Equal(got, []string{"target=untouched"}) {
			t.Errorf("written through a link: elsewhere holds %q", got)
		}
	})
}

// A folder swapped for a link between its making and its opening (as a
// process racing MkdirAll would) is refused, and nothing goes through.
func TestRootMkdirRace(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, dir, elsewhere := linkFixture(t)
		afterMkdir = func(path string) {
			if filepath.Base(path) == "made" {
				os.Remove(path)
				os.Symlink(elsewhere, path)
			}
		}
		defer func() { afterMkdir = nil }()
		err := root.WriteFiles("made/deeper", []string{"x.txt"}, 0o600, func(ws []io.Writer) error {
			_, err := io.WriteString(ws[0], "plaintext")
			return err
		})
		if !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), filepath.Join(dir, "made")) {
			t.Errorf("WriteFiles through a folder swapped for a link: %v", err)
		}
		if got := listDir(t, elsewhere); !slices.Equal(got, []string{"target=untouched"}) {
			t.Errorf("written through a link: elsewhere holds %q", got)
		}
	})
}

func TestRootOperations(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		root, dir, _ := linkFixture(t)
		if err := root.MkdirAll("x/y/z", 0o750); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"x", "x/y", "x/y/z"} {
			if fi, err := os.Lstat(filepath.Join(dir, d)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
				t.Errorf("%s: %v %v, want a folder, mode 0750", d, fi.Mode(), err)
			}
		}
		if err := root.MkdirAll("x/y", 0o700); err != nil { // exists: left as it is
			t.Fatal(err)
		}
		if err := root.WriteFiles("x/y", []string{"a", "b"}, 0o600, func(ws []io.Writer) error {
			io.WriteString(ws[0], "A")
			io.WriteString(ws[1], "B")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got := listDir(t, filepath.Join(dir, "x", "y")); !slices.Equal(got, []string{"a=A", "b=B", "z="}) {
			t.Errorf("x/y holds %q", got)
		}
		if err := root.Rename("x/y/a", "x/c"); err != nil {
			t.Fatal(err)
		}
		if err := root.Remove("x/y/b"); err != nil {
			t.Fatal(err)
		}
		if err := root.Remove("x/y/b"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("removing a missing file: %v, want fs.ErrNotExist", err)
		}
		if err := root.Chmod("x/c", 0o640); err != nil {
			t.Fatal(err)
		}
		if fi, err := root.Lstat("x/c"); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("x/c: %v %v", fi, err)
		}
		if fi, err := root.Lstat("file"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat of a link: %v %v, want the link described", fi, err)
		}
		os.WriteFile(filepath.Join(dir, "x", TempPrefix+"1"), nil, 0o600)
		os.Symlink(filepath.Join(dir, "x", "c"), filepath.Join(dir, "x", TempPrefix+"2"))
		if n, err := root.SweepTemp("x"); n != 1 || err != nil {
			t.Errorf("SweepTemp: %d, %v; want the one temp file, not the link", n, err)
		}
	})
}

// TestOpenRefusesLinkedFolder: the artifacts folder must be a folder, not
// a link to one; the path above it is the caller's and is followed.
func TestOpenRefusesLinkedFolder(t *testing.T) {
	_, dir, elsewhere := linkFixture(t)
	if s, err := Open(filepath.Join(dir, "a"), nil); !errors.Is(err, ErrLink) {
		if err == nil {
			s.Close()
		}
		t.Errorf("Open of a linked folder: %v, want a *LinkError", err)
	}
	s, err := Open(filepath.Join(dir, "rel", "artifacts"), nil) // rel is above the folder
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put("x.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "artifacts", "x.json")); err != nil {
		t.Error(err)
	}
	if got := listDir(t, elsewhere); !slices.Equal(got, []string{"target=untouched"}) {
		t.Errorf("written through a link: elsewhere holds %q", got)
	}
}
