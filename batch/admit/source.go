package admit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/refbatch/refbatch/report/outcome"
)

// Reading a source is the one place refbatch touches a file the manifest
// names, at admission, before OCR and in `verify --sources`, and every read
// goes through openSource:
//
//   - the path is resolved inside the root (Resolve), and the file is then
//     opened through an os.Root on the resolved root, so a path swapped for
//     a symlink out of the root after it was resolved is refused, not
//     followed;
//   - it is opened with O_NONBLOCK, so a FIFO or a device put in its place
//     cannot block the open, and anything but a regular file is refused
//     after the open (fstat), before a byte is read;
//   - at most the cap plus one byte is read, whatever the file's size says
//     (a sparse file, /proc, a file still growing).
//
// Every failure is a *Rejection naming no path and quoting no OS error
// text, since a file name may carry a participant's name or ID.

// ReadSource reads the source at path (relative to root, or absolute
// inside it) under the rules above, refusing one over maxBytes. A refused
// or unreadable file is a *Rejection (path_outside_root, missing_file,
// not_pdf, empty_file, too_large, unreadable).
func ReadSource(root, path string, maxBytes int64) ([]byte, error) {
	data, _, err := readSource(root, path, maxBytes)
	return data, err
}

// readSource is ReadSource, also returning the path resolved inside the
// root.
func readSource(root, path string, maxBytes int64) (data []byte, resolved string, err error) {
	f, resolved, size, err := openSource(root, path, maxBytes)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	buf := bytes.NewBuffer(make([]byte, 0, min(size, maxBytes)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, maxBytes+1)); err != nil {
		return nil, "", unreadable(err)
	}
	if err := checkSize(int64(buf.Len()), maxBytes); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), resolved, nil
}

// HashSource streams the source at path through SHA-256 under the same
// rules as ReadSource, without holding its bytes, and returns the digest in
// lowercase hex and the number of bytes hashed. root may be "" when no root
// is known (an old journal): the path is then only refused if it is not a
// regular file.
func HashSource(root, path string, maxBytes int64) (sha256hex string, size int64, err error) {
	f, _, _, err := openSource(root, path, maxBytes)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxBytes+1))
	if err != nil {
		return "", 0, unreadable(err)
	}
	if err := checkSize(n, maxBytes); err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// openSource opens the source for reading and returns it with its path
// resolved inside the root and its size by fstat, or a *Rejection.
func openSource(root, path string, maxBytes int64) (f *os.File, resolved string, size int64, err error) {
	f, resolved, err = openInRoot(root, path)
	if err != nil {
		return nil, "", 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", 0, unreadable(err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, "", 0, notRegular(fi)
	}
	if err := checkSize(fi.Size(), maxBytes); err != nil {
		f.Close()
		return nil, "", 0, err
	}
	return f, resolved, fi.Size(), nil
}

// sourceFlags open a source without blocking on a FIFO and without making
// a terminal the controlling one.
const sourceFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// openInRoot opens path inside root (see the rules above) and returns it
// with its resolved path. With no root the path is opened as it is.
func openInRoot(root, path string) (*os.File, string, error) {
	if root == "" {
		f, err := os.OpenFile(path, sourceFlags, 0)
		if err != nil {
			return nil, "", openError(err)
		}
		return f, path, nil
	}
	// A root that cannot be resolved is the batch's problem, not the row's.
	realRoot, err := filepath.Abs(root)
	if err == nil {
		realRoot, err = filepath.EvalSymlinks(realRoot)
	}
	if err != nil {
		return nil, "", fmt.Errorf("resolving root: %w", err)
	}
	resolved, err := Resolve(root, path)
	if err != nil {
		if _, ok := IsRejection(err); ok {
			return nil, "", err
		}
		return nil, "", unreadable(err)
	}
	rel, err := filepath.Rel(realRoot, resolved)
	switch {
	case err == nil && rel == ".":
		return nil, "", reject(outcome.NotPDF, "the path is the root folder")
	case err != nil || !filepath.IsLocal(rel):
		return nil, "", reject(outcome.PathOutsideRoot, "the path resolves outside the root")
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, "", fmt.Errorf("opening root: %w", err)
	}
	defer r.Close()
	f, err := r.OpenFile(rel, sourceFlags, 0)
	if err != nil {
		return nil, "", openError(err)
	}
	return f, resolved, nil
}

// openError turns a failed open into a rejection. An os.Root refuses a
// path that leaves the root (a symlink swapped in after Resolve) with an
// error of its own; ENXIO is a socket or a device with nothing behind it.
func openError(err error) error {
	var pe *fs.PathError
	switch {
	case missingPathError(err):
		return reject(outcome.MissingFile, "the file does not exist")
	case errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent":
		return reject(outcome.PathOutsideRoot, "the path leads outside the root through a symlink")
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.EISDIR):
		return reject(outcome.NotPDF, "the path is not a regular file")
	}
	return unreadable(err)
}

// unreadable rejects a file that exists but cannot be read. Only the
// errno's name is kept: an OS error's text names the path.
func unreadable(err error) *Rejection {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return reject(outcome.Unreadable, "the file cannot be read (%s)", errnoName(errno))
	}
	return reject(outcome.Unreadable, "the file cannot be read")
}

// errnoName is the symbolic name of an errno for the common cases, else
// its number.
func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EACCES:
		return "EACCES"
	case syscall.EPERM:
		return "EPERM"
	case syscall.EIO:
		return "EIO"
	case syscall.ELOOP:
		return "ELOOP"
	case syscall.EAGAIN:
		return "EAGAIN"
	case syscall.ESTALE:
		return "ESTALE"
	case syscall.ETIMEDOUT:
		return "ETIMEDOUT"
	}
	return fmt.Sprintf("errno %d", int(e))
}
