package store

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"filippo.io/age"
)

func newIdentity(t testing.TB) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestRoundTrip(t *testing.T) {
	alice, bob := newIdentity(t), newIdentity(t)
	payloads := map[string][]byte{
		"empty":  {},
		"small":  []byte("page 1\nreferral text\n"),
		"200KiB": randomBytes(t, 200<<10),
		// Exactly one age chunk, the boundary where the last-chunk flag matters.
		"64KiB": randomBytes(t, 64<<10),
	}
	tests := []struct {
		name       string
		recipients []age.Recipient
		readWith   []age.Identity
	}{
		{name: "plaintext"},
		{name: "plaintext empty recipients", recipients: []age.Recipient{}},
		{name: "encrypted", recipients: []age.Recipient{alice.Recipient()}, readWith: []age.Identity{alice}},
		{name: "encrypted to two, read by second", recipients: []age.Recipient{alice.Recipient(), bob.Recipient()}, readWith: []age.Identity{bob}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out", "artifacts")
			s, err := Open(dir, tt.recipients)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := s.Encrypted(), len(tt.recipients) > 0; got != want {
				t.Errorf("Encrypted() = %v, want %v", got, want)
			}
			if s.Dir() != dir {
				t.Errorf("Dir() = %q, want %q", s.Dir(), dir)
			}
			if m := mode(t, dir); m != 0o700 {
				t.Errorf("folder mode = %o, want 700", m)
			}
			var names []string
			for pname, plain := range payloads {
				name := "R-" + pname + ".txt"
				names = append(names, name)
				sum, err := s.Put(name, plain)
				if err != nil {
					t.Fatalf("Put(%s): %v", name, err)
				}
				path := filepath.Join(dir, name)
				if want := sha256File(t, path); sum != want {
					t.Errorf("Put(%s) hash = %s, want sha256 of file %s", name, sum, want)
				}
				if h, err := s.Hash(name); err != nil || h != sum {
					t.Errorf("Hash(%s) = %s, %v; want %s", name, h, err, sum)
				}
				if m := mode(t, path); m != 0o600 {
					t.Errorf("%s mode = %o, want 600", name, m)
				}
				onDisk, _ := os.ReadFile(path)
				if s.Encrypted() {
					if !bytes.HasPrefix(onDisk, []byte(ageMagic)) {
						t.Errorf("%s is not an age file", name)
					}
					if len(plain) > 16 && bytes.Contains(onDisk, plain[:16]) {
						t.Errorf("%s holds plaintext", name)
					}
				} else if !bytes.Equal(onDisk, plain) {
					t.Errorf("%s on disk differs from plaintext", name)
				}
				got, err := s.Read(name, tt.readWith)
				if err != nil {
					t.Fatalf("Read(%s): %v", name, err)
				}
				if !bytes.Equal(got, plain) {
					t.Errorf("Read(%s) returned %d bytes, want the %d written", name, len(got), len(plain))
				}
			}
			list, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(names)
			if !slices.Equal(list, names) {
				t.Errorf("List() = %q, want %q (no temp files left)", list, names)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		wantErr bool
	}{
		{name: "new nested folder", prepare: func(*testing.T, string) {}},
		{name: "existing 0755 is tightened", prepare: func(t *testing.T, dir string) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "existing 0777 is tightened", prepare: func(t *testing.T, dir string) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a file in the way", wantErr: true, prepare: func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "artifacts")
			tt.prepare(t, dir)
			_, err := Open(dir, nil)
			if tt.wantErr {
				if err == nil {
					t.Fatal("Open succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := mode(t, dir); m != 0o700 {
				t.Errorf("folder mode = %o, want 700", m)
			}
		})
	}
	if _, err := Open("", nil); err == nil {
		t.Error(`Open("") succeeded, want an error`)
	}
}

func TestBadNames(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{"", ".", "..", ".hidden", TempPrefix + "x", "a/b", "../escape", "/abs", `a\b`, "x\x00y"}
	for _, name := range bad {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			if _, err := s.Put(name, []byte("x")); err == nil {
				t.Error("Put accepted it")
			}
			if _, err := s.Hash(name); err == nil {
				t.Error("Hash accepted it")
			}
			if _, err := s.Read(name, nil); err == nil {
				t.Error("Read accepted it")
			}
			if err := s.Remove(name); err == nil {
				t.Error("Remove accepted it")
			}
		})
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Errorf("bad names left files: %q", list)
	}
}

func TestSweepTemp(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"R-1.txt", "tmp-not-a-temp.txt"} {
		if _, err := s.Put(name, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	// What a crash leaves, and things that are not ours to sweep.
	for _, name := range []string{TempPrefix + "123456", TempPrefix + "abc", ".other"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, TempPrefix+"folder"), 0o700); err != nil {
		t.Fatal(err)
	}

	removed, err := s.SweepTemp()
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 {
		t.Errorf("SweepTemp removed %d, want 2", removed)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".other", "R-1.txt", "tmp-not-a-temp.txt"}; !slices.Equal(list, want) {
		t.Errorf("after sweep List() = %q, want %q", list, want)
	}
	if removed, err := s.SweepTemp(); err != nil || removed != 0 {
		t.Errorf("second SweepTemp = %d, %v; want 0, nil", removed, err)
	}
}

// TestSweepSparesAWriteInProgress: a sweep while another writer (as
// another process on a shared folder) is between creating its temp file
// and renaming it leaves that file alone, and the write completes.
func TestSweepSparesAWriteInProgress(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	writing, proceed := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- WriteFiles(dir, []string{"R-1.txt"}, func(ws []io.Writer) error {
			close(writing)
			<-proceed
			_, err := ws[0].Write([]byte("whole"))
			return err
		})
	}()
	<-writing
	if removed, err := s.SweepTemp(); err != nil || removed != 0 {
		t.Errorf("SweepTemp during a write = %d, %v; want 0, nil", removed, err)
	}
	close(proceed)
	if err := <-done; err != nil {
		t.Fatalf("the write swept under: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "R-1.txt")); err != nil || string(b) != "whole" {
		t.Errorf("R-1.txt = %q, %v", b, err)
	}
}

// TestWalk: Walk gives every file once, more than one batch of them,
// without subfolders, and stops at fn's error.
func TestWalk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range walkBatch + 7 {
		name := fmt.Sprintf("R-%04d.json", i)
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := s.Walk(func(name string) error { got = append(got, name); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Walk gave %d names, want the %d files", len(got), len(want))
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.Walk(func(string) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Walk = %v after %d calls, want fn's error after one", err, calls)
	}
}

// failingWriter fails once more than limit bytes have been written.
type failingWriter struct {
	w     io.Writer
	limit int
	err   error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n, _ := f.w.Write(p[:f.limit])
		f.limit = 0
		return n, f.err
	}
	f.limit -= len(p)
	return f.w.Write(p)
}

func TestPutFailureLeavesNoTemp(t *testing.T) {
	id := newIdentity(t)
	tests := []struct {
		name       string
		recipients []age.Recipient
		limit      int
		err        error
	}{
		{name: "plaintext at first byte", limit: 0, err: syscall.EIO},
		{name: "plaintext midway", limit: 100 << 10, err: syscall.ENOSPC},
		{name: "encrypted in header", recipients: []age.Recipient{id.Recipient()}, limit: 10, err: syscall.EIO},
		{name: "encrypted midway", recipients: []age.Recipient{id.Recipient()}, limit: 100 << 10, err: syscall.ENOSPC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.TempDir(), tt.recipients)
			if err != nil {
				t.Fatal(err)
			}
			old := []byte("the earlier, complete artifact")
			oldSum, err := s.Put("R-1.txt", old)
			if err != nil {
				t.Fatal(err)
			}

			// Put's own path, with a writer between the encryptor and
			// the temp file that fails as a disk would.
			err = WriteFiles(s.Dir(), []string{"R-1.txt"}, func(ws []io.Writer) error {
				return s.encode(&failingWriter{w: ws[0], limit: tt.limit, err: tt.err}, randomBytes(t, 200<<10))
			})
			if !errors.Is(err, tt.err) {
				t.Fatalf("WriteFiles error = %v, want one wrapping %v", err, tt.err)
			}
			if got, want := IsNoSpace(err), tt.err == syscall.ENOSPC; got != want {
				t.Errorf("IsNoSpace(%v) = %v, want %v", err, got, want)
			}

			list, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"R-1.txt"}; !slices.Equal(list, want) {
				t.Errorf("List() = %q, want %q: temp file or half-written artifact left", list, want)
			}
			if sum, _ := s.Hash("R-1.txt"); sum != oldSum {
				t.Error("the earlier artifact was changed by a failed Put")
			}
		})
	}
}

// TestPutNeverOverwrites: a published artifact stays as it was when
// another Put names it, and no temp file is left.
func TestPutNeverOverwrites(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put("R-1.txt", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put("R-1.txt", []byte("second")); !errors.Is(err, ErrExists) {
		t.Errorf("second Put = %v, want ErrExists", err)
	}
	got, err := s.Read("R-1.txt", nil)
	if err != nil || string(got) != "first" {
		t.Errorf("Read = %q, %v; want %q", got, err, "first")
	}
	if list, _ := s.List(); !slices.Equal(list, []string{"R-1.txt"}) {
		t.Errorf("List() = %q: a temp file was left", list)
	}
}

func TestReadErrors(t *testing.T) {
	alice, mallory := newIdentity(t), newIdentity(t)
	dir := t.TempDir()
	enc, err := Open(dir, []age.Recipient{alice.Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Put("R-1.txt", []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "planted.txt"), []byte("plain"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The same folder opened without recipients, as verify would.
	plain, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		s      *Store
		file   string
		ids    []age.Identity
		wantIs error
	}{
		{name: "no identity", s: enc, file: "R-1.txt", wantIs: ErrNoIdentities},
		{name: "wrong identity", s: enc, file: "R-1.txt", ids: []age.Identity{mallory}},
		{name: "plaintext file in encrypted store", s: enc, file: "planted.txt", ids: []age.Identity{alice}},
		{name: "missing", s: enc, file: "R-9.txt", ids: []age.Identity{alice}, wantIs: fs.ErrNotExist},
		{name: "encrypted file, store without recipients, no identity", s: plain, file: "R-1.txt", wantIs: ErrNoIdentities},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.s.Read(tt.file, tt.ids)
			if err == nil {
				t.Fatal("Read succeeded, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Read error = %v, want one wrapping %v", err, tt.wantIs)
			}
		})
	}

	got, err := plain.Read("R-1.txt", []age.Identity{alice})
	if err != nil || string(got) != "secret" {
		t.Errorf("store without recipients, with identity: Read = %q, %v", got, err)
	}
}

func TestRemove(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put("R-1.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("R-1.txt"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Errorf("List() after Remove = %q", list)
	}
	if err := s.Remove("R-1.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second Remove = %v, want not exist", err)
	}
}

func TestConcurrentPut(t *testing.T) {
	id := newIdentity(t)
	s, err := Open(t.TempDir(), []age.Recipient{id.Recipient()})
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.Put(fmt.Sprintf("R-%02d.txt", i), []byte(strings.Repeat("x", i*1000)))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List()
	if len(list) != n {
		t.Fatalf("List() has %d files, want %d", len(list), n)
	}
	for i, name := range list {
		got, err := s.Read(name, []age.Identity{id})
		if err != nil || len(got) != i*1000 {
			t.Errorf("Read(%s) = %d bytes, %v; want %d", name, len(got), err, i*1000)
		}
	}
}

func TestIsNoSpace(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "ENOSPC", err: syscall.ENOSPC, want: true},
		{name: "path error", err: &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, want: true},
		{name: "wrapped", err: fmt.Errorf("writing artifact R-1: %w", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), want: true},
		{name: "EIO", err: syscall.EIO, want: false},
		{name: "other", err: errors.New("no space left on device"), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsNoSpace(tt.err); got != tt.want {
				t.Errorf("IsNoSpace(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func BenchmarkPut(b *testing.B) {
	id := newIdentity(b)
	payload := randomBytes(b, 200<<10)
	for _, bc := range []struct {
		name       string
		recipients []age.Recipient
	}{
		{name: "plaintext"},
		{name: "encrypted", recipients: []age.Recipient{id.Recipient()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := Open(b.TempDir(), bc.recipients)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(payload)))
			i := 0
			for b.Loop() {
				if _, err := s.Put(fmt.Sprintf("R-%d.txt", i%8), payload); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
