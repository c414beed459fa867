package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIdentityFileOpenToOthers: verify, show and export warn on stderr, as
// ssh does, when the --identity file is readable by its group or by
// others, and go on; a file of mode 0600 draws no warning. The batch is
// one row rejected at admission (no OCR).
func TestIdentityFileOpenToOthers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "key.txt")
	r := refbatch(t, nil, "keygen", "--out", key)
	if r.code != 0 {
		t.Fatalf("keygen: exit %d\n%s", r.code, r.stderr)
	}
	recipient := strings.TrimSpace(r.stdout)
	manifest := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(manifest, []byte(hdr5+"R-0003,P-590334,2021-02-21,maybe,docs/R-0003.pdf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if r := refbatch(t, nil, "run", "--recipient", recipient, "--out", out, "--root", sampleDir(t), manifest); r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d, want %d\n%s", r.code, exitNeedsPerson, r.stderr)
	}
	commands := map[string][]string{
		"verify": {"verify", "--out", out, "--identity", key},
		"show":   {"show", "--out", out, "--identity", key, "R-0003"},
		"export": {"export", "--out", out, "--identity", key, "--to", filepath.Join(dir, "export")},
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o600} {
		if err := os.Chmod(key, mode); err != nil {
			t.Fatal(err)
		}
		for name, args := range commands {
			r := refbatch(t, nil, args...)
			warned := strings.Contains(r.stderr, "refbatch: warning: identity file "+key+" is open to others")
			if want := mode != 0o600; warned != want {
				t.Errorf("%s with a key of mode %04o: warned %v, want %v (exit %d)\n%s", name, mode, warned, want, r.code, r.stderr)
			}
			if name == "verify" && r.code != 0 {
				t.Errorf("verify with a key of mode %04o: exit %d, want 0: a warning does not refuse\n%s%s", mode, r.code, r.stdout, r.stderr)
			}
		}
	}
}
