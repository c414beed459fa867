package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestControlCharactersEscaped: a source_id holding a terminal escape
// sequence (ESC [ 31m) and a BEL, and a path holding a line break, are
// shown escaped by every text output (review's list and decisions, status,
// run's summary, verify, errors naming the row), never raw. The document
// crashes its worker (a test fault) so that it reaches review without OCR.
func TestControlCharactersEscaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const id = "R-\x1b[31mRED\a"
	const shown = `R-\x1b[31mRED\a`
	manifest := filepath.Join(dir, "m\x1b[2J.csv")
	body := hdr5 + id + ",P-790373,2022-05-04,yes,docs/R-0006.pdf\n" +
		"R-2,P-790373,2022-05-04,yes,\"docs/a\nb\x1b[1m.pdf\"\n"
	if err := os.WriteFile(manifest, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	env := []string{"REFBATCH_TEST_FAULTS=crash=*"}
	raw := func(name string, r result) {
		t.Helper()
		for _, c := range []string{"\x1b", "\a"} {
			if strings.Contains(r.stdout, c) || strings.Contains(r.stderr, c) {
				t.Errorf("%s printed %q raw:\nstdout:\n%s\nstderr:\n%s", name, c, r.stdout, r.stderr)
			}
		}
	}
	r := refbatch(t, env, "run", "--plaintext", "--out", out, "--root", sampleDir(t), "--workers", "1", "--attempts", "1", manifest)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d, want %d\n%s%s", r.code, exitNeedsPerson, r.stdout, r.stderr)
	}
	raw("run", r)

	r = refbatch(t, nil, "review", "--out", out)
	if r.code != 0 || !strings.Contains(r.stdout, shown) {
		t.Errorf("review: exit %d, want the source_id shown as %s\n%s%s", r.code, shown, r.stdout, r.stderr)
	}
	raw("review", r)
	r = refbatch(t, nil, "status", "--out", out)
	if r.code != 0 || !strings.Contains(r.stdout, `m\x1b[2J.csv`) {
		t.Errorf("status: exit %d, want the manifest's path escaped\n%s%s", r.code, r.stdout, r.stderr)
	}
	raw("status", r)
	r = refbatch(t, nil, "verify", "--out", out)
	raw("verify", r)
	r = refbatch(t, nil, "show", "--out", out, id+"X")
	if r.code == 0 {
		t.Errorf("show of no document: exit 0")
	}
	raw("show", r)
	r = refbatch(t, nil, "review", "reject", "--out", out, "--note", "not \x1b[5ma referral", id)
	if r.code != 0 || !strings.Contains(r.stdout, "reject "+shown) {
		t.Errorf("review reject: exit %d, want the source_id shown as %s\n%s%s", r.code, shown, r.stdout, r.stderr)
	}
	raw("review reject", r)
	r = refbatch(t, nil, "review", "accept", "--out", out, id)
	if r.code != exitUsage || !strings.Contains(r.stderr, shown) {
		t.Errorf("a second decision: exit %d, want %d naming %s\n%s", r.code, exitUsage, shown, r.stderr)
	}
	raw("review accept", r)
}

func TestTermText(t *testing.T) {
	tests := []struct{ name, in, text, lines string }{
		{"plain", "R-0001 docs/référé.pdf", "R-0001 docs/référé.pdf", "R-0001 docs/référé.pdf"},
		{"backslash kept", `docs\R-0002.pdf`, `docs\R-0002.pdf`, `docs\R-0002.pdf`},
		{"escape sequence and bell", "R-\x1b[31mRED\a", `R-\x1b[31mRED\a`, `R-\x1b[31mRED\a`},
		{"line breaks and tabs", "a\nb\tc\rd", `a\nb\tc\rd`, "a\nb\tc\\rd"},
		{"C1 control and DEL", "a\u009bb\x7f", `a\u009bb\x7f`, `a\u009bb\x7f`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"not UTF-8", "caf\xe9", `caf\xe9`, `caf\xe9`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := termText(tt.in); got != tt.text {
				t.Errorf("termText(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := termLines(tt.in); got != tt.lines {
				t.Errorf("termLines(%q) = %q, want %q", tt.in, got, tt.lines)
			}
		})
	}
}
