package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestBoundsAreExact: a file of exactly max bytes is read, one byte more
// is a *TooLargeError, whether fstat finds it (OpenRegular, ReadRegular) or the read
// does (copyBounded, for a file that grows while it is read); max < 0 is
// no bound, and max 0 still reads an empty file.
func TestBoundsAreExact(t *testing.T) {
	dir := t.TempDir()
	ten := filepath.Join(dir, "ten")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(ten, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path     string
		size     int
		max      int64
		tooLarge bool
	}{
		{ten, 10, 10, false}, {ten, 10, 9, true}, {ten, 10, -1, false}, {ten, 10, 0, true}, {empty, 0, 0, false}, {empty, 0, -1, false},
	} {
		b, err := ReadRegular(context.Background(), tc.path, tc.max)
		var tl *TooLargeError
		if errors.As(err, &tl) != tc.tooLarge || !tc.tooLarge && (err != nil || len(b) != tc.size) {
			t.Errorf("ReadRegular(%s, max %d) = %d bytes, %v; want too large %v", filepath.Base(tc.path), tc.max, len(b), err, tc.tooLarge)
		}
		if f, err := OpenRegular(tc.path, tc.max); errors.As(err, &tl) != tc.tooLarge || !tc.tooLarge && err != nil {
			t.Errorf("OpenRegular(%s, max %d): %v; want too large %v", filepath.Base(tc.path), tc.max, err, tc.tooLarge)
		} else if err == nil {
			f.Close()
		}
		var w bytes.Buffer
		n, err := copyBounded(context.Background(), &w, bytes.NewReader(make([]byte, tc.size)), tc.path, tc.max)
		if errors.As(err, &tl) != tc.tooLarge || !tc.tooLarge && (err != nil || n != int64(tc.size) || w.Len() != tc.size) {
			t.Errorf("copyBounded(%d bytes, max %d) = %d, %v; want too large %v", tc.size, tc.max, n, err, tc.tooLarge)
		}
	}
}

// failing is a reader or writer that fails with err.
type failing struct{ err error }

func (f failing) Read([]byte) (int, error)  { return 0, f.err }
func (f failing) Write([]byte) (int, error) { return 0, f.err }

// TestCopyBoundedErrors: copyBounded ends with its context's error before
// reading, and passes on a read's or a write's error instead of ending
// as if the file were whole.
func TestCopyBoundedErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := copyBounded(ctx, io.Discard, bytes.NewReader([]byte("x")), "p", -1); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v, want context.Canceled", err)
	}
	bad := errors.New("bad sector")
	if _, err := copyBounded(context.Background(), io.Discard, failing{bad}, "p", -1); !errors.Is(err, bad) {
		t.Errorf("a failing read: %v, want it passed on", err)
	}
	if _, err := copyBounded(context.Background(), failing{bad}, bytes.NewReader([]byte("x")), "p", -1); !errors.Is(err, bad) {
		t.Errorf("a failing write: %v, want it passed on", err)
	}
	if _, err := ReadRegular(ctx, filepath.Join(t.TempDir(), "none"), -1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}

// TestExactSize: a file of the size recorded for it is read; one byte
// more or less is a *SizeError naming both sizes (ErrTooLarge or
// ErrTooSmall in its chain, IsUnsafe), found before a byte is read; and
// PutSized's size is the file's on disk.
func TestExactSize(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sum, size, err := st.PutSized("a.json", []byte("0123456789"))
	if err != nil || size != 10 {
		t.Fatalf("PutSized = %d bytes, %v; want 10", size, err)
	}
	for _, tc := range []struct {
		want int64
		is   error
	}{{10, nil}, {9, ErrTooLarge}, {11, ErrTooSmall}} {
		got, err := st.HashSized("a.json", Exactly(tc.want))
		var se *SizeError
		switch {
		case tc.is == nil && (err != nil || got != sum):
			t.Errorf("HashSized(Exactly(%d)) = %s, %v; want %s", tc.want, got, err, sum)
		case tc.is != nil && (!errors.Is(err, tc.is) || !IsUnsafe(err) || !errors.As(err, &se) || se.Size != 10 || se.Want != tc.want):
			t.Errorf("HashSized(Exactly(%d)) = %v; want a *SizeError %v of 10 and %d bytes", tc.want, err, tc.is, tc.want)
		}
		if _, err := st.ReadSized("a.json", Exactly(tc.want), nil); (err == nil) != (tc.is == nil) {
			t.Errorf("ReadSized(Exactly(%d)) = %v", tc.want, err)
		}
	}
}
