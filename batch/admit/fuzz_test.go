package admit

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
)

// FuzzAdmit drives the whole admission path as the run does: bytes on
// disk, read under the source rules, hashed, sniffed, and inspected by a
// real admission child. Whatever the bytes, Check must return an admitted
// document that makes sense or a rejection: never another error, never a
// hang, and never a crash of the calling process (the fuzzing process
// stands in for refbatch's parent). The child may crash, run out of memory
// or time out; that is a rejection, unparseable_pdf.
//
// Seeds: the committed admission fixtures, the image fixtures at a
// harmless size (imageSeeds) and the shared real-world corpus when it is
// there. The hostile fixtures are not seeds: each of their
// mutants would cost the child its whole CPU budget, a thousand times the
// cost of a sound input, and TestHostileFixtures (cmd/refbatch) runs them
// through the real binary anyway. Run a campaign with
//
//	go test -run '^$' -fuzz FuzzAdmit -fuzztime 30m -timeout 0 ./batch/admit
//
// Deadlines are short here, so a slow but sound input can be rejected:
// the property is about the parent, not the verdict.
func FuzzAdmit(f *testing.F) {
	for _, dir := range []string{fixtureDir, realCorpusDir()} {
		if dir == "" {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(dir, "*.pdf"))
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil && len(b) <= 2<<20 {
				f.Add(b)
			}
		}
	}
	// The image seeds are harmless: admission reads their headers only.
	for _, build := range imageSeeds {
		f.Add(build())
	}
	root := f.TempDir()
	pool := fuzzPool(f)
	lim := DefaultLimits()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(root, "in.pdf")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		doc, err := Check(ctx, root, "in.pdf", "", lim, pool)
		if r, ok := IsRejection(err); ok {
			if r.Reason == "" || r.Detail == "" {
				t.Fatalf("rejection without a reason or detail: %#v", r)
			}
			return
		}
		if err != nil {
			t.Fatalf("Check failed for the batch, not the row: %v", err)
		}
		if doc.Pages < 1 || doc.Pages > lim.MaxPages || len(doc.PageDPI) != doc.Pages || doc.Size != int64(len(data)) {
			t.Fatalf("admitted with %d pages, %d DPIs, %d bytes of %d", doc.Pages, len(doc.PageDPI), doc.Size, len(data))
		}
		for _, d := range doc.PageDPI {
			if d < lim.Page.MinDPI || d > lim.Page.DPI {
				t.Fatalf("a page renders at %d dpi, outside %d–%d", d, lim.Page.MinDPI, lim.Page.DPI)
			}
		}
	})
}

var (
	fuzzPoolOnce sync.Once
	fuzzPoolP    *Pool
)

// fuzzPool is one pool per fuzzing process, with short deadlines.
func fuzzPool(f *testing.F) *Pool {
	fuzzPoolOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			f.Fatal(err)
		}
		fuzzPoolP = NewPool(PoolConfig{Command: child.Command{Path: exe, Env: []string{"ADMIT_TEST_CHILD=1"}},
			Budget: child.Budget{Timeout: 300 * time.Millisecond, TimeoutPerMiB: 100 * time.Millisecond}})
	})
	return fuzzPoolP
}

// realCorpusDir is the shared real-world corpus, or "" when absent.
func realCorpusDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	dir := filepath.Join(wd, "..", "..", "..", "shared", "corpus", "real")
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}
