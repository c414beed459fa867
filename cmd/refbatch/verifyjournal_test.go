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

// TestVerifyUnreadableJournal: verify of a folder whose journal is a
// FIFO, not a SQLite database, or a SQLite database damaged past its
// header reports what is true (a journal_corrupt finding naming the
// journal and why, and a note that its custody log was not checked),
// exits 1, answers at once (the FIFO does not block it) and writes
// nothing. It said "this journal has no custody log (an earlier refbatch
// wrote it); the next run adds one" and "artifacts in plaintext" for
// each.
func TestVerifyUnreadableJournal(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	src := filepath.Join(base, "out")
	finishedBatch(t, base, src, []finished.Row{finished.Good("R-1", "P-000101", "2024-01-02")})
	for _, tc := range []struct {
		name, says string
		plant      func(t *testing.T, db string)
	}{
		{"fifo", "a FIFO", func(t *testing.T, db string) {
			if err := os.Remove(db); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(db, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"not sqlite", "not a SQLite database", func(t *testing.T, db string) {
			if err := os.WriteFile(db, []byte(strings.Repeat("not a journal\n", 500)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"damaged past its header", "journal", func(t *testing.T, db string) {
			b, err := os.ReadFile(db)
			if err != nil {
				t.Fatal(err)
			}
			for i := 100; i < len(b); i++ {
				b[i] = byte(i*7 + 3)
			}
			if err := os.WriteFile(db, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			copyOut(t, src, out)
			db := filepath.Join(out, "journal.db")
			tc.plant(t, db)
			before := folderState(t, out)
			start := time.Now()
			r := refbatch(t, nil, "verify", "--out", out)
			took := time.Since(start)
			if took > 10*time.Second {
				t.Errorf("verify took %v, want it at once", took)
			}
			if r.code != exitFailure {
				t.Errorf("exit %d, want %d\n%s%s", r.code, exitFailure, r.stdout, r.stderr)
			}
			for _, want := range []string{"journal_corrupt", db, tc.says, "note: the journal " + db + " could not be read", "custody log was not checked"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout lacks %q\n%s%s", want, r.stdout, r.stderr)
				}
			}
			for _, wrong := range []string{"no custody log (an earlier refbatch", "the next run adds one", "artifacts in plaintext"} {
				if strings.Contains(r.stdout, wrong) {
					t.Errorf("stdout says %q, which is not true of this journal\n%s", wrong, r.stdout)
				}
			}
			if after := folderState(t, out); after != before {
				t.Errorf("verify changed the folder:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
