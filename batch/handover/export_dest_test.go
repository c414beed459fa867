package handover

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/refbatch/refbatch/batch/layout"
)

// bindMount mounts dir at a new folder and returns it, or skips the test
// where mounting is not allowed (not root, or no CAP_SYS_ADMIN).
func bindMount(t *testing.T, dir string) string {
	t.Helper()
	at := t.TempDir()
	if err := syscall.Mount(dir, at, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(at, 0); err != nil {
			t.Errorf("unmounting %s: %v", at, err)
		}
	})
	return at
}

// TestOpenDestByIdentity: an export folder that is a folder of --out by
// another path, a link or a bind mount, is refused before anything is
// made in it; one outside is made and opened.
func TestOpenDestByIdentity(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "out")
	arts := filepath.Join(out, layout.ArtifactsDir)
	if err := os.MkdirAll(arts, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(arts, link); err != nil {
		t.Fatal(err)
	}
	open := func(dest string) error {
		x := &exporter{o: ExportOptions{Out: out, Dest: dest}, dirMode: 0o700}
		root, err := x.openDest()
		if err == nil {
			root.Close()
		}
		return err
	}
	for _, dest := range []string{out, arts, filepath.Join(arts, "new", "deeper"), link, filepath.Join(link, "new")} {
		if err := open(dest); !errors.Is(err, ErrDestInsideOut) {
			t.Errorf("--to %s: %v, want ErrDestInsideOut", dest, err)
		}
	}
	t.Run("bind mount", func(t *testing.T) {
		at := bindMount(t, arts)
		dest := filepath.Join(at, "new")
		if err := destOutside(out, dest); err != nil {
			t.Fatalf("the check by path saw the mount: %v", err)
		}
		if err := open(dest); !errors.Is(err, ErrDestInsideOut) {
			t.Errorf("--to %s, a bind mount of %s: %v, want ErrDestInsideOut", dest, arts, err)
		}
		if entries, _ := os.ReadDir(arts); len(entries) > 0 {
			t.Errorf("a refused export made %s in the artifacts folder", entries[0].Name())
		}
	})
	dest := filepath.Join(base, "export", "bag")
	if err := open(dest); err != nil {
		t.Fatalf("--to outside --out: %v", err)
	}
	if fi, err := os.Stat(dest); err != nil || !fi.IsDir() {
		t.Errorf("the export folder was not made: %v", err)
	}
}
