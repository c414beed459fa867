package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Tests of the command line itself: help, version, keygen's usage, the
// default output folder, sizes with units, shell completion, man pages.

func TestHelpAndVersion(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stdout []string
	}{
		{"help", []string{"help"}, []string{"COMMANDS:", "   run ", "   completion ", "--version"}},
		{"help CMD", []string{"help", "run"}, []string{"refbatch run [command options] MANIFEST.csv", "--max-bytes SIZE ", "(default: 64MiB)",
			"--recipient, -r KEY ", "[$REFBATCH_RECIPIENTS]", "TESSDATA_PREFIX", "Exit status:"}},
		{"a subcommand's help", []string{"review", "help", "retry"}, []string{"refbatch review retry", "--dpi N "}},
		{"CMD --help", []string{"keygen", "--help"}, []string{"--out, -o FILE ", "--stdout "}},
		{"--help", []string{"--help"}, []string{"COMMANDS:", "   run ", "--version"}},
		{"-h", []string{"-h"}, []string{"COMMANDS:", "   run ", "--version"}},
		{"version", []string{"version"}, []string{"refbatch version "}},
		{"--version", []string{"--version"}, []string{"refbatch version "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := refbatch(t, nil, tc.args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
		})
	}
	if a, b := refbatch(t, nil, "version"), refbatch(t, nil, "--version"); a.stdout != b.stdout {
		t.Errorf("version says %q, --version %q", a.stdout, b.stdout)
	}
}

// TestFlagHelp checks every flag's help line: a flag that takes a value
// names it once, after its names, and not again in its usage; a flag read
// from the environment says which variable.
func TestFlagHelp(t *testing.T) {
	var walk func(path string, cs []*cli.Command)
	walk = func(path string, cs []*cli.Command) {
		for _, c := range cs {
			for _, f := range c.VisibleFlags() {
				line := cli.FlagStringer(f)
				d, _ := docOf(f)
				name := path + " " + c.Name + " " + d.flags[0]
				if strings.Contains(line, "`") {
					t.Errorf("%s: a backquote in %q", name, line)
				}
				if vf, ok := f.(cli.DocGenerationFlag); ok && vf.TakesValue() {
					n := len(regexp.MustCompile(`\b`+regexp.QuoteMeta(d.placeholder)+`\b`).FindAllString(line, -1))
					if d.placeholder == "VALUE" || n != 1 {
						t.Errorf("%s: placeholder %q printed %d times in %q", name, d.placeholder, n, line)
					}
				}
				for _, env := range d.env {
					if !strings.Contains(line, "$"+env) {
						t.Errorf("%s: %q does not name %s", name, line, env)
					}
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("refbatch", newApp(io.Discard, io.Discard).Commands)
}

func TestKeygenUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"no --out", []string{"keygen"}, []string{"refbatch: error: keygen needs --out FILE", "refbatch: hint: refbatch keygen --out FILE (or --stdout"}},
		{"--out -", []string{"keygen", "-o", "-"}, []string{"--out - would name the identity file -", "pass --stdout instead"}},
		{"--out and --stdout", []string{"keygen", "--out", "k.txt", "--stdout"}, []string{"both given"}},
		{"an argument", []string{"keygen", "k.txt"}, []string{"keygen takes no arguments"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := refbatchIn(t, dir, nil, tc.args...)
			if r.code != exitUsage || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", r.code, r.stdout)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
		})
	}
	r := refbatchIn(t, dir, nil, "keygen", "--stdout")
	if r.code != 0 || !strings.Contains(r.stdout, "\nAGE-SECRET-KEY-1") || !strings.HasPrefix(r.stderr, "refbatch: recipient: age1") {
		t.Errorf("keygen --stdout: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("keygen wrote %v", ents)
	}
}

// TestDefaultOut runs a batch without --out from a folder other than the
// manifest's: it lands in refbatch-out there, where the reading commands
// look; without it they name where they looked. Its sizes take units.
func TestDefaultOut(t *testing.T) {
	t.Parallel()
	cwd, mdir := t.TempDir(), t.TempDir()
	here := filepath.Join(cwd, "refbatch-out")
	for _, args := range [][]string{{"status"}, {"report"}, {"review"}, {"review", "accept", "R-1"}, {"verify"}, {"show", "R-1"}, {"export", "--to", "dest"}} {
		r := refbatchIn(t, cwd, nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "refbatch: error: no output folder at "+here+"\n") ||
			!strings.Contains(r.stderr, "refbatch: hint: without --out, refbatch looks for refbatch-out in the current folder") {
			t.Errorf("%s without a batch: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	r := refbatchIn(t, cwd, nil, "status", "--out", "elsewhere")
	if r.code != exitUsage || !strings.Contains(r.stderr, "no output folder at "+filepath.Join(cwd, "elsewhere")) || strings.Contains(r.stderr, "without --out") {
		t.Errorf("status --out elsewhere: exit %d\n%s", r.code, r.stderr)
	}

	manifest := writeRows(t, mdir, copyGood(t, mdir, 1))
	for _, tc := range []struct{ flag, value, want string }{
		{"--max-bytes", "64XB", "want bytes, or a size with a unit such as 64MiB or 2GB"},
		{"--worker-memory", "lots", `invalid value "lots" for flag -worker-memory`},
		{"--max-bytes", "0", "--max-bytes 0 is not a value it takes"},
	} {
		r := refbatchIn(t, cwd, nil, "run", "--plaintext", tc.flag, tc.value, manifest)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("run %s %s: exit %d, want 2 and %q\n%s", tc.flag, tc.value, r.code, tc.want, r.stderr)
		}
	}
	args := append([]string{"run", "--plaintext", "--workers", "1"}, tinyFlags...)
	args = append(args, "--max-bytes", "64MiB", "--admit-memory", "384 MiB", "--max-inflight-bytes", "1GB", manifest)
	if r := refbatchIn(t, cwd, nil, args...); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(mdir, "refbatch-out")); err == nil {
		t.Error("run wrote refbatch-out beside the manifest")
	}
	settings := readReport(t, here).Run.Settings
	for k, want := range map[string]int64{"max_bytes": 64 << 20, "admit_memory": 384 << 20, "max_inflight": 1e9} {
		if got := settings[k]; got != fmt.Sprint(want) {
			t.Errorf("setting %s = %s, want %d", k, got, want)
		}
	}
	for _, args := range [][]string{{"status"}, {"verify"}, {"review"}} {
		if r := refbatchIn(t, cwd, nil, args...); r.code != 0 {
			t.Errorf("%s in the run's folder: exit %d\n%s", args[0], r.code, r.stderr)
		}
	}

	// A batch beside the manifest, where earlier versions put it, is
	// resumed with --out, never started again here by accident.
	other := t.TempDir()
	old := filepath.Join(mdir, "refbatch-out")
	os.Mkdir(old, 0o700)
	os.WriteFile(filepath.Join(old, "journal.db"), nil, 0o600)
	r = refbatchIn(t, other, nil, "run", "--plaintext", manifest)
	if r.code != exitUsage || !strings.Contains(r.stderr, "refbatch: hint: pass --out "+old+" to resume that batch") {
		t.Errorf("run beside an earlier default batch: exit %d\n%s", r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Errorf("the refused run wrote %v", ents)
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	r := refbatch(t, nil, "completion", "bash")
	script := filepath.Join(dir, "refbatch.bash")
	if r.code != 0 || os.WriteFile(script, []byte(r.stdout), 0o600) != nil {
		t.Fatalf("completion bash: exit %d\n%s", r.code, r.stderr)
	}
	// complete is what bash offers after words, the last one the word
	// being completed, as a shell with the script sourced would.
	complete := func(t *testing.T, words ...string) []string {
		t.Helper()
		sh := `source "$1" && shift && COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && { _refbatch; printf '%s\n' "${COMPREPLY[@]}"; }`
		cmd := exec.Command(bash, append([]string{"-c", sh, "bash", script}, words...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("completing %q: %v", words, err)
		}
		return strings.Fields(string(out))
	}
	tests := []struct {
		name      string
		words     []string
		want, not []string
	}{
		{"commands", []string{"refbatch", ""}, []string{"run", "status", "verify", "export", "keygen", "completion", "help"}, []string{"__worker", "__man"}},
		{"a command's start", []string{"refbatch", "st"}, []string{"status"}, []string{"run", "show"}},
		{"flags", []string{"refbatch", "run", "--max-"}, []string{"--max-bytes", "--max-pages", "--max-inflight-bytes", "--max-page-pixels"}, []string{"--out"}},
		{"subcommands", []string{"refbatch", "review", ""}, []string{"accept", "reject", "retry"}, nil},
		{"a subcommand's flags", []string{"refbatch", "review", "retry", "--d"}, []string{"--dpi"}, nil},
		// Nothing offered: the shell completes file names.
		{"a manifest", []string{"refbatch", "run", "--plaintext", ""}, nil, []string{"help", "run"}},
		{"a flag's value", []string{"refbatch", "run", "--out", ""}, nil, []string{"help", "--out"}},
		{"after --", []string{"refbatch", "run", "--", "--"}, nil, []string{"--out"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := complete(t, tc.words...)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("%q offers %q, lacking %q", tc.words, got, w)
				}
			}
			for _, w := range tc.not {
				if slices.Contains(got, w) {
					t.Errorf("%q offers %q", tc.words, w)
				}
			}
			if tc.want == nil && len(got) > 0 {
				t.Errorf("%q offers %q, want nothing (file names)", tc.words, got)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("completing wrote into the folder: %v", ents)
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		// zsh's completion system, down to what the script calls: it
		// must offer run's flags through _describe.
		r := refbatch(t, nil, "completion", "zsh")
		sh := `compdef() { }; _describe() { print -l -- "${(@P)2}" }; _files() { print FILES }
eval "$1"; words=(refbatch run --max-); CURRENT=3; _refbatch`
		cmd := exec.Command(zsh, "-f", "-c", sh, "zsh", r.stdout)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil || !slices.Contains(strings.Fields(string(out)), "--max-bytes") {
			t.Errorf("zsh completion of run --max-: %v\n%s", err, out)
		}
	}
}

// TestManPages renders every generated page with man -l, and with groff's
// warnings on when groff is there: a page per command in the first folder,
// a page per topic in the second.
func TestManPages(t *testing.T) {
	t.Parallel()
	dir, topicDir := t.TempDir(), t.TempDir()
	if r := refbatch(t, nil, manCommandName, dir, topicDir); r.code != 0 {
		t.Fatalf("__man: exit %d\n%s", r.code, r.stderr)
	}
	want := map[string]string{"refbatch.1": "refbatch-run(1)"}
	for _, c := range manCommands(newApp(io.Discard, io.Discard).VisibleCommands()) {
		want["refbatch-"+c.Name+".1"] = "refbatch " + c.Name
	}
	want["refbatch-run.1"] = "--max-bytes SIZE"
	want["refbatch-review.1"] = "REVIEW RETRY"
	want["refbatch-verify.1"] = "DETAILS" // its reference
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(want) {
		t.Errorf("pages %v, want %d", ents, len(want))
	}
	for name, text := range want {
		page := filepath.Join(dir, name)
		if out := manPage(t, page); !strings.Contains(out, text) {
			t.Errorf("%s lacks %q:\n%s", name, text, out)
		}
	}
	ents, _ = os.ReadDir(topicDir)
	if len(ents) != len(topics()) {
		t.Errorf("topic pages %v, want %d", ents, len(topics()))
	}
	for _, tp := range topics() {
		page := filepath.Join(topicDir, "refbatch-"+tp.name+".7")
		if out := manPage(t, page); !regexp.MustCompile(`refbatch-`+tp.name+`\s+-\s`).MatchString(out) || !strings.Contains(out, tp.title) {
			t.Errorf("%s lacks its name and title:\n%.400s", page, out)
		}
	}
}

// manPage renders a page with man -l (skipping when there is no man), and
// fails on groff's warnings about it.
func manPage(t *testing.T, page string) string {
	t.Helper()
	if groff, err := exec.LookPath("groff"); err == nil {
		if out, err := exec.Command(groff, "-man", "-ww", "-z", "-Tutf8", page).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff on %s: %v\n%s", page, err, out)
		}
	}
	man, err := exec.LookPath("man")
	if err != nil {
		t.Skip("no man (make deps installs man-db)")
	}
	cmd := exec.Command(man, "-l", page)
	cmd.Env = append(os.Environ(), "MANWIDTH=100", "MANPAGER=cat", "PAGER=cat")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "NAME") {
		t.Fatalf("man -l %s: %v\n%s", page, err, out)
	}
	return string(out)
}

// TestReviewOutBeforeDecision: `review --out DIR accept ID` decides in DIR,
// as `review accept --out DIR ID` does, not in the default folder.
func TestReviewOutBeforeDecision(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "batch-out")
	for _, args := range [][]string{
		{"review", "--out", dir, "accept", "R-1"},
		{"review", "accept", "--out", dir, "R-1"},
	} {
		r := refbatch(t, nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "no output folder at "+dir) {
			t.Errorf("%v: exit %d, want 2 naming %s:\n%s", args, r.code, dir, r.stderr)
		}
	}
}
