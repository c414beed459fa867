package admit

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// corpusDir returns ../shared/corpus/real next to the module root, or skips
// the test when it is absent.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("no go.mod above the test directory")
		}
		dir = parent
	}
	corpus := filepath.Join(dir, "..", "shared", "corpus", "real")
	if _, err := os.Stat(filepath.Join(corpus, "README.md")); err != nil {
		tb.Skipf("real corpus not found: %v", err)
	}
	return corpus
}

// corpusHashes reads the SHA-256 list at the end of the corpus README.
func corpusHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := regexp.MustCompile(`^([0-9a-f]{64})  (\S+\.pdf)$`)
	sums := map[string]string{}
	for s := bufio.NewScanner(f); s.Scan(); {
		if m := line.FindStringSubmatch(s.Text()); m != nil {
			sums[m[2]] = m[1]
		}
	}
	return sums
}

// TestCorpus checks every real file against the outcome its README
// expects, with the default limits and the README's hashes.
func TestCorpus(t *testing.T) {
	dir := corpusDir(t)
	rejected := map[string]outcome.Reason{
		"invalid.pdf":                     outcome.MalformedPDF,
		"unreadablemetadata.pdf":          outcome.MalformedPDF,
		"encrypted_algo4.pdf":             outcome.Encrypted,
		"libreoffice-writer-password.pdf": outcome.Encrypted,
		"skew-encrypted.pdf":              outcome.Encrypted,
		"hugemono.pdf":                    outcome.PageTooLarge,
		"enormous.pdf":                    outcome.PageTooLarge, // a 9000×9000 image: 81 Mpx
		"multipage.pdf":                   outcome.PageTooLarge, // the same image on page 2
	}
	pages := map[string]int{"cardinal.pdf": 4} // every other admitted file has 1 page
	sums := corpusHashes(t, dir)
	if len(sums) < 25 {
		t.Fatalf("found %d hashes in the corpus README; want 25", len(sums))
	}
	names := slices.Sorted(maps.Keys(sums))
	pool := testPool(t, PoolConfig{})
	var total time.Duration
	for _, name := range names {
		sum := sums[name]
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			doc, err := check(pool, dir, name, sum, DefaultLimits())
			elapsed := time.Since(start)
			total += elapsed
			if want, ok := rejected[name]; ok {
				r, ok := IsRejection(err)
				if !ok || r.Reason != want {
					t.Fatalf("Check() = %+v, %v; want %s", doc, err, want)
				}
				t.Logf("%v: %s", elapsed, r)
				return
			}
			if err != nil {
				t.Fatalf("Check() error = %v; want admitted", err)
			}
			want := max(pages[name], 1)
			if doc.Pages != want || len(doc.PageDPI) != want {
				t.Errorf("Check() pages = %d (dpi %v); want %d", doc.Pages, doc.PageDPI, want)
			}
			for i, d := range doc.PageDPI {
				if d != 300 {
					t.Errorf("page %d renders at %d dpi; want 300", i+1, d)
				}
			}
			t.Logf("%v: %d pages", elapsed, doc.Pages)
		})
	}
	t.Logf("%d files in %v", len(sums), total)
}

// TestCheckConcurrent admits the corpus from several goroutines at once
// through one pool of two children: the outcomes are those of one file at
// a time, and no more children are started than the pool allows.
func TestCheckConcurrent(t *testing.T) {
	dir := corpusDir(t)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	alone := testPool(t, PoolConfig{})
	want := map[string]string{}
	for _, e := range ents {
		want[e.Name()] = checkResult(check(alone, dir, e.Name(), "", DefaultLimits()))
	}
	pool := testPool(t, PoolConfig{Children: 2})
	var wg sync.WaitGroup
	for range 4 {
		for _, e := range ents {
			wg.Go(func() {
				if got := checkResult(check(pool, dir, e.Name(), "", DefaultLimits())); got != want[e.Name()] {
					t.Errorf("%s: concurrent outcome %q; alone %q", e.Name(), got, want[e.Name()])
				}
			})
		}
	}
	wg.Wait()
	n := pool.children.Started()
	if n > 2 {
		t.Errorf("the pool started %d children; want at most 2", n)
	}
}

func checkResult(doc *Doc, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(doc.Pages, doc.PageDPI, doc.SHA256)
}

// BenchmarkCheck admits a 100 KB scanned page (ccitt.pdf) through an
// admission child, and, for comparison, inspects it in the benchmark's own
// process as admission did before it was isolated: the difference is what
// isolation costs a document.
func BenchmarkCheck(b *testing.B) {
	dir := corpusDir(b)
	fi, err := os.Stat(filepath.Join(dir, "ccitt.pdf"))
	if err != nil {
		b.Skip(err)
	}
	b.Run("child", func(b *testing.B) {
		pool := testPool(b, PoolConfig{})
		b.SetBytes(fi.Size())
		for b.Loop() {
			if _, err := check(pool, dir, "ccitt.pdf", "", DefaultLimits()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-process", func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			if _, err := Check(context.Background(), dir, "ccitt.pdf", "", DefaultLimits(), inProcess{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// inProcess inspects in the calling process, as refbatch must never do
// with untrusted bytes: for benchmarks only.
type inProcess struct{}

func (inProcess) Inspect(_ context.Context, data []byte, lim Limits) ([]int, error) {
	return inspect(data, lim)
}
