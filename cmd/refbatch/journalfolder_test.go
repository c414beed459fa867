package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killedBatch runs a batch of two good rows and kills its whole process
// group once the first document is done, as a power cut would: the
// journal's write-ahead log still holds the run's transactions, and its
// -shm file is stale. It returns the output folder and the first row's
// source_id.
func killedBatch(t *testing.T, dir string) (out, done string) {
	t.Helper()
	good := copyGood(t, dir, 2)
	manifest := writeRows(t, dir, [][4]string{{good[0][0], good[0][1], good[0][2], good[0][3]}, {good[1][0], good[1][1], good[1][2], good[1][3]}})
	out = filepath.Join(dir, "out")
	cmd := exec.Command(binary, runArgs(out, "--workers", "1", manifest)...)
	cmd.Env = append(os.Environ(), "REFBATCH_TEST_FAULTS=slow30s="+faultKey(t, good[1][3]))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 90*time.Second, func() bool { return strings.Contains(stderr.String(), "document finished") })
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if fi, err := os.Stat(filepath.Join(out, "journal.db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("the killed run left no write-ahead log with content: %v", err)
	}
	return out, good[0][0]
}

// TestReadOnlyAfterKill: after a killed run, status, verify, review, show
// and export read the journal, write-ahead log included, and leave the
// folder byte for byte as it was (no -shm file created or rebuilt); on a
// read-only copy they work the same, and verify finds no corrupt journal.
func TestReadOnlyAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, done := killedBatch(t, dir)
	readers := func(out string) [][]string {
		return [][]string{
			{"status", "--out", out},
			{"verify", "--out", out},
			{"review", "--out", out},
			{"show", "--out", out, done},
		}
	}
	// Copies without the -shm file, as one would take them, and one with
	// it.
	noShm := filepath.Join(dir, "copy-no-shm")
	roNoShm := filepath.Join(dir, "ro-copy-no-shm")
	roWithShm := filepath.Join(dir, "ro-copy-with-shm")
	for _, cp := range []string{noShm, roNoShm, roWithShm} {
		if err := os.CopyFS(cp, os.DirFS(out)); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(noShm, "journal.db-shm"))
	os.Remove(filepath.Join(roNoShm, "journal.db-shm"))

	codes := map[string]int{}
	for _, folder := range []string{out, noShm} {
		before := snapshot(t, folder)
		for _, args := range readers(folder) {
			r := refbatch(t, nil, args...)
			if r.code != 0 && r.code != exitNeedsPerson && !(args[0] == "verify" && r.code == 1 && !strings.Contains(r.stdout+r.stderr, "journal_corrupt")) {
				t.Errorf("%s: exit %d\n%s%s", args[0], r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, "journal_corrupt") {
				t.Errorf("%s on a killed run's journal: journal_corrupt\n%s%s", args[0], r.stdout, r.stderr)
			}
			codes[args[0]] = r.code
		}
		export := filepath.Join(t.TempDir(), "export")
		if r := refbatch(t, nil, "export", "--out", folder, "--to", export, "--format", "txt"); r.code != 0 {
			t.Errorf("export: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if after := snapshot(t, folder); !slices.Equal(before, after) {
			t.Errorf("read-only commands changed %s:\nbefore %v\nafter  %v", filepath.Base(folder), before, after)
		}
	}
	t.Logf("exit codes after the kill: %v", codes)

	// Read-only copies: a read-only bind mount (root ignores file modes),
	// or the files' modes for anyone else.
	for _, cp := range []string{roNoShm, roWithShm} {
		before := snapshot(t, cp)
		for _, args := range readers(cp) {
			var r result
			if os.Geteuid() == 0 {
				r = readOnlyMount(t, cp, args)
			} else {
				chmodTree(cp, 0o222, false)
				t.Cleanup(func() { chmodTree(cp, 0o200, true) })
				r = refbatch(t, nil, args...)
			}
			if r.code != codes[args[0]] || strings.Contains(r.stdout+r.stderr, "journal_corrupt") {
				t.Errorf("%s on a read-only copy (%s): exit %d, want %d\n%s%s", args[0], filepath.Base(cp), r.code, codes[args[0]], r.stdout, r.stderr)
			}
		}
		if after := snapshot(t, cp); !slices.Equal(before, after) {
			t.Errorf("read-only commands changed %s:\nbefore %v\nafter  %v", filepath.Base(cp), before, after)
		}
	}
}

// readOnlyMount runs refbatch with args in a mount namespace where dir is
// a read-only bind mount of itself. It skips the test where no such mount
// can be made.
func readOnlyMount(t *testing.T, dir string, args []string) result {
	t.Helper()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	sh := fmt.Sprintf("mount --bind '%[1]s' '%[1]s' && mount -o remount,bind,ro '%[1]s' && touch '%[1]s/probe' 2>/dev/null && exit 97; exec %[2]s %[3]s", dir, binary, strings.Join(quoted, " "))
	c := exec.Command("unshare", "-m", "sh", "-c", sh)
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case !errors.As(err, &ee):
		t.Fatalf("unshare: %v", err)
	case ee.ExitCode() == 97 || strings.Contains(r.stderr, "mount:") || strings.Contains(r.stderr, "unshare:"):
		t.Skipf("no read-only mount here: %s", r.stderr)
	default:
		r.code = ee.ExitCode()
	}
	return r
}

// TestJournalBelongsToFolder: a run refuses, with exit 2 and what it
// found, a journal.db that is not the folder's own (emptied, deleted, a
// symbolic link to another batch's journal or to nowhere, another batch's
// file), and changes no artifact nor the other batch's journal; verify
// reports another batch's journal as a finding.
func TestJournalBelongsToFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := copyGood(t, dir, 1)
	manifest := writeRows(t, dir, [][4]string{{good[0][0], good[0][1], good[0][2], good[0][3]}})
	out := filepath.Join(dir, "out")
	first := refbatch(t, nil, runArgs(out, manifest)...)
	if first.code != 0 && first.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", first.code, first.stderr)
	}
	if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Another batch, of one row refused without OCR.
	otherDir := filepath.Join(dir, "other")
	os.Mkdir(otherDir, 0o700)
	otherManifest := filepath.Join(otherDir, "manifest.csv")
	os.WriteFile(otherManifest, []byte("source_id,participant_id,referral_date,consent,path\nX-1,P-1,2024-01-02,no,x.pdf\n"), 0o600)
	otherOut := filepath.Join(otherDir, "out")
	refbatch(t, nil, runArgs(otherOut, otherManifest)...)
	otherJournal := filepath.Join(otherOut, "journal.db")
	otherBefore := snapshot(t, otherOut)

	for _, tc := range []struct {
		name  string
		make  func(folder string)
		found string
	}{
		{"emptied", func(f string) { os.Truncate(filepath.Join(f, "journal.db"), 0) }, "journal.db is empty"},
		{"deleted", func(f string) { os.Remove(filepath.Join(f, "journal.db")) }, "journal.db is missing"},
		{"deleted with the marker", func(f string) {
			os.Remove(filepath.Join(f, "journal.db"))
			os.Remove(filepath.Join(f, "refbatch-batch"))
		}, "journal.db is missing, but"},
		{"symlink to another batch's journal", func(f string) {
			os.Remove(filepath.Join(f, "journal.db"))
			os.Symlink(otherJournal, filepath.Join(f, "journal.db"))
		}, "is a symbolic link"},
		{"dangling symlink", func(f string) {
			os.Remove(filepath.Join(f, "journal.db"))
			os.Symlink(filepath.Join(dir, "nowhere.db"), filepath.Join(f, "journal.db"))
		}, "is a symbolic link"},
		{"another batch's journal", func(f string) {
			b, _ := os.ReadFile(otherJournal)
			os.WriteFile(filepath.Join(f, "journal.db"), b, 0o600)
		}, "the folder of batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			folder := filepath.Join(t.TempDir(), "out")
			if err := os.CopyFS(folder, os.DirFS(out)); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(folder, "journal.db-wal"))
			os.Remove(filepath.Join(folder, "journal.db-shm"))
			tc.make(folder)
			artifacts := snapshot(t, filepath.Join(folder, "artifacts"))
			r := refbatch(t, nil, runArgs(folder, manifest)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.found) {
				t.Errorf("run: exit %d, want 2 saying %q\n%s", r.code, tc.found, r.stderr)
			}
			if after := snapshot(t, filepath.Join(folder, "artifacts")); !slices.Equal(artifacts, after) {
				t.Errorf("the artifacts changed:\nbefore %v\nafter  %v", artifacts, after)
			}
			if _, err := os.Lstat(filepath.Join(dir, "nowhere.db")); err == nil {
				t.Errorf("the run created the dangling symlink's target, outside --out")
			}
			if tc.name == "another batch's journal" {
				v := refbatch(t, nil, "verify", "--out", folder)
				if v.code != 1 || !strings.Contains(v.stdout, "batch_mismatch") {
					t.Errorf("verify on another batch's journal: exit %d, want 1 with batch_mismatch\n%s%s", v.code, v.stdout, v.stderr)
				}
			}
		})
	}
	if after := snapshot(t, otherOut); !slices.Equal(otherBefore, after) {
		t.Errorf("another batch's journal changed:\nbefore %v\nafter  %v", otherBefore, after)
	}
	// The folder's own journal still runs: nothing to do again.
	if r := refbatch(t, nil, runArgs(out, manifest)...); r.code != first.code {
		t.Errorf("rerun: exit %d, want %d\n%s", r.code, first.code, r.stderr)
	}
}

// chmodTree takes the bits away from (or, with add, gives them to) the
// mode of every file and folder under dir.
func chmodTree(dir string, bits os.FileMode, add bool) {
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		mode := fi.Mode().Perm() &^ bits
		if add {
			mode = fi.Mode().Perm() | bits
		}
		os.Chmod(p, mode)
		return nil
	})
}
