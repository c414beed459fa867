package manifest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular means the manifest is not a regular file (a FIFO or a
// device in its place): a reader that reads a row again (Index, RowAt)
// refuses it before it reads a byte, and never blocks on it.
var ErrNotRegular = errors.New("not a regular file")

// openRegular opens the manifest at path for reading a row again: the
// bytes SetStdin kept for "-", else the file, opened without blocking
// and only when fstat says it is a regular file (a *FileError naming it
// otherwise).
func openRegular(path string) (File, error) {
	if path == Stdin {
		return Open(path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &FileError{Msg: "cannot open the manifest", Err: err}
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is %s: %w", path, kindOf(fi.Mode()), ErrNotRegular)
	}
	if err != nil {
		f.Close()
		return nil, &FileError{Msg: "cannot read the manifest", Err: err}
	}
	return f, nil
}

// RowAt reads the manifest at path from its start up to the row at line
// and returns it; ok is false when no row starts there. It reads no
// further than that row, so a reader of one row (the desk) costs the
// rows before it and never the file's whole size, and it opens the file
// as Index does: a regular file only, without blocking.
func RowAt(path string, line int) (row Row, ok bool, err error) {
	f, err := openRegular(path)
	if err != nil {
		return Row{}, false, err
	}
	defer f.Close()
	r, err := NewReader(f)
	if err != nil {
		return Row{}, false, err
	}
	for {
		row, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			return Row{}, false, nil
		case err != nil:
			return Row{}, false, err
		case row.Line == line:
			return row, true, nil
		case row.Line > line:
			return Row{}, false, nil
		}
	}
}

// kindOf names what a file that is not a regular one is.
func kindOf(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	}
	return "not a plain file"
}
