package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests hold refbatch to its promise that a bad file costs one row,
// never the batch: hostile sources, sources swapped after admission,
// unreadable sources, signals during a stalled admission, read-only
// commands that must not write, and a crash that must not read as a usage
// error.

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sampleGood returns n good rows of the sample with absolute paths:
// source_id, participant_id, referral_date, path.
func sampleGood(t *testing.T, n int) [][4]string {
	t.Helper()
	sample := sampleDir(t)
	done := map[string]bool{}
	for _, r := range readCSV(t, filepath.Join(sample, "expected.csv")) {
		if r["state"] == "done" {
			done[r["source_id"]] = true
		}
	}
	var out [][4]string
	for _, r := range readCSV(t, filepath.Join(sample, "manifest.csv")) {
		if done[r["source_id"]] && len(out) < n {
			out = append(out, [4]string{r["source_id"], r["participant_id"], r["referral_date"], filepath.Join(sample, r["path"])})
			done[r["source_id"]] = false
		}
	}
	if len(out) < n {
		t.Fatalf("the sample has %d good rows, want %d", len(out), n)
	}
	return out
}

// copyGood writes n good documents into dir, each a tiny one-page
// referral of its own (tinyReferral: read in a fraction of a second), and
// returns their rows. The tests that take them check what becomes of a
// good document, not its text.
func copyGood(t *testing.T, dir string, n int) [][4]string {
	t.Helper()
	var rows [][4]string
	for i := range n {
		id, date := fmt.Sprintf("P-%06d", 300000+i), "2024-03-14"
		p := writeFile(t, dir, fmt.Sprintf("good-%d.pdf", i), tinyReferral(500+i, id, date))
		rows = append(rows, [4]string{fmt.Sprintf("G-%04d", i), id, date, p})
	}
	return rows
}

// writeRows writes a manifest of rows (source_id, participant_id,
// referral_date, path) into dir.
func writeRows(t *testing.T, dir string, rows [][4]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("source_id,participant_id,referral_date,consent,path\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s,%s,%s,yes,%s\n", r[0], r[1], r[2], r[3])
	}
	p := filepath.Join(dir, "manifest.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// faultKey names the file at path in REFBATCH_TEST_FAULTS: a prefix of
// the SHA-256 of its bytes.
func faultKey(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))[:16]
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSourcesSwappedAfterAdmission swaps admitted sources, before OCR
// reads them, for a FIFO, a symlink to /dev/zero, a 20 GiB sparse file and
// another PDF: each row ends in a final state, the run exits 0 without
// blocking or filling memory, and verify --sources reports each swap
// without blocking either.
func TestSourcesSwappedAfterAdmission(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := sampleGood(t, 6)
	var rows [][4]string
	for i, g := range good[:5] {
		p := filepath.Join(dir, fmt.Sprintf("doc-%d.pdf", i))
		copyFile(t, g[3], p)
		rows = append(rows, [4]string{g[0], g[1], g[2], p})
	}
	manifest := writeRows(t, dir, rows)
	out := filepath.Join(dir, "out")
	// One engine, and the first document slow: every row is admitted
	// (the queue ahead of the engine holds them) while it is read.
	cmd := exec.Command(binary, runArgs(out, "--workers", "1", manifest)...)
	cmd.Env = append(os.Environ(), "REFBATCH_TEST_FAULTS=slow4s="+faultKey(t, rows[0][3]))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, func() bool { return strings.Count(stderr.String(), "row admitted") >= 3 })
	// Rows 2 to 5 are swapped while row 1 is read. Rows 2 and 3 are
	// admitted by then; rows 4 and 5 may not be, and then admission itself
	// meets the swap, with the same verdict.
	swap := func(path string, make func(string) error) {
		os.Remove(path)
		if err := make(path); err != nil {
			t.Fatal(err)
		}
	}
	swap(rows[1][3], func(p string) error {
		b, err := os.ReadFile(good[5][3])
		if err != nil {
			return err
		}
		return os.WriteFile(p, b, 0o644)
	})
	swap(rows[2][3], func(p string) error { return syscall.Mkfifo(p, 0o644) })
	swap(rows[3][3], func(p string) error { return os.Symlink("/dev/zero", p) })
	swap(rows[4][3], func(p string) error {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Truncate(20 << 30)
	})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if exitStatus(err) != exitNeedsPerson {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the run did not end\n%s", stderr.String())
	}
	states := rowStates(t, out)
	want := map[string]string{
		rows[0][0]: "done/",
		rows[1][0]: "rejected/conflict",
		rows[2][0]: "rejected/not_pdf",
		rows[3][0]: "rejected/path_outside_root",
		rows[4][0]: "rejected/too_large",
	}
	for id, w := range want {
		if states[id] != w {
			t.Errorf("%s: %s, want %s", id, states[id], w)
		}
	}

	// verify --sources meets the same files: findings, at once.
	r := refbatch(t, nil, "verify", "--out", out, "--sources", "--json")
	if r.code != exitFailure || r.elapsed > 30*time.Second {
		t.Fatalf("verify --sources: exit %d in %v\n%s\n%s", r.code, r.elapsed, r.stdout, r.stderr)
	}
	for _, kind := range []string{"source_changed"} {
		if !strings.Contains(r.stdout, kind) {
			t.Errorf("verify --sources lacks %s:\n%s", kind, r.stdout)
		}
	}
}

// TestVerifySourcesFIFO: a source swapped for a FIFO after a finished run
// is a finding, not a verify that blocks forever.
func TestVerifySourcesFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := copyGood(t, dir, 1)[0]
	p := g[3]
	out := filepath.Join(dir, "out")
	if r := refbatch(t, nil, runArgs(out, writeRows(t, dir, [][4]string{{g[0], g[1], g[2], p}}))...); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	r := refbatch(t, nil, "verify", "--out", out, "--sources")
	if r.code != exitFailure || !strings.Contains(r.stdout, "source_changed") || r.elapsed > 30*time.Second {
		t.Fatalf("verify --sources on a FIFO: exit %d in %v\n%s%s", r.code, r.elapsed, r.stdout, r.stderr)
	}
}

// TestUnreadableSource: a file refbatch may not read is that row's
// problem: rejected unreadable, the rest of the batch done, exit 0, and
// no file name in the journal, the logs or the reports. As root, the run
// is made as another user, since root reads anything.
func TestUnreadableSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := copyGood(t, dir, 2)
	secret := filepath.Join(dir, "Smith-John-P-424242.pdf") // a file name that gives a person away
	copyFile(t, good[0][3], secret)
	if err := os.Chmod(secret, 0o000); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok.pdf")
	copyFile(t, good[1][3], ok)
	manifest := writeRows(t, dir, [][4]string{{good[0][0], good[0][1], good[0][2], secret}, {good[1][0], good[1][1], good[1][2], ok}})
	out := filepath.Join(dir, "out")
	cmd := exec.Command(binary, runArgs(out, manifest)...)
	if os.Geteuid() == 0 {
		// The binary, the sample and the folders must be readable by the
		// other user; the unreadable file stays root's, mode 0.
		for _, d := range []string{dir, filepath.Dir(binary), filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Env = append(os.Environ(), "HOME="+dir)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); exitStatus(err) != exitNeedsPerson {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	states := rowStates(t, out)
	if states[good[0][0]] != "rejected/unreadable" || states[good[1][0]] != "done/" {
		t.Errorf("states %v; want %s rejected/unreadable and %s done", states, good[0][0], good[1][0])
	}
	blobs := map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()}
	for _, name := range []string{"journal.db", "journal.db-wal", "report.json", "report.csv", "report.html"} {
		b, _ := os.ReadFile(filepath.Join(out, name))
		blobs[name] = b
	}
	for name, b := range blobs {
		if bytes.Contains(b, []byte("Smith")) || bytes.Contains(b, []byte("424242")) {
			t.Errorf("%s names the unreadable file", name)
		}
	}
}

// TestInterruptDuringStalledAdmission: SIGINT while admission's child is
// stuck in a file that takes pdfcpu exponential time stops the run within
// 3 seconds with exit 3, and the rerun completes, refusing the file.
func TestInterruptDuringStalledAdmission(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := copyGood(t, dir, 1)[0]
	stall := filepath.Join(dir, "stall.pdf")
	if err := os.WriteFile(stall, nestedDicts(40), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := writeRows(t, dir, [][4]string{{g[0], g[1], g[2], g[3]}, {"H-1", "P-000001", "2024-01-01", stall}})
	out := filepath.Join(dir, "out")
	cmd := exec.Command(binary, runArgs(out, "--admit-timeout", "10m", manifest)...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, func() bool { return strings.Contains(stderr.String(), "row admitted") })
	time.Sleep(time.Second) // the second row's admission is under way
	cmd.Process.Signal(os.Interrupt)
	sent := time.Now()
	err := cmd.Wait()
	elapsed := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitIncomplete {
		t.Fatalf("interrupted run: %v, want exit 3\n%s", err, stderr.String())
	}
	if elapsed > 3*time.Second {
		t.Errorf("the run took %v to stop after SIGINT", elapsed)
	}
	t.Logf("stopped %v after SIGINT", elapsed.Round(time.Millisecond))
	// 200ms: the CPU time it burns before it is refused is all it costs.
	r := refbatch(t, nil, runArgs(out, "--admit-timeout", "200ms", manifest)...)
	if r.code != exitNeedsPerson {
		t.Fatalf("rerun: exit %d\n%s", r.code, r.stderr)
	}
	if st := rowStates(t, out)["H-1"]; st != "rejected/unparseable_pdf" {
		t.Errorf("the stalling file is %s, want rejected/unparseable_pdf", st)
	}
}

// nestedDicts is a PDF whose catalog holds levels of dictionaries nested
// without white space, which pdfcpu parses in time that doubles per level.
func nestedDicts(levels int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	off := b.Len()
	fmt.Fprintf(&b, "1 0 obj\n<< /Type /Catalog /A %s%s >>\nendobj\n", strings.Repeat("<</A", levels), strings.Repeat(">>", levels))
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 2\n0000000000 65535 f \n%010d 00000 n \ntrailer\n<< /Size 2 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", off, xref)
	return b.Bytes()
}

// TestReadOnlyCommands: verify, show and eval --from-out create nothing and
// change nothing; verify passes on a read-only copy of a finished folder;
// run refuses a journal.db that is not refbatch's and leaves the mode of
// a folder it did not create.
func TestReadOnlyCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := copyGood(t, dir, 2)
	manifest := writeRows(t, dir, [][4]string{{good[0][0], good[0][1], good[0][2], good[0][3]}, {good[1][0], good[1][1], good[1][2], good[1][3]}})
	out := filepath.Join(dir, "out")
	if r := refbatch(t, nil, runArgs(out, manifest)...); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	// A copy as one would archive it: no -wal or -shm files.
	cp := filepath.Join(dir, "copy")
	if err := os.CopyFS(cp, os.DirFS(out)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(cp, "journal.db-wal"))
	os.Remove(filepath.Join(cp, "journal.db-shm"))
	expect := filepath.Join(dir, "expected.csv")
	os.WriteFile(expect, []byte("source_id,state,reason\n"+good[0][0]+",done,\n"+good[1][0]+",done,\n"), 0o644)

	before := snapshot(t, cp)
	for _, args := range [][]string{
		{"verify", "--out", cp, "--sources"},
		{"show", "--out", cp, good[0][0]},
		{"eval", "--expect", expect, "--from-out", cp},
		{"status", "--out", cp},
	} {
		if r := refbatch(t, nil, args...); r.code != 0 {
			t.Errorf("%s: exit %d\n%s%s", args[0], r.code, r.stdout, r.stderr)
		}
	}
	if after := snapshot(t, cp); !slices.Equal(before, after) {
		t.Errorf("read-only commands changed the folder:\nbefore %v\nafter  %v", before, after)
	}

	// show on a folder with no journal creates nothing.
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if r := refbatch(t, nil, "show", "--out", empty, good[0][0]); r.code == 0 {
		t.Errorf("show on a folder without a journal: exit 0")
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("show created %v", ents)
	}

	// verify on a read-only mount of the copy (root only: it needs a mount
	// namespace).
	if os.Geteuid() == 0 {
		sh := fmt.Sprintf("mount --bind %[1]s %[1]s && mount -o remount,bind,ro %[1]s && exec %[2]s verify --out %[1]s --sources", cp, binary)
		c := exec.Command("unshare", "-m", "sh", "-c", sh)
		b, err := c.CombinedOutput()
		switch {
		case err != nil && strings.Contains(string(b), "mount"):
			t.Logf("no read-only mount here: %s", b)
		case err != nil || !strings.Contains(string(b), "verified, no findings"):
			t.Errorf("verify on a read-only copy: %v\n%s", err, b)
		}
	}

	// run refuses a journal.db of another program and leaves it as it was.
	foreign := filepath.Join(dir, "foreign")
	os.Mkdir(foreign, 0o755)
	notes := []byte("SQLite format 3\x00 but these are someone's notes")
	os.WriteFile(filepath.Join(foreign, "journal.db"), notes, 0o644)
	r := refbatch(t, nil, runArgs(foreign, manifest)...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "not a refbatch journal") {
		t.Errorf("run into a foreign journal.db: exit %d\n%s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "journal.db")); !bytes.Equal(b, notes) {
		t.Errorf("run changed a foreign journal.db")
	}
	if fi, _ := os.Stat(foreign); fi.Mode().Perm() != 0o755 {
		t.Errorf("run changed the mode of a folder it did not create to %v", fi.Mode().Perm())
	}
	// The read-only commands say the same, as a usage error.
	for _, args := range [][]string{{"status", "--out", foreign}, {"report", "--out", foreign}, {"show", "--out", foreign, "R-1"}} {
		r := refbatch(t, nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "not a refbatch journal") {
			t.Errorf("%s on a foreign journal.db: exit %d\n%s", args[0], r.code, r.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "journal.db")); !bytes.Equal(b, notes) {
		t.Errorf("a read-only command changed a foreign journal.db")
	}
}

// snapshot lists a folder's files with their sizes, modes and contents'
// hashes, to compare before and after.
func snapshot(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		var sum [32]byte
		if !fi.IsDir() {
			b, _ := os.ReadFile(path)
			sum = sha256.Sum256(b)
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, fmt.Sprintf("%s %v %d %x", rel, fi.Mode(), fi.Size(), sum[:8]))
		return nil
	})
	return out
}

// TestCrashIsNotAUsageError: a crash of refbatch itself (here a panic
// while printing) ends the process with SIGABRT, not with exit 2 (which
// means a usage error), and leaves no core file.
func TestCrashIsNotAUsageError(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REFBATCH_CLI_CRASH="+filepath.Join(dir, "key.txt"))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the crashing process: %v", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGABRT {
		t.Errorf("a crash ended with %v (exit %d); want SIGABRT", ws, ee.ExitCode())
	}
	if !strings.Contains(stderr.String(), "panic:") {
		t.Errorf("no panic report on stderr:\n%s", lastLines(stderr.String(), 5))
	}
	if ents, _ := os.ReadDir(dir); slices.ContainsFunc(ents, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), "core") }) {
		t.Errorf("a core file was written: %v", ents)
	}
}

// crashWriter panics on its first write, as a bug while printing would.
type crashWriter struct{}

func (crashWriter) Write([]byte) (int, error) { panic("a bug while printing") }

var _ io.Writer = crashWriter{}

// crashMain is what the test binary runs for TestCrashIsNotAUsageError:
// refbatch's own run, with a stdout that panics.
func crashMain(keyPath string) {
	run([]string{"refbatch", "keygen", "--out", keyPath}, crashWriter{}, os.Stderr)
}

// TestHostileFixtures runs every committed hostile PDF through the real
// binary, all in one manifest between two good documents: each hostile
// row ends rejected or in review (as hostileWant says, for those it
// names), the good ones done, and the run exits 0.
// The deadlines are short to keep the test quick; `make bench-hostile`
// runs each file on its own with the defaults and measures time and
// memory.
func TestHostileFixtures(t *testing.T) {
	reads(t)
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "admit", "hostile", "*.pdf"))
	if len(files) == 0 {
		t.Skip("no hostile fixtures")
	}
	dir := t.TempDir()
	good := copyGood(t, dir, 2)
	rows := [][4]string{good[0]}
	for i, f := range files {
		p := filepath.Join(dir, filepath.Base(f))
		copyFile(t, f, p)
		rows = append(rows, [4]string{fmt.Sprintf("H-%02d", i), "P-000000", "2024-01-01", p})
	}
	rows = append(rows, good[1])
	out := filepath.Join(dir, "out")
	r := refbatch(t, nil, runArgs(out, "--admit-timeout", "200ms", writeRows(t, dir, rows))...)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	states := rowStates(t, out)
	for i, f := range files {
		st := states[fmt.Sprintf("H-%02d", i)]
		if !strings.HasPrefix(st, "rejected/") && !strings.HasPrefix(st, "review/") {
			t.Errorf("%s: %s, want rejected or review", filepath.Base(f), st)
		}
		if want := hostileWant[filepath.Base(f)]; want != "" && st != want {
			t.Errorf("%s: %s, want %s", filepath.Base(f), st, want)
		}
		t.Logf("%-28s %s", filepath.Base(f), st)
	}
	for _, g := range good {
		if states[g[0]] != "done/" {
			t.Errorf("good document %s: %s", g[0], states[g[0]])
		}
	}
	t.Logf("%d hostile files and 2 good documents in %v", len(files), r.elapsed.Round(time.Millisecond))
}
