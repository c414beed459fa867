package store

// The read side's one way to open a file refbatch did not just write (an
// artifact, a transcription, the manifest the desk reads again, the
// journal's companions): without following a link, without blocking on a
// FIFO planted in its place, only when fstat says it is a regular file,
// and only when its size is within what it can be, all before a byte is
// read; then read through a bound, and stopped by a context.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is in the chain of every *NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is a file refbatch would read that is not a regular
// file: a FIFO, a device, a socket or a folder in its place. It is not
// read.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: refbatch reads nothing from it", e.Path, describeMode(e.Mode))
}

// Unwrap makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

// ErrTooLarge is in the chain of every *TooLargeError.
var ErrTooLarge = errors.New("larger than it can be")

// TooLargeError is a file larger than the most it can be (for an
// artifact: what its document's pages can hold); it is refused before a
// byte is read, so that a sparse file of many gigabytes costs nothing.
type TooLargeError struct {
	Path      string
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, more than the %d it can be: refbatch does not read it", e.Path, e.Size, e.Max)
}

// Unwrap makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// IsUnsafe reports whether err is a file refbatch refused to read for
// what it is rather than for what it holds: a link, not a regular file,
// or larger than it can be.
func IsUnsafe(err error) bool {
	return errors.Is(err, ErrLink) || errors.Is(err, ErrNotRegular) || errors.Is(err, ErrTooLarge)
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a plain file (" + m.Type().String() + ")"
}

// OpenRegular opens the file at path for reading, carefully: a symbolic
// link as its last part is a *LinkError, anything but a regular file a
// *NotRegularError, and a file of more than max bytes (max >= 0) a
// *TooLargeError, each found by the open and fstat alone. The path to
// its folder is followed as given.
func OpenRegular(path string, max int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, &LinkError{Path: path}
			}
		}
		return nil, err
	}
	if err := checkRegular(f, path, max); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenRegular opens name beneath the folder as the package's OpenRegular
// opens a path, with no link followed anywhere on the way.
func (r *Root) OpenRegular(name string, max int64) (*os.File, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(f, r.Path(name), max); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkRegular refuses f, opened from path, unless fstat says it is a
// regular file of at most max bytes (max < 0: any size).
func checkRegular(f *os.File, path string, max int64) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if max >= 0 && fi.Size() > max {
		return &TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	return nil
}

// ReadRegular reads the whole file at path as OpenRegular opens it, at
// most max bytes (a file that grows past max while it is read is a
// *TooLargeError too), stopping when ctx ends.
func ReadRegular(ctx context.Context, path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(ctx, f, path, max)
}

// readChunk is how much a bounded read reads between two looks at its
// context.
const readChunk = 1 << 20

// copyBounded copies at most max bytes (max < 0: no bound) of f to w, a
// chunk at a time, and ends with ctx's error when ctx ends first. More
// than max bytes is a *TooLargeError naming path.
func copyBounded(ctx context.Context, w io.Writer, f io.Reader, path string, max int64) (int64, error) {
	var n int64
	buf := make([]byte, readChunk)
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := f.Read(buf)
		if k > 0 {
			n += int64(k)
			if max >= 0 && n > max {
				return n, &TooLargeError{Path: path, Size: n, Max: max}
			}
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, werr
			}
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// readBounded is copyBounded into memory.
func readBounded(ctx context.Context, f io.Reader, path string, max int64) ([]byte, error) {
	var b byteSink
	if _, err := copyBounded(ctx, &b, f, path, max); err != nil {
		return nil, err
	}
	return b.b, nil
}

type byteSink struct{ b []byte }

func (s *byteSink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}
