package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the name of every temp file WriteFiles (and so Put)
// creates. Names that file refbatch's own output cannot start with it.
const TempPrefix = ".tmp-refbatch-"

// legacyTempPrefix started the temp files of earlier builds; in the
// artifacts folder, which holds nothing else with a leading dot, SweepTemp
// removes those too.
const legacyTempPrefix = ".tmp-"

// WriteFiles writes the files names into dir as a set, atomically: write
// gets one writer per name, in order, each a temp file in dir (TempPrefix
// and a random suffix, mode 0600) behind a buffer. When write returns nil,
// every file is flushed, fsynced and closed, and only then are they renamed
// into place and dir fsynced, so a crash leaves either the old files or the
// new ones under each name, never a partial one. When anything before the
// renames fails the temp files are removed and the files in dir stay as
// they were. dir is created with mode 0700 if it is missing.
//
// This is the one way refbatch writes a file: artifacts, reports and
// eval.json all go through it (Root.WriteFiles, of which this is the
// form for a folder of its own).
func WriteFiles(dir string, names []string, write func(ws []io.Writer) error) error {
	for _, name := range names {
		if err := checkName(name); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.WriteFiles(".", names, 0o600, write)
}

// WriteFiles is the package's WriteFiles in the folder dir beneath r
// (created with mode 0700 if missing, a link on the way refused), the
// files made with mode perm. A file or a link in a name's place is
// replaced, never written through.
func (r *Root) WriteFiles(dir string, names []string, perm os.FileMode, write func(ws []io.Writer) error) error {
	return r.writeFiles(dir, names, perm, true, write)
}

// ErrExists means a file that is never replaced (a published artifact)
// is already there: Put leaves it as it was.
var ErrExists = errors.New("already published, never overwritten")

// writeFiles is WriteFiles; without replace, a file that exists under one
// of the names is left as it is and the write fails with ErrExists: each
// temp file is linked to its name, which fails when the name exists, then
// unlinked.
func (r *Root) writeFiles(dir string, names []string, perm os.FileMode, replace bool, write func(ws []io.Writer) error) (err error) {
	for _, name := range names {
		if err := checkName(name); err != nil {
			return err
		}
	}
	if err := r.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", r.Path(dir), err)
	}
	d, err := r.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	files := make([]*tempFile, 0, len(names))
	defer func() {
		if err != nil {
			for _, f := range files {
				f.discard()
			}
		}
	}()
	ws := make([]io.Writer, len(names))
	for i, name := range names {
		f, err := createTemp(d, name, perm)
		if err != nil {
			return err
		}
		files = append(files, f)
		ws[i] = f.w
	}
	if err := write(ws); err != nil {
		return err
	}
	for _, f := range files {
		if err := f.commit(); err != nil {
			return err
		}
	}
	// Every file is complete and on disk: only now replace the old ones.
	// Each stays open, and so locked, until it is renamed: a sweep by
	// another process (another machine's, on a shared folder) leaves it
	// alone until then.
	for _, f := range files {
		if err := f.publish(replace); err != nil {
			return err
		}
		if err := f.close(); err != nil {
			return err
		}
	}
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("publishing %s: syncing folder: %w", strings.Join(names, ", "), err)
	}
	return nil
}

// tempFile is one file being written: a temp file in the folder it will be
// renamed into, behind a buffer.
type tempFile struct {
	dir        *Root
	name, temp string
	f          *os.File
	w          *bufio.Writer
	closed     bool
	renamed    bool
}

// publish gives the temp file its name: by a rename, which replaces a
// file (or a link) of that name, or, without replace, by a link, which
// fails when the name exists, and the temp name's removal.
func (t *tempFile) publish(replace bool) error {
	if replace {
		if err := t.dir.Rename(t.temp, t.name); err != nil {
			return fmt.Errorf("renaming %s into place: %w", t.name, err)
		}
		t.renamed = true
		return nil
	}
	if err := unix.Linkat(t.dir.fd(), t.temp, t.dir.fd(), t.name, 0); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("publishing %s: %w", t.name, ErrExists)
		}
		return fmt.Errorf("publishing %s: %w", t.dir.Path(t.name), err)
	}
	t.renamed = true
	if err := unix.Unlinkat(t.dir.fd(), t.temp, 0); err != nil {
		return fmt.Errorf("publishing %s: %w", t.dir.Path(t.name), err)
	}
	return nil
}

// createTemp creates the temp file for name in dir, locked (flock, held
// while the file is open) so that sweep can tell it from one a crash
// left. A sweep may take the lock first, between the creation and the
// lock, and remove the file: then the lock is on a file that is gone, and
// a new one is made.
func createTemp(dir *Root, name string, perm os.FileMode) (*tempFile, error) {
	for try := 0; ; try++ {
		temp := TempPrefix + strconv.FormatUint(rand.Uint64(), 36)
		f, err := dir.OpenFile(temp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("creating temp file for %s: %w", name, err)
		}
		t := &tempFile{dir: dir, name: name, temp: temp, f: f, w: bufio.NewWriterSize(f, 64<<10)}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.discard()
			return nil, fmt.Errorf("locking temp file for %s: %w", name, err)
		}
		held, err := f.Stat()
		if err != nil {
			t.discard()
			return nil, fmt.Errorf("creating temp file for %s: %w", name, err)
		}
		if now, err := dir.Lstat(temp); err != nil || !os.SameFile(held, now) {
			f.Close()
			if try < 3 {
				continue
			}
			return nil, fmt.Errorf("creating temp file for %s: swept as it was made, %d times", name, try+1)
		}
		// The file is made 0600, which a umask cannot widen; perm is set
		// explicitly, through the descriptor, before any byte is written.
		if err := f.Chmod(perm); err != nil {
			t.discard()
			return nil, fmt.Errorf("restricting temp file for %s: %w", name, err)
		}
		return t, nil
	}
}

// commit flushes and fsyncs the temp file; it stays open (close).
func (t *tempFile) commit() error {
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", t.name, err)
	}
	if err := t.f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", t.name, err)
	}
	return nil
}

// close closes the temp file, which lets its lock go.
func (t *tempFile) close() error {
	t.closed = true
	if err := t.f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", t.name, err)
	}
	return nil
}

// discard removes the temp file unless it was renamed into place.
func (t *tempFile) discard() {
	if !t.closed {
		t.f.Close()
	}
	if !t.renamed {
		t.dir.Remove(t.temp)
	}
}

// SweepTemp removes the temp files a crash left in dir (regular files whose
// names start with TempPrefix) and returns how many it removed. A temp
// file a WriteFiles is writing, in this process or another (on another
// machine too, on a shared folder whose locks reach across machines), is
// locked and left alone.
func SweepTemp(dir string) (int, error) {
	r, err := OpenRoot(dir)
	if err != nil {
		return 0, fmt.Errorf("sweeping temp files: %w", err)
	}
	defer r.Close()
	return r.SweepTemp(".")
}

// SweepTemp is the package's SweepTemp in the folder dir beneath r.
func (r *Root) SweepTemp(dir string) (int, error) {
	d, err := r.OpenRoot(dir)
	if err != nil {
		return 0, fmt.Errorf("sweeping temp files: %w", err)
	}
	defer d.Close()
	return d.sweep(TempPrefix)
}

func (r *Root) sweep(prefix string) (removed int, err error) {
	// Temp files are few; the folder may hold many thousand artifacts, so
	// it is read in batches, through a descriptor of its own (reading
	// moves its offset).
	f, err := r.Open(".")
	if err != nil {
		return 0, fmt.Errorf("sweeping temp files: %w", err)
	}
	defer f.Close()
	var temps []string
	for {
		entries, err := f.ReadDir(walkBatch)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
				temps = append(temps, e.Name())
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("sweeping temp files: %w", err)
		}
	}
	for _, name := range temps {
		ok, err := r.removeUnlocked(name)
		if err != nil {
			return removed, fmt.Errorf("removing temp file %s: %w", name, err)
		}
		if ok {
			removed++
		}
	}
	if removed > 0 {
		if err := r.f.Sync(); err != nil {
			return removed, fmt.Errorf("syncing folder %s: %w", r.dir, err)
		}
	}
	return removed, nil
}

// removeUnlocked removes the temp file name unless a live writer holds
// its lock; ok says whether it went. The file is removed while this
// process holds the lock, so that no writer can take it between the
// check and the removal (createTemp makes a new file if it lost that
// race).
func (r *Root) removeUnlocked(name string) (ok bool, err error) {
	f, err := r.Open(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrLink) {
		return false, nil // gone, or a link now: not a temp file of ours
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("locking: %w", err)
	}
	if err := r.Remove(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}
