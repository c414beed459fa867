// Package journaltest gives tests a journal of their own on each of the
// journal's two backends: a SQLite file, and a schema in the PostgreSQL
// database that REFBATCH_TEST_POSTGRES names, made for the test and dropped
// after it. Without the variable, the PostgreSQL half of every backend
// table skips with a message, so the tests pass on a machine without
// PostgreSQL; CI sets it (see .ci/run).
//
// It imports no package of the journal's (the journal's own tests use
// it); the PostgreSQL driver is the one the journal registers.
package journaltest

import (
	"database/sql"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"crypto/rand"
	"encoding/hex"
)

// PostgresEnv names the environment variable holding the URL of a
// PostgreSQL database the tests may create schemas in.
const PostgresEnv = "REFBATCH_TEST_POSTGRES"

// Backend is one of the journal's two implementations, for a table test.
type Backend struct {
	Name string
	// Location returns where a new, empty journal of t's own is, as
	// journal.Open takes it: a file in t's temporary folder, or a URL
	// whose search_path is a schema made for t.
	Location func(t testing.TB) string
	// Shared is the backend's location as a batch names it: "" for
	// SQLite (journal.db in the output folder), the URL for PostgreSQL.
	Shared func(t testing.TB) string
}

// Backends are SQLite and PostgreSQL.
var Backends = []Backend{
	{"sqlite", func(t testing.TB) string { return t.TempDir() + "/journal.db" }, func(testing.TB) string { return "" }},
	{"postgres", Postgres, Postgres},
}

// Each runs fn as a subtest per backend.
func Each(t *testing.T, fn func(t *testing.T, be Backend)) {
	for _, be := range Backends {
		t.Run(be.Name, func(t *testing.T) { fn(t, be) })
	}
}

var admin struct {
	once sync.Once
	db   *sql.DB
	err  error
}

// Postgres makes a schema for t in the database REFBATCH_TEST_POSTGRES
// names, drops it after t, and returns that URL with the schema as its
// search_path; t skips when the variable is not set.
func Postgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " is not set (a postgres:// URL): the PostgreSQL journal is not tested")
	}
	u, err := url.Parse(base)
	if err != nil || !(strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://")) {
		t.Fatalf("%s is not a postgres:// URL: %v", PostgresEnv, err)
	}
	admin.once.Do(func() {
		// "pgx" is the driver the journal's pgx stdlib import registers.
		admin.db, admin.err = sql.Open("pgx", base)
		if admin.err == nil {
			admin.err = admin.db.Ping()
		}
	})
	if admin.err != nil {
		t.Fatalf("%s: %v", PostgresEnv, admin.err)
	}
	var b [8]byte
	rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	if _, err := admin.db.Exec(`CREATE SCHEMA ` + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.db.Exec(`DROP SCHEMA ` + name + ` CASCADE`); err != nil {
			t.Errorf("dropping the test's schema: %v", err)
		}
	})
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
