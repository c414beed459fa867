package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Finished batches cost real OCR; their copies do not. The fixtures here
// are built once per test binary, by the first test that asks, and each
// test gets its own copy of the output folder, which is the same as a
// batch it ran itself: an output folder holds no path of its own.

// fixtureRoot is the folder the fixtures live in until the test binary
// ends (TestMain removes it).
var fixtureRoot string

// sample is the committed sample run once with runArgs: plaintext, the
// fast flags, no fault.
var sample struct {
	once sync.Once
	out  string
	r    result
	ok   bool
}

// sampleRun is refbatch(t, nil, sampleArgs(out, <the sample's manifest>)...)
// for an out that does not exist yet: out becomes a copy of the one
// finished run of the sample, and the result is that run's, with its
// output folder's path replaced by out.
func sampleRun(t *testing.T, out string) result {
	t.Helper()
	sample.once.Do(func() {
		sample.out = filepath.Join(fixtureRoot, "sample", "out")
		if err := os.MkdirAll(filepath.Dir(sample.out), 0o700); err != nil {
			t.Fatal(err)
		}
		sample.r = refbatch(t, nil, sampleArgs(sample.out, filepath.Join(sampleDir(t), "manifest.csv"))...)
		sample.ok = true
	})
	if !sample.ok {
		t.Fatal("the shared run of the sample failed (see the first test that asked for it)")
	}
	copyOut(t, sample.out, out)
	r := sample.r
	r.stdout = strings.ReplaceAll(r.stdout, sample.out, out)
	r.stderr = strings.ReplaceAll(r.stderr, sample.out, out)
	return r
}

// copyOut copies a finished output folder, modes included.
func copyOut(t *testing.T, from, to string) {
	t.Helper()
	if _, err := os.Stat(to); err == nil {
		t.Fatalf("%s exists: a fixture is copied into a new folder", to)
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	// CopyFS writes folders 0777 and files 0666 (less the umask): give
	// back the batch's own modes.
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		return os.Chmod(filepath.Join(to, rel), info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}
