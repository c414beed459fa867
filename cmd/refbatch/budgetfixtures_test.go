package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateFixtures = flag.Bool("update", false, "rewrite the generated fixtures in testdata/admit/budget")

// budgetFixtures are the committed files of testdata/admit/budget, the
// classes that are small and valid and cost their readers: text layers
// that claim megabytes (issue 28, failure 1) and a file of pages that
// each take seconds to draw (failure 4). make bench-hostile
// runs them between two good documents with the hostile fixtures.
var budgetFixtures = map[string]func() []byte{
	"text-bomb.pdf":  func() []byte { return textBomb(0, 10<<20) },
	"text-layer.pdf": func() []byte { return textBomb(1, 1_500_000) },
	"slow-forms.pdf": func() []byte { return slowForms(200, 145) },
}

// TestBudgetFixtures checks the committed files against their builders
// (rewrite them with -update).
func TestBudgetFixtures(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot(t), "testdata", "admit", "budget")
	for name, build := range budgetFixtures {
		want := build()
		path := filepath.Join(dir, name)
		if *updateFixtures {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (write it with go test ./cmd/refbatch -run TestBudgetFixtures -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what its builder writes: rewrite it with -update", name)
		}
	}
}
