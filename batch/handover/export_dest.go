package handover

// Where an export writes: a destination outside the output folder, by
// its path and by what it is (device and inode), held open as a
// store.Root so that nothing beneath it is written through a link.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/refbatch/refbatch/batch/store"
)

// destOutside refuses a Dest that is the output folder or inside it:
// plaintext must never land beside the journal and the artifacts, where
// verify would find it and a later run could sweep it. Symlinks are
// resolved, down to the deepest part of Dest that exists. This is the
// check by path, made before anything is read; openDest makes the one by
// identity.
func destOutside(out, dest string) error {
	o, err := resolve(out)
	if err != nil {
		return err
	}
	d, err := resolve(dest)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(o, d); err == nil && (rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))) {
		return fmt.Errorf("%w: %s is inside %s", ErrDestInsideOut, dest, out)
	}
	return nil
}

// resolve is the absolute, symlink-free form of path, whose last parts
// may not exist yet.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			slices.Reverse(rest)
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if filepath.Dir(p) == p {
			return abs, nil
		}
		rest = append(rest, filepath.Base(p))
	}
}

// folderID is a folder's identity, whatever path leads to it: a bind
// mount or a /proc path shows the same device and inode.
type folderID struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo) (folderID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return folderID{}, false
	}
	return folderID{dev: uint64(st.Dev), ino: st.Ino}, true
}

// outFolders maps the identity of the output folder and of every folder
// beneath it (links not followed) to its path.
func outFolders(out string) (map[folderID]string, error) {
	root, err := resolve(out)
	if err != nil {
		return nil, err
	}
	ids := map[folderID]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && path != root {
				return fs.SkipDir // a folder refbatch cannot read, it cannot write in either
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if id, ok := idOf(fi); ok {
			ids[id] = path
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the output folder's folders: %w", err)
	}
	return ids, nil
}

// within returns the folder of out that the folder f is, or is beneath,
// going up from f through "..", by identity: whatever path, link or
// bind mount led to f. ok is false when f is outside out.
func within(f *os.File, out map[folderID]string) (path string, ok bool, err error) {
	// O_PATH: a folder above may be searchable (x) but not readable.
	const flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
	cur, err := unix.Openat(int(f.Fd()), ".", flags, 0)
	if err != nil {
		return "", false, err
	}
	defer func() { unix.Close(cur) }()
	var prev folderID
	for depth := 0; depth < 4096; depth++ {
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil {
			return "", false, err
		}
		id := folderID{dev: uint64(st.Dev), ino: st.Ino}
		if p, in := out[id]; in {
			return p, true, nil
		}
		if depth > 0 && id == prev {
			return "", false, nil // "/" is its own parent
		}
		prev = id
		up, err := unix.Openat(cur, "..", flags, 0)
		if err != nil {
			return "", false, err
		}
		unix.Close(cur)
		cur = up
	}
	return "", false, errors.New("no end to the folders above the export folder")
}

// openDest makes Dest (mode dirMode) and opens it as the export's Root,
// after making sure, by identity, that neither it nor the deepest part
// of it that already exists is the output folder or beneath it: the
// check by path (destOutside) does not see a bind mount.
func (x *exporter) openDest() (*store.Root, error) {
	out, err := outFolders(x.o.Out)
	if err != nil {
		return nil, err
	}
	check := func(f *os.File) error {
		p, in, err := within(f, out)
		if err != nil {
			return fmt.Errorf("checking the export folder: %w", err)
		}
		if in {
			return fmt.Errorf("%w: %s is the folder %s, or inside it", ErrDestInsideOut, x.o.Dest, p)
		}
		return nil
	}
	abs, err := filepath.Abs(x.o.Dest)
	if err != nil {
		return nil, err
	}
	existing := abs
	for _, err := os.Stat(existing); errors.Is(err, fs.ErrNotExist) && filepath.Dir(existing) != existing; _, err = os.Stat(existing) {
		existing = filepath.Dir(existing)
	}
	f, err := os.OpenFile(existing, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("checking the export folder: %w", err)
	}
	err = check(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(x.o.Dest, x.dirMode); err != nil {
		return nil, err
	}
	root, err := store.OpenRoot(x.o.Dest)
	if err != nil {
		return nil, err
	}
	f, err = root.Open(".")
	if err == nil {
		err = check(f)
		f.Close()
	}
	if err == nil {
		err = root.Chmod(".", x.dirMode)
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}
