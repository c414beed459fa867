// Package layout is what a batch is on disk and in its journal, which
// the write path (batch) and every reader of a batch (audit, standing,
// review, handover) share: the output folder's layout and where its
// journal is (Place), the folder's marker and batch ID, the artifact
// format and its reading, the run settings as the journal stores them
// (with their defaults and validation), the journal's meta keys, the root
// log's format, the errors more than one command returns (ErrIncomplete,
// ErrNoJournal, ErrNotFound), how to start refbatch's child processes
// (Process), and refbatch's version. It owns no policy of a run and opens
// nothing it is not asked to: the packages above it decide what to read
// and what to write.
package layout

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/ocr/child"
)

// Layout of the output folder.
const (
	// DefaultOut is the output folder every command uses without --out,
	// relative to the current folder (never to the manifest's: status,
	// verify and the rest take no manifest to find it by).
	DefaultOut   = "refbatch-out"
	JournalFile  = "journal.db"
	ArtifactsDir = "artifacts"
)

// MetaEncryption is the journal's meta key for the batch's encryption
// choice: EncryptionAge or EncryptionPlaintext.
const (
	MetaEncryption      = "artifacts"
	EncryptionAge       = "age"
	EncryptionPlaintext = "plaintext"
)

// MetaBatchID is the journal meta key of the batch's ID.
const MetaBatchID = "batch_id"

var (
	// ErrIncomplete: a run stopped before every row reached a state
	// (interrupted, a full disk, or work still leased by another
	// process), or an export before every document was written. Running
	// the same command again resumes.
	ErrIncomplete = errors.New("batch incomplete")
	// ErrNoJournal means the folder holds no journal: it is not an output
	// folder, or no run has started in it.
	ErrNoJournal = errors.New("no journal in the output folder")
	// ErrNotFound: no document with that source_id in the journal.
	ErrNotFound = errors.New("no such document")
)

// JournalIn is the journal of out, or ErrNoJournal when there is none.
func JournalIn(out string) (string, error) {
	path := filepath.Join(out, JournalFile)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: %s", ErrNoJournal, path)
	}
	return path, nil
}

// BatchRecipients reads the batch's encryption choice and recipients from
// its journal: whether its artifacts are encrypted, and the keys recorded
// (empty when none are).
func BatchRecipients(j *journal.Journal) (encrypted bool, keys []string, err error) {
	enc, err := j.Meta(MetaEncryption)
	if err != nil {
		return false, nil, err
	}
	keys, _, err = j.Recipients()
	return enc == EncryptionAge, keys, err
}

// Recipients are the recipients the batch's artifacts are encrypted
// to, as its journal recorded them; none for a plaintext batch.
func Recipients(j *journal.Journal) ([]age.Recipient, error) {
	encrypted, keys, err := BatchRecipients(j)
	if err != nil || !encrypted {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errors.New("the batch encrypts its artifacts but its journal records no recipients (an earlier build's batch): run refbatch run with its recipients")
	}
	rs, err := age.ParseRecipients(strings.NewReader(strings.Join(keys, "\n")))
	if err != nil {
		return nil, fmt.Errorf("the journal's recipients: %w", err)
	}
	return rs, nil
}

// Process is how to start a child process: the refbatch binary re-executed
// in one of its hidden modes. It is the supervisor's command, under the
// name the options have always used.
type Process = child.Command
