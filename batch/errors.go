package batch

import (
	"errors"
	"fmt"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
)

// Errors of this package. They say what happened, without CLI wording; the
// command line decides the message, the hint and the exit code.
var (
	// ErrNoRecipients: neither recipients nor an explicit plaintext choice.
	ErrNoRecipients = errors.New("no recipients for artifact encryption")
	// ErrEnginesBroken: the breaker tripped (documents kept failing in
	// the engines, and a fresh engine failed the probe page too); retrying
	// would burn every document's attempts.
	ErrEnginesBroken = errors.New("the OCR engines keep failing")
	// ErrOutNotFolder: the output path exists and is not a folder.
	ErrOutNotFolder = errors.New("the output path is not a folder")
)

// Causes of a document's context ending, inside a run.
var errDocTimeout = errors.New("document timeout")

// EncryptionChoiceError: the output folder holds artifacts of one kind
// ("age" or "plaintext") and the run would write the other. A batch half
// plaintext and half ciphertext would betray the choice made for it.
// Recipients are the keys the batch records (none for a plaintext batch or
// a journal from before they were recorded).
type EncryptionChoiceError struct {
	Have, Want string
	Recipients []string
}

// Encrypted reports whether the folder's artifacts are the encrypted ones
// (and the run's would be plaintext).
func (e *EncryptionChoiceError) Encrypted() bool { return e.Have == layout.EncryptionAge }

func (e *EncryptionChoiceError) Error() string {
	return fmt.Sprintf("this output folder holds %s artifacts; this run would write %s ones", e.Have, e.Want)
}

// diskFull turns a full output disk into ErrIncomplete: the run stopped
// cleanly and resumes once there is space. So does a PostgreSQL journal
// lost mid-run: the run resumes once the database is back.
func diskFull(err error) error {
	switch {
	case err == nil || errors.Is(err, layout.ErrIncomplete):
		return err
	case errors.Is(err, journal.ErrDiskFull) || store.IsNoSpace(err):
		return fmt.Errorf("%w: the output disk is full: %w", layout.ErrIncomplete, err)
	case errors.Is(err, journal.ErrUnreachable):
		return fmt.Errorf("%w: %w", layout.ErrIncomplete, err)
	}
	return err
}
