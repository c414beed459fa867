package journal

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenRefusesFIFO: a named pipe where the journal should be is no
// journal; SQLite would wait on it for good.
func TestOpenRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	j, err := Open(path)
	if err == nil {
		j.Close()
	}
	if !errors.Is(err, ErrNotJournal) {
		t.Errorf("Open(a named pipe): %v, want ErrNotJournal", err)
	}
}
