package journal

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// PostgresEnv names the environment variable holding the URL of a
// PostgreSQL database the tests may create schemas in. Without it, the
// PostgreSQL half of every backend table skips.
const PostgresEnv = "REFBATCH_TEST_POSTGRES"

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

var backends = []backend{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "journal.db") }},
	{"postgres", postgresSchema},
}

// eachBackend runs fn as a subtest per backend.
func eachBackend(t *testing.T, fn func(t *testing.T, be backend)) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { fn(t, be) })
	}
}

var pgAdmin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

// postgresSchema makes a schema for t in the database REFBATCH_TEST_POSTGRES
// names and returns that URL with the schema as its search_path; t skips
// when the variable is not set.
func postgresSchema(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " is not set (a postgres:// URL): the PostgreSQL journal is not tested")
	}
	u, err := url.Parse(base)
	if err != nil || !IsURL(base) {
		t.Fatalf("%s is not a postgres:// URL: %v", PostgresEnv, err)
	}
	pgAdmin.once.Do(func() {
		// "pgx" is the driver pgx's stdlib registers.
		pgAdmin.db, pgAdmin.err = sql.Open("pgx", base)
		if pgAdmin.err == nil {
			pgAdmin.err = pgAdmin.db.Ping()
		}
	})
	if pgAdmin.err != nil {
		t.Fatalf("%s: %v", PostgresEnv, pgAdmin.err)
	}
	name := "t_" + NewToken()
	if _, err := pgAdmin.db.Exec(`CREATE SCHEMA ` + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pgAdmin.db.Exec(`DROP SCHEMA ` + name + ` CASCADE`); err != nil {
			t.Errorf("dropping the test's schema: %v", err)
		}
	})
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
