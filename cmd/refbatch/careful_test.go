package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/batchtest/finished"
)

// TestReadSideRefusesPlantedArtifacts: a FIFO, a symbolic link to an
// identical copy, and a 10 GB sparse file in an artifact's place are each
// refused by the read side before it reads a byte: verify reports
// artifact_not_regular or artifact_oversized, export reports the same
// finding and exports the rest, show fails naming the file; each answers
// within 2 s (a plain open of the FIFO hung them all, the link passed, the
// sparse file held verify for most of a minute). No OCR: a finished batch.
func TestReadSideRefusesPlantedArtifacts(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	src := filepath.Join(base, "out")
	finishedBatch(t, base, src, []finished.Row{finished.Good("R-1", "P-000101", "2024-01-02"), finished.Good("R-2", "P-000102", "2024-01-02")})
	for _, tc := range []struct {
		name, kind, says string
		plant            func(t *testing.T, art, dir string)
	}{
		{"fifo", "artifact_not_regular", "a FIFO", func(t *testing.T, art, dir string) {
			if err := os.Remove(art); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(art, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"link to an identical copy", "artifact_not_regular", "symbolic link", func(t *testing.T, art, dir string) {
			cp := filepath.Join(dir, "copy.json")
			copyFile(t, art, cp)
			if err := os.Remove(art); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(cp, art); err != nil {
				t.Fatal(err)
			}
		}},
		{"10 GB sparse file", "artifact_oversized", "10737418240 bytes", func(t *testing.T, art, dir string) {
			if err := os.Truncate(art, 10<<30); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			copyOut(t, src, out)
			art := artifactOf(t, out, "R-1")
			tc.plant(t, art, dir)
			limit := answerLimit(t, src)
			timed := func(args ...string) result {
				start := time.Now()
				r := refbatch(t, nil, args...)
				if d := time.Since(start); d > limit {
					t.Errorf("%s took %v, want under %v", args[0], d, limit)
				}
				return r
			}
			r := timed("verify", "--out", out)
			if r.code != exitFailure || !strings.Contains(r.stdout, tc.kind) || !strings.Contains(r.stdout, tc.says) || !strings.Contains(r.stdout, filepath.Base(art)) {
				t.Errorf("verify: exit %d, want 1 with %s (%s) naming %s\n%s%s", r.code, tc.kind, tc.says, filepath.Base(art), r.stdout, r.stderr)
			}
			r = timed("show", "--out", out, "R-1")
			if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, filepath.Base(art)) {
				t.Errorf("show: exit %d, want a failure naming %s and no text\n%s%s", r.code, filepath.Base(art), r.stdout, r.stderr)
			}
			r = timed("export", "--out", out, "--to", filepath.Join(dir, "exp"), "--format", "txt")
			if r.code != exitFailure || !strings.Contains(r.stdout+r.stderr, tc.kind) {
				t.Errorf("export: exit %d, want 1 with %s\n%s%s", r.code, tc.kind, r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "exp", "R-2.txt")); err != nil {
				t.Errorf("export did not export the other document: %v", err)
			}
		})
	}
}

// artifactOf is the path of the artifact the journal of out names for
// sourceID: the only one of that source_id in a batch read once.
func artifactOf(t *testing.T, out, sourceID string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(out, "artifacts", sourceID+"_*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("artifacts of %s: %v %v, want one", sourceID, m, err)
	}
	return m[0]
}

// TestStdinTooLargeHint: a manifest over 64 MiB on the standard input is
// a usage error whose hint says to write it to a file, not to pipe it to
// the standard input (which is what was done).
func TestStdinTooLargeHint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := hdr5 + strings.Repeat("R-1,P-1,2024-01-02,yes,a.pdf\n", (64<<20)/28+1000)
	r := refbatchStdin(t, dir, big, append(runArgs(filepath.Join(dir, "out")), "-")...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "hint: write the manifest to a file") || strings.Contains(r.stderr, "hint: pipe") {
		t.Errorf("exit %d, want %d with the hint to write it to a file\n%s", r.code, exitUsage, r.stderr)
	}
}

// TestBagSourceIDReportJSON: a document whose source_id is report.json
// (or REPORT.JSON) is exported into a bag folder of its own beside
// data/report.json, and the bag is sealed on the first export and on a
// rerun (both failed with "rename … data/report.json: is a directory").
func TestBagSourceIDReportJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	finishedBatch(t, dir, out, []finished.Row{finished.Good("report.json", "P-000101", "2024-01-02"), finished.Good("REPORT.JSON", "P-000102", "2024-01-02")})
	bag := filepath.Join(dir, "bag")
	for _, run := range []string{"first", "rerun"} {
		r := refbatch(t, nil, "export", "--out", out, "--to", bag, "--bag", "--format", "txt")
		if r.code != 0 {
			t.Fatalf("%s export --bag: exit %d\n%s%s", run, r.code, r.stdout, r.stderr)
		}
		if fi, err := os.Stat(filepath.Join(bag, "data", "report.json")); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: data/report.json is not the batch's report: %v", run, err)
		}
		if _, err := os.Stat(filepath.Join(bag, "tagmanifest-sha256.txt")); err != nil {
			t.Fatalf("%s: the bag is not sealed: %v", run, err)
		}
	}
	for _, id := range []string{"report.json", "REPORT.JSON"} {
		m, _ := filepath.Glob(filepath.Join(bag, "data", id+"~*", id+".txt"))
		if len(m) != 1 {
			t.Errorf("%s's text in the bag: %v, want one in a folder of its own", id, m)
		}
	}
}

// TestFIFOJournal: a FIFO in the journal's place is refused at once by
// show, export, verify and the desk (SQLite's open(2) of it hung them all
// past SIGTERM), and so is a FIFO given as verify's --root-log.
func TestFIFOJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	finishedBatch(t, dir, out, []finished.Row{finished.Good("R-1", "P-000101", "2024-01-02")})
	fifo := filepath.Join(dir, "rootlog")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if r := refbatch(t, nil, "verify", "--out", out, "--root-log", fifo); r.code == 0 || !strings.Contains(r.stderr, "not a regular file") {
		t.Errorf("verify --root-log FIFO: exit %d, want it refused\n%s%s", r.code, r.stdout, r.stderr)
	}
	db := filepath.Join(out, "journal.db")
	os.Remove(db)
	if err := syscall.Mkfifo(db, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", "--out", out, "R-1"}, {"export", "--out", out, "--to", filepath.Join(dir, "exp")},
		{"verify", "--out", out}, {"desk", "--out", out}} {
		if r := refbatch(t, nil, args...); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "journal") {
			t.Errorf("%s with a FIFO journal: exit %d, want a refusal naming the journal\n%s%s", args[0], r.code, r.stdout, r.stderr)
		}
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("five commands took %v, want each at once", took)
	}
}

// answerLimit is how long verify or show may take over a planted
// artifact: under 2 s, or, on a machine the rest of the suite keeps busy,
// under a second more than verify of the intact batch src takes there and
// then (alone, each answers in a few tenths).
func answerLimit(t *testing.T, src string) time.Duration {
	t.Helper()
	return max(2*time.Second, refbatch(t, nil, "verify", "--out", src).elapsed+time.Second)
}
