package batch

import (
	"os"
	"sync"
	"testing"

	"github.com/refbatch/refbatch/batch/batchtest"
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

// tinySamples are ten good documents that cost no OCR time to speak of
// (batchtest.TinyReferral), each with bytes and a participant ID of its
// own, for the tests of the journal, the processes and the faults, which
// never look at the text.
func tinySamples(t *testing.T) []sampleRow {
	t.Helper()
	// Not in t.TempDir(): a subtest's name may hold a comma, which the
	// manifests these tests write do not quote.
	docs, err := batchtest.TinyDocs(fixtureDir(t), "T", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var rows []sampleRow
	for _, d := range docs {
		rows = append(rows, sampleRow{d.SourceID, d.ParticipantID, d.Date, d.Path})
	}
	return rows
}
