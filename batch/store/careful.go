package store

// The read side's one way to open a file refbatch did not just write (an
// artifact, a transcription, the manifest the desk reads again, the
// journal's companions): without following a link, without blocking on a
// FIFO planted in its place, only when fstat says it is a regular file,
// and only when its size is the one recorded for it, or within what it
// can be, all before a byte is read; then read through a bound, and stopped by a context.

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

// ErrTooSmall is in the chain of a *SizeError for a file smaller than
// the size recorded for it.
var ErrTooSmall = errors.New("smaller than recorded")

// SizeError is a file whose size is not the one recorded when it was
// written (an artifact's, in the journal); it is refused before a byte is
// read. Its chain holds ErrTooLarge when the file is larger, ErrTooSmall
// when it is smaller.
type SizeError struct {
	Path       string
	Size, Want int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, not the %d recorded when it was written: refbatch does not read it", e.Path, e.Size, e.Want)
}

// Unwrap makes errors.Is(err, ErrTooLarge) or errors.Is(err, ErrTooSmall)
// true, as the file is larger or smaller than recorded.
func (e *SizeError) Unwrap() error {
	if e.Size > e.Want {
		return ErrTooLarge
	}
	return ErrTooSmall
}

// IsUnsafe reports whether err is a file refbatch refused to read for
// what it is rather than for what it holds: a link, not a regular file,
// larger than it can be, or not the size recorded for it.
func IsUnsafe(err error) bool {
	return errors.Is(err, ErrLink) || errors.Is(err, ErrNotRegular) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrTooSmall)
}

// Size is what a reader knows of a file's size before it opens it: the
// size recorded when the file was written (Exactly), or only the most it
// can be (AtMost).
type Size struct {
	n     int64
	exact bool
}

// Exactly is a size recorded when the file was written: a file of
// another size is a *SizeError.
func Exactly(n int64) Size { return Size{n: n, exact: true} }

// AtMost is a bound: a file larger than n is a *TooLargeError; n < 0
// bounds nothing.
func AtMost(n int64) Size { return Size{n: n} }

// AnySize bounds nothing.
var AnySize = AtMost(-1)

// Recorded is the size of a file whose size may not have been recorded
// (one written before sizes were): Exactly(n) when one was (n > 0), else
// AtMost(bound).
func Recorded(n, bound int64) Size {
	if n > 0 {
		return Exactly(n)
	}
	return AtMost(bound)
}

// max is the most a read of a file of this size may read (-1: no bound).
func (s Size) max() int64 { return s.n }

// check refuses size, a file's at path as fstat gives it, when it is not
// this size.
func (s Size) check(path string, size int64) error {
	switch {
	case s.exact && size != s.n:
		return &SizeError{Path: path, Size: size, Want: s.n}
	case !s.exact && s.n >= 0 && size > s.n:
		return &TooLargeError{Path: path, Size: size, Max: s.n}
	}
	return nil
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
	if err := checkRegular(f, path, AtMost(max)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenRegular opens name beneath the folder as the package's OpenRegular
// opens a path, with no link followed anywhere on the way, refusing a
// file that is not of size want.
func (r *Root) OpenRegular(name string, want Size) (*os.File, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(f, r.Path(name), want); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkRegular refuses f, opened from path, unless fstat says it is a
// regular file of size want.
func checkRegular(f *os.File, path string, want Size) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return want.check(path, fi.Size())
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
