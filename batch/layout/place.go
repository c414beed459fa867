package layout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/refbatch/refbatch/batch/journal"
)

// Place is where a batch is: its output folder, which holds the artifacts
// and the reports, and its journal, journal.db in that folder unless
// Journal names a PostgreSQL database (a postgres:// URL) that processes
// on several machines share. A batch with a PostgreSQL journal records
// its output folder in the journal, on the first run, so that every
// command given only the URL finds it (the folder is on a filesystem
// every machine mounts at the same path).
type Place struct {
	Out     string
	Journal string
}

// MetaOut is the journal's meta key for the absolute path of the output
// folder of a batch whose journal is not in it.
const MetaOut = "out"

// Shared reports whether the place's journal is a PostgreSQL database.
func (p Place) Shared() bool { return journal.IsURL(p.Journal) }

// JournalPath is where the place's journal is: its URL, or journal.db in
// its output folder.
func (p Place) JournalPath() string {
	if p.Shared() {
		return p.Journal
	}
	return filepath.Join(p.Out, JournalFile)
}

// Describe names the journal for messages: the URL without its password,
// or the file.
func (p Place) Describe() string { return journal.Redact(p.JournalPath()) }

// OpenJournal opens the place's journal read-only. With a PostgreSQL
// journal and no output folder given, the folder is the one the journal
// recorded; the place returned says which.
func OpenJournal(p Place) (*journal.Journal, Place, error) {
	if !p.Shared() {
		path, err := JournalIn(p.Out)
		if err != nil {
			return nil, p, err
		}
		j, err := journal.OpenReadOnly(path)
		return j, p, err
	}
	j, err := journal.OpenReadOnly(p.Journal)
	if errors.Is(err, journal.ErrNotJournal) {
		return nil, p, fmt.Errorf("%w: %v", ErrNoBatch, err)
	}
	if err != nil {
		return nil, p, err
	}
	recorded, err := j.Meta(MetaOut)
	if err != nil {
		j.Close()
		return nil, p, err
	}
	switch {
	case p.Out == "" && recorded == "":
		j.Close()
		return nil, p, fmt.Errorf("%w: %s records no output folder", ErrNoBatch, p.Describe())
	case p.Out == "":
		p.Out = recorded
	}
	return j, p, nil
}

// Locate returns p with its output folder: the one given, or the one
// its PostgreSQL journal recorded. It only reads.
func Locate(p Place) (Place, error) {
	if !p.Shared() || p.Out != "" {
		return p, nil
	}
	j, p, err := OpenJournal(p)
	if err != nil {
		return p, err
	}
	j.Close()
	return p, nil
}

// OpenJournalRW opens the place's journal to write to it, as OpenJournal
// opens it to read: a journal that holds no batch is refused, never
// created. Its waits for the lock end with ctx (journal.WithInterrupt).
func OpenJournalRW(ctx context.Context, p Place) (*journal.Journal, Place, error) {
	if !p.Shared() {
		path, err := JournalIn(p.Out)
		if err != nil {
			return nil, p, err
		}
		if err := CheckJournalFile(p.Out); err != nil {
			return nil, p, err
		}
		j, err := journal.Open(path, journal.WithInterrupt(ctx))
		return j, p, err
	}
	r, p, err := OpenJournal(p)
	if err != nil {
		return nil, p, err
	}
	r.Close()
	j, err := journal.Open(p.Journal, journal.WithInterrupt(ctx))
	return j, p, err
}

// PinOut records out as the output folder of the batch in j, a
// PostgreSQL journal, at its first run, or checks that it is the one
// recorded: every process of the batch writes its artifacts in one
// folder. An empty out is the recorded one, or DefaultOut in the current
// folder for a new batch. It returns the folder, absolute.
func PinOut(j *journal.Journal, out string) (string, error) {
	recorded, err := j.Meta(MetaOut)
	if err != nil {
		return "", err
	}
	if out == "" {
		if recorded != "" {
			return recorded, nil
		}
		out = DefaultOut
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	switch recorded {
	case "":
		return abs, j.SetMeta(MetaOut, abs)
	case abs:
		return abs, nil
	}
	return "", &OutMismatchError{Given: abs, Recorded: recorded}
}

// OutMismatchError is an output folder other than the one the batch's
// shared journal recorded: a process of the batch would write its
// artifacts apart from the others'.
type OutMismatchError struct{ Given, Recorded string }

func (e *OutMismatchError) Error() string {
	return fmt.Sprintf("this batch's output folder is %s, not %s", e.Recorded, e.Given)
}

// ErrNoBatch means a journal holds no batch to join: no run started one.
var ErrNoBatch = errors.New("the journal holds no batch")

// CheckShared refuses a journal location that is neither a PostgreSQL URL
// nor empty: a SQLite journal is always journal.db in the output folder.
func CheckShared(location string) error {
	if location == "" || journal.IsURL(location) {
		return nil
	}
	if _, err := os.Stat(location); err == nil {
		return fmt.Errorf("%w: %s is a file; a SQLite journal is journal.db in --out", ErrJournalNotURL, journal.Redact(location))
	}
	return fmt.Errorf("%w: %s", ErrJournalNotURL, journal.Redact(location))
}

// ErrJournalNotURL means a journal was named that is not a PostgreSQL
// URL.
var ErrJournalNotURL = errors.New("the journal is named by a postgres:// URL")
