package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestWriteFiles(t *testing.T) {
	names := []string{"a.json", "b.csv", "c.html"}
	write := func(content string) func(ws []io.Writer) error {
		return func(ws []io.Writer) error {
			for _, w := range ws {
				if _, err := io.WriteString(w, content); err != nil {
					return err
				}
			}
			return nil
		}
	}
	dir := filepath.Join(t.TempDir(), "out")
	for _, content := range []string{"first", "second"} { // the second replaces the first
		if err := WriteFiles(dir, names, write(content)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want string) {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			if m := fi.Mode().Perm(); m != 0o600 {
				t.Errorf("%s mode = %o, want 600", e.Name(), m)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, e.Name())); string(b) != want {
				t.Errorf("%s holds %q, want %q", e.Name(), b, want)
			}
		}
		if !slices.Equal(got, names) {
			t.Errorf("folder holds %q, want %q and no temp file", got, names)
		}
	}
	check("second")
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("created folder: %v, %v; want mode 700", fi.Mode().Perm(), err)
	}

	// A failure after the first file is written, as a full disk would
	// cause it, leaves every old file as it was and no temp file.
	err := WriteFiles(dir, names, func(ws []io.Writer) error {
		io.WriteString(ws[0], "third")
		return &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}
	})
	if !IsNoSpace(err) {
		t.Fatalf("WriteFiles error = %v, want ENOSPC", err)
	}
	check("second")

	if err := WriteFiles(dir, []string{"../escape"}, write("x")); err == nil {
		t.Error("WriteFiles accepted a name with a path separator")
	}
}

func TestSweepTempLeavesOthers(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{TempPrefix + "1", ".tmp-user-file", "report.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := SweepTemp(dir)
	if err != nil || n != 1 {
		t.Fatalf("SweepTemp = %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp-user-file")); errors.Is(err, os.ErrNotExist) {
		t.Error("SweepTemp removed a file that is not refbatch's")
	}
}
