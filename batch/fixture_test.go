package batch

import (
	"os"
	"sync"
	"testing"
)

// fixtures are folders built once per test binary and shared by the
// tests that only read them (or copy them before they change anything):
// a finished batch costs real OCR, its copy does not.
var fixtures struct {
	mu   sync.Mutex
	dirs []string
}

// fixtureDir makes a folder that lives until the test binary ends.
func fixtureDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "refbatch-batch-fixture-")
	if err != nil {
		t.Fatal(err)
	}
	fixtures.mu.Lock()
	fixtures.dirs = append(fixtures.dirs, dir)
	fixtures.mu.Unlock()
	return dir
}

// removeFixtures removes what fixtureDir made; TestMain calls it.
func removeFixtures() {
	fixtures.mu.Lock()
	defer fixtures.mu.Unlock()
	for _, d := range fixtures.dirs {
		os.RemoveAll(d)
	}
}
