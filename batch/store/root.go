package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// afterMkdir, when set (by tests), runs between MkdirAll's mkdirat of a
// folder and its opening: where a link planted in a race would be met.
var afterMkdir func(path string)

// Root is a folder refbatch writes in: the output folder, the artifacts
// folder, an export's destination. Every name its methods take is a path
// relative to the folder, and is resolved beneath it without following
// any symbolic link: a link met on the way, the last part included, is a
// *LinkError naming it, and nothing is read or written through it. A name
// that would leave the folder ("..", an absolute path) is refused.
//
// The folder itself is held open from OpenRoot to Close, so a folder
// renamed or replaced meanwhile by a link to somewhere else does not
// move the writes with it.
type Root struct {
	dir string // as given, for messages
	f   *os.File
}

// OpenRoot opens the folder dir, which must exist. dir's own path is the
// caller's choice and is followed as given, links included; only what is
// beneath it is held to no links.
func OpenRoot(dir string) (*Root, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("opening folder: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening folder: %w", err)
	}
	if !fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("opening folder: %s is not a folder", dir)
	}
	return &Root{dir: dir, f: f}, nil
}

// Close lets the folder go.
func (r *Root) Close() error { return r.f.Close() }

// Name is the folder's path as given to OpenRoot.
func (r *Root) Name() string { return r.dir }

// Path is name's path: the folder's joined with name, for messages.
func (r *Root) Path(name string) string { return filepath.Join(r.dir, name) }

// fd is the folder's descriptor.
func (r *Root) fd() int { return int(r.f.Fd()) }

// OpenFile opens name beneath the folder as os.OpenFile would, except
// that no link is followed (O_NOFOLLOW is always added).
func (r *Root) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	clean, err := cleanName(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: r.Path(name), Err: err}
	}
	fd, err := openBeneath(r.fd(), r.dir, clean, flag, uint32(perm.Perm()))
	if err != nil {
		var le *LinkError
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, &fs.PathError{Op: "open", Path: r.Path(clean), Err: err}
	}
	return os.NewFile(uintptr(fd), r.Path(clean)), nil
}

// Open opens name beneath the folder for reading, without following a
// link and without blocking on a FIFO planted in a file's place.
func (r *Root) Open(name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
}

// OpenRoot opens the folder name beneath this one as a Root of its own.
func (r *Root) OpenRoot(name string) (*Root, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &Root{dir: r.Path(name), f: f}, nil
}

// MkdirAll creates the folder name beneath this one and whatever of its
// parents is missing, each with mode perm exactly (the umask does not
// narrow it); folders that exist are left as they are. Every part must
// be a folder, not a link to one.
func (r *Root) MkdirAll(name string, perm os.FileMode) error {
	clean, err := cleanName(name)
	if err != nil || clean == "." {
		return err
	}
	cur := r
	for i, part := range strings.Split(clean, "/") {
		next, err := cur.mkdirOne(part, perm)
		if i > 0 {
			cur.Close()
		}
		if err != nil {
			return err
		}
		cur = next
	}
	return cur.Close()
}

// mkdirOne opens the folder part of r, making it first if it is missing.
func (r *Root) mkdirOne(part string, perm os.FileMode) (*Root, error) {
	sub, err := r.OpenRoot(part)
	if !errors.Is(err, fs.ErrNotExist) {
		return sub, err
	}
	if err := unix.Mkdirat(r.fd(), part, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &fs.PathError{Op: "mkdir", Path: r.Path(part), Err: err}
	}
	if afterMkdir != nil {
		afterMkdir(r.Path(part))
	}
	if sub, err = r.OpenRoot(part); err != nil {
		return nil, err
	}
	if err := sub.f.Chmod(perm.Perm()); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// Chmod sets the mode of the file or folder name, through a descriptor
// opened without following a link.
func (r *Root) Chmod(name string, mode os.FileMode) error {
	f, err := r.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Chmod(mode)
}

// Lstat describes name beneath the folder without following a link: a
// link as name's last part is described as a link (a link before it is
// a *LinkError).
func (r *Root) Lstat(name string) (fs.FileInfo, error) {
	f, err := r.OpenFile(name, unix.O_PATH, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// Remove removes the file name (not a folder); a link in its place is
// removed as a link. A file that is missing is fs.ErrNotExist.
func (r *Root) Remove(name string) error {
	d, base, err := r.parent(name)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Unlinkat(d.fd(), base, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: r.Path(name), Err: err}
	}
	return nil
}

// Rename renames oldname to newname, both beneath the folder, replacing
// what newname was (a link there is replaced, never followed).
func (r *Root) Rename(oldname, newname string) error {
	od, obase, err := r.parent(oldname)
	if err != nil {
		return err
	}
	defer od.Close()
	nd, nbase, err := r.parent(newname)
	if err != nil {
		return err
	}
	defer nd.Close()
	if err := unix.Renameat(od.fd(), obase, nd.fd(), nbase); err != nil {
		return &os.LinkError{Op: "rename", Old: r.Path(oldname), New: r.Path(newname), Err: err}
	}
	return nil
}

// Sync makes the renames and removals in the folder name durable.
func (r *Root) Sync(name string) error {
	d, err := r.OpenRoot(name)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("syncing folder %s: %w", d.dir, err)
	}
	return nil
}

// parent opens the folder that holds name and returns it with name's
// last part, which must be a plain name.
func (r *Root) parent(name string) (*Root, string, error) {
	clean, err := cleanName(name)
	if err != nil {
		return nil, "", &fs.PathError{Op: "open", Path: r.Path(name), Err: err}
	}
	if clean == "." {
		return nil, "", &fs.PathError{Op: "open", Path: r.Path(name), Err: errors.New("the folder itself has no parent beneath it")}
	}
	d, err := r.OpenRoot(filepath.Dir(clean))
	if err != nil {
		return nil, "", err
	}
	return d, filepath.Base(clean), nil
}
