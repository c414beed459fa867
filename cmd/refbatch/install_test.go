package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeInstall installs refbatch as a user would, with make install
// into a fresh PREFIX, and checks what landed there: the binary reports the
// version make stamped (git describe, never devel), a document it reads
// records that version in its provenance and the report, the man pages
// (a page per command, one per topic) render with man -l, and the completion scripts are those refbatch prints.
func TestMakeInstall(t *testing.T) {
	for _, tool := range []string{"make", "git", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	reads(t)
	root := repoRoot(t)
	describe, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	version := strings.TrimSpace(string(describe))
	prefix := t.TempDir()
	// make install builds BIN first. A copy of the binary TestMain built
	// with make's flags (stampFlags) is what that build would link from
	// this tree: go build finds it up to date, as after a make build, and
	// make install goes on with it; it still links one that is not.
	bin := filepath.Join(t.TempDir(), "refbatch")
	copyFile(t, binary, bin)
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	mk := exec.Command("make", "-C", root, "--no-print-directory", "install", "PREFIX="+prefix, "BIN="+bin)
	out, err := mk.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "apt-get") || strings.Contains(string(out), "deps:") {
		t.Errorf("make install ran make deps:\n%s", out)
	}
	installed := filepath.Join(prefix, "bin", "refbatch")

	v, err := exec.Command(installed, "--version").Output()
	if err != nil || string(v) != "refbatch version "+version+"\n" || strings.HasPrefix(version, "devel") {
		t.Errorf("installed refbatch --version: %q (%v), want refbatch version %s", v, err, version)
	}

	for _, page := range []string{"refbatch.1", "refbatch-run.1", "refbatch-keygen.1"} {
		if got := manPage(t, filepath.Join(prefix, "share", "man", "man1", page)); !strings.Contains(got, version) {
			t.Errorf("%s does not name version %s", page, version)
		}
	}
	if got := manPage(t, filepath.Join(prefix, "share", "man", "man7", "refbatch-outcomes.7")); !strings.Contains(got, "rejected_by_person") {
		t.Errorf("refbatch-outcomes.7 is not the outcomes topic:\n%.400s", got)
	}
	for shell, file := range map[string]string{"bash": "share/bash-completion/completions/refbatch", "zsh": "share/zsh/site-functions/_refbatch"} {
		b, err := os.ReadFile(filepath.Join(prefix, file))
		if err != nil || string(b) != completionScripts[shell] {
			t.Errorf("%s: not refbatch completion %s (%v)", file, shell, err)
		}
	}

	// The installed binary reads one document; its artifact and the
	// report record the version.
	dir := t.TempDir()
	manifest := writeRows(t, dir, copyGood(t, dir, 1))
	outDir := filepath.Join(dir, "out")
	run := exec.Command(installed, append(append([]string{"run", "--plaintext", "--out", outDir, "--workers", "1"}, tinyFlags...), manifest)...)
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("installed refbatch run: %v\n%s", err, b)
	}
	rep := readReport(t, outDir)
	if got := rep.Run.Versions["refbatch"]; got != version {
		t.Errorf("report records refbatch %q, want %q", got, version)
	}
	shown, err := exec.Command(installed, "show", "--out", outDir, "--json", rep.Rows[0].SourceID).Output()
	if err != nil {
		t.Fatalf("installed refbatch show: %v", err)
	}
	var a struct {
		Provenance struct {
			Engines map[string]string `json:"engines"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal(shown, &a); err != nil || a.Provenance.Engines["refbatch"] != version {
		t.Errorf("provenance records refbatch %q (%v), want %q", a.Provenance.Engines["refbatch"], err, version)
	}
}
