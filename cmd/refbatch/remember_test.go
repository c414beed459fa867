package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRerunRemembers is issue 48's second acceptance: a batch run with
// --recipient, --no-id-check and --max-page-pixels (and the tiny reading's
// flags) reruns, a row appended, with no flag but --out: the new row is
// read and encrypted as the batch was, the run says which settings came
// from the batch, and a flag given still wins, recorded.
func TestRerunRemembers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "identity.txt")
	kg := refbatch(t, nil, "keygen", "--out", key)
	if kg.code != 0 {
		t.Fatalf("keygen: %d %s", kg.code, kg.stderr)
	}
	first := tinyRow(t, dir, "K-1", 1)
	first[1] = "P-000000" // not printed: done only without the ID check
	manifest := writeRows(t, dir, [][4]string{first})
	out := filepath.Join(dir, "out")
	args := append([]string{"run", "--recipient", strings.TrimSpace(kg.stdout), "--no-id-check", "--max-page-pixels", "20000000",
		"--out", out, "--workers", "1"}, tinyFlags...)
	if r := refbatch(t, nil, append(args, manifest)...); r.code != exitOK {
		t.Fatalf("first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	second := tinyRow(t, dir, "K-2", 2)
	second[1] = "P-000002"
	writeRows(t, dir, [][4]string{first, second})
	r := refbatch(t, nil, "run", "--out", out, manifest)
	if r.code != exitOK {
		t.Fatalf("rerun with --out alone: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"--no-id-check", "--max-page-pixels 20000000", "--dpi 72", "the recipients (1 key)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the summary does not say %q came from the batch:\n%s", want, r.stdout)
		}
	}
	rep := readReport(t, out)
	if s := rep.Run.Settings; s["id_check"] != "off" || s["max_page_pixels"] != "20000000" || s["dpi"] != "72" || !rep.Run.Encrypted {
		t.Errorf("the rerun's settings: %v, encrypted %v", s, rep.Run.Encrypted)
	}
	if v := refbatch(t, nil, "verify", "--out", out, "--identity", key); v.code != exitOK {
		t.Errorf("verify: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	// A flag given wins: the ID check back on, which the rerun records
	// (done rows stay done: only rows in review are validated again).
	r = refbatch(t, nil, "run", "--out", out, "--no-id-check=false", manifest)
	if r.code != exitOK || strings.Contains(r.stdout, "--no-id-check") {
		t.Errorf("--no-id-check=false: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if s := readReport(t, out).Run.Settings; s["id_check"] != "" || s["dpi"] != "72" {
		t.Errorf("the settings recorded: %v", s)
	}
}
