package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Stdin is the manifest path that means the standard input. The process
// reads it once, into memory (SetStdin), and every reader of the path
// "-" reads those bytes: a run reads its manifest more than once (check,
// admission, rows again by offset), which a pipe cannot give.
const Stdin = "-"

// MaxStdinBytes bounds a manifest read from the standard input, which is
// held in memory: 64 MiB is some 300,000 rows of long paths.
const MaxStdinBytes = 64 << 20

// ErrStdinTooLarge means the standard input held more than MaxStdinBytes.
var ErrStdinTooLarge = fmt.Errorf("the manifest on the standard input is larger than %d MiB: write it to a file and name the file", MaxStdinBytes>>20)

var stdin struct {
	sync.Mutex
	data []byte
	set  bool
	at   time.Time
}

// ReadStdin reads r (the standard input) through, up to MaxStdinBytes,
// keeps it as the manifest "-", and returns its SHA-256 in hex.
func ReadStdin(r io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxStdinBytes+1))
	if err != nil {
		return "", &FileError{Msg: "cannot read the manifest from the standard input", Err: err}
	}
	if len(b) > MaxStdinBytes {
		return "", ErrStdinTooLarge
	}
	SetStdin(b)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// SetStdin makes data the manifest "-" of this process.
func SetStdin(data []byte) {
	stdin.Lock()
	defer stdin.Unlock()
	stdin.data, stdin.set, stdin.at = data, true, time.Now()
}

// ErrNoStdin means the manifest "-" was named but this process read no
// standard input for it.
var ErrNoStdin = errors.New("the manifest was read from the standard input, which this command does not read")

// File is an open manifest: a file, or the bytes of the standard input.
type File interface {
	io.ReadSeeker
	io.Closer
	Stat() (fs.FileInfo, error)
}

// Open opens the manifest at path: the bytes SetStdin kept for "-", else
// the file.
func Open(path string) (File, error) {
	if path != Stdin {
		return os.Open(path)
	}
	stdin.Lock()
	defer stdin.Unlock()
	if !stdin.set {
		return nil, ErrNoStdin
	}
	return &memFile{Reader: bytes.NewReader(stdin.data), info: memInfo{size: int64(len(stdin.data)), mod: stdin.at}}, nil
}

type memFile struct {
	*bytes.Reader
	info memInfo
}

func (m *memFile) Close() error               { return nil }
func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }

type memInfo struct {
	size int64
	mod  time.Time
}

func (i memInfo) Name() string       { return Stdin }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o400 }
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
