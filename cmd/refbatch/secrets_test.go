package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/journal/journaltest"
)

// TestJournalSecretsNotPrinted: a password given in --journal's query
// (?password=, ?sslpassword=), in its user part, or in libpq's key=value
// form, is printed by no command, whether the URL is given as the flag or
// as REFBATCH_JOURNAL, and whatever the connection error says.
func TestJournalSecretsNotPrinted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(manifest, []byte("source_id,participant_id,referral_date,consent,path\nA,P1,2024-01-02,yes,a.pdf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := []string{"SECRET1", "SECRET2", "SECRET3", "SECRET4"}
	unreachable := "postgres://u:SECRET3@127.0.0.1:1/db?password=SECRET1&sslpassword=SECRET2&sslkey=%2Fk%2FSECRET4.key"
	cases := []struct {
		name string
		env  []string
		args []string
	}{
		{"status", nil, []string{"status", "--journal", unreachable}},
		{"status --json", nil, []string{"status", "--json", "--journal", unreachable}},
		{"status from the environment", []string{"REFBATCH_JOURNAL=" + unreachable}, []string{"status"}},
		{"verify", nil, []string{"verify", "--journal", unreachable}},
		{"run", nil, []string{"run", "--plaintext", "--journal", unreachable, "--out", filepath.Join(dir, "out"), manifest}},
		{"join", nil, []string{"join", "--journal", unreachable}},
		{"report", nil, []string{"report", "--journal", unreachable}},
		{"key=value form", nil, []string{"status", "--journal", "host=127.0.0.1 port=1 password=SECRET1 sslpassword='SECRET2'"}},
		{"key=value form to run", nil, []string{"run", "--plaintext", "--journal", "host=127.0.0.1 password=SECRET1", "--out", filepath.Join(dir, "out"), manifest}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := refbatch(t, tc.env, tc.args...)
			if r.code == 0 {
				t.Errorf("exit 0 on an unreachable journal\n%s%s", r.stdout, r.stderr)
			}
			for _, s := range secrets {
				if strings.Contains(r.stdout+r.stderr, s) {
					t.Errorf("exit %d printed %s:\n%s%s", r.code, s, r.stdout, r.stderr)
				}
			}
			if !strings.Contains(r.stderr, "xxxxx") {
				t.Errorf("the message does not show where the secret was masked:\n%s", r.stderr)
			}
		})
	}
}

// TestJournalSecretsNotPrintedReachable: a batch on a reachable
// PostgreSQL journal whose URL's query holds a password: run, status (text
// and JSON) and verify name the journal without it. One row, rejected at
// admission: no OCR.
func TestJournalSecretsNotPrintedReachable(t *testing.T) {
	u, err := url.Parse(journaltest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("sslpassword", "SECRET2")
	u.RawQuery = q.Encode()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(manifest, []byte(hdr5+"R-0003,P-590334,2021-02-21,maybe,docs/R-0003.pdf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := []string{"run", "--plaintext", "--journal", u.String(), "--out", filepath.Join(dir, "out"), "--root", sampleDir(t), manifest}
	if r := refbatch(t, nil, run...); r.code != exitNeedsPerson || strings.Contains(r.stdout+r.stderr, "SECRET2") {
		t.Fatalf("run: exit %d, want %d without the password\n%s%s", r.code, exitNeedsPerson, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"status", "--journal", u.String()}, {"status", "--json", "--journal", u.String()}, {"verify", "--journal", u.String()}} {
		r := refbatch(t, nil, args...)
		if r.code != 0 || strings.Contains(r.stdout+r.stderr, "SECRET2") {
			t.Errorf("%v: exit %d, want 0 without the password:\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if args[0] == "status" && !strings.Contains(r.stdout, "sslpassword=xxxxx") {
			t.Errorf("%v does not name the journal, its password masked:\n%s", args, r.stdout)
		}
	}
}
