package journal

import (
	"testing"

	"github.com/refbatch/refbatch/batch/journal/journaltest"
)

// PostgresEnv names the environment variable holding the URL of a
// PostgreSQL database the tests may create schemas in (journaltest).
const PostgresEnv = journaltest.PostgresEnv

// backend is one of the journal's two implementations, for a table test.
type backend struct {
	name string
	// location returns where a new, empty journal of t's own is: a file
	// in t's temporary folder, or a URL whose search_path is a schema
	// made for t and dropped after it.
	location func(t testing.TB) string
}

// open opens a new journal of t's own on be, closed after t.
func (be backend) open(t testing.TB, opts ...Option) *Journal {
	t.Helper()
	j, err := Open(be.location(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

var backends = func() []backend {
	var out []backend
	for _, be := range journaltest.Backends {
		out = append(out, backend{be.Name, be.Location})
	}
	return out
}()

// eachBackend runs fn as a subtest per backend.
func eachBackend(t *testing.T, fn func(t *testing.T, be backend)) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { fn(t, be) })
	}
}

// postgresSchema is a journal of t's own on PostgreSQL (journaltest).
func postgresSchema(t testing.TB) string { return journaltest.Postgres(t) }
