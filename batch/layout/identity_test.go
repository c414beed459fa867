package layout

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/journal"
)

// TestCheckJournalFile: what a run refuses before it opens journal.db,
// and what it lets through.
func TestCheckJournalFile(t *testing.T) {
	t.Parallel()
	const id = "refbatch-0123456789abcdef01234567"
	for _, tc := range []struct {
		name  string
		setup func(out string)
		found string // "" when the folder is accepted
	}{
		{"new folder", func(string) {}, ""},
		{"empty journal, nothing else", func(out string) { os.WriteFile(filepath.Join(out, JournalFile), nil, 0o600) }, ""},
		{"missing journal beside the marker", func(out string) {
			os.WriteFile(filepath.Join(out, MarkerFile), []byte(id+"\n"), 0o600)
		}, "is missing, but the folder belongs to batch " + id},
		{"empty journal beside artifacts", func(out string) {
			os.WriteFile(filepath.Join(out, JournalFile), nil, 0o600)
			os.Mkdir(filepath.Join(out, ArtifactsDir), 0o700)
			os.WriteFile(filepath.Join(out, ArtifactsDir, "R-1_0123456789abcdef_a1.json"), []byte("{}"), 0o600)
		}, "is empty, but"},
		{"empty journal with its log", func(out string) {
			os.WriteFile(filepath.Join(out, JournalFile), nil, 0o600)
			os.WriteFile(filepath.Join(out, JournalFile+"-wal"), []byte("log"), 0o600)
			os.WriteFile(filepath.Join(out, MarkerFile), []byte(id+"\n"), 0o600)
		}, ""},
		{"dangling symlink", func(out string) {
			os.Symlink(filepath.Join(out, "..", "elsewhere.db"), filepath.Join(out, JournalFile))
		}, "is a symbolic link"},
		{"a folder", func(out string) { os.Mkdir(filepath.Join(out, JournalFile), 0o700) }, "not a regular file"},
		{"a marker that is a symlink", func(out string) {
			os.Symlink("/etc/hostname", filepath.Join(out, MarkerFile))
		}, "is a symbolic link"},
		{"a marker with no ID", func(out string) {
			os.WriteFile(filepath.Join(out, MarkerFile), []byte("hello\n"), 0o600)
		}, "holds no batch ID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			os.Mkdir(out, 0o700)
			tc.setup(out)
			err := CheckJournalFile(out)
			switch {
			case tc.found == "" && err != nil:
				t.Errorf("checkJournalFile = %v, want nil", err)
			case tc.found != "" && (!errors.Is(err, ErrNotThisBatch) || !strings.Contains(err.Error(), tc.found)):
				t.Errorf("checkJournalFile = %v, want ErrNotThisBatch saying %q", err, tc.found)
			}
			if _, err := os.Lstat(filepath.Join(out, "..", "elsewhere.db")); err == nil {
				t.Error("a file was created through the symlink")
			}
		})
	}
}

// TestClaimFolder: the first claim makes the ID and the marker (0600), a
// later one agrees, and another batch's journal is refused.
func TestClaimFolder(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T, path string) *journal.Journal {
		j, err := journal.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		return j
	}
	out := t.TempDir()
	j := open(t, filepath.Join(out, JournalFile))
	id, err := ClaimFolder(j, out)
	if err != nil || !validBatchID(id) {
		t.Fatalf("claimFolder = %q, %v", id, err)
	}
	fi, err := os.Stat(filepath.Join(out, MarkerFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("marker: %v, %v", fi, err)
	}
	if again, err := ClaimFolder(j, out); err != nil || again != id {
		t.Errorf("second claimFolder = %q, %v; want %q", again, err, id)
	}
	other := open(t, filepath.Join(t.TempDir(), JournalFile))
	if _, err := ClaimFolder(other, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if _, err := ClaimFolder(other, out); !errors.Is(err, ErrNotThisBatch) || !strings.Contains(err.Error(), "the folder of batch "+id) {
		t.Errorf("claimFolder(another batch's journal) = %v", err)
	}
}
