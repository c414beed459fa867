package layout

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/store"
)

// This file keeps a batch's journal with its output folder. The batch's
// ID (journal meta batch_id, made by its first run) is recorded three
// times: in the journal, in the folder's marker file and in the
// provenance of every artifact. A run refuses a journal that does not
// belong to the folder (a symlink, one missing or empty beside the batch's
// artifacts or marker, another batch's), and verify reports one.

// MarkerFile is the output folder's marker: the ID of the batch whose
// folder it is, on one line, written (mode 0600) when a run first opens
// the batch's journal.
const MarkerFile = "refbatch-batch"

// ErrNotThisBatch means the journal does not belong to the output folder:
// a run would start another batch over this one's artifacts, or write
// this one's events into another batch's journal.
var ErrNotThisBatch = errors.New("the journal does not belong to this output folder")

// CheckJournalFile refuses, before the journal is opened (and so created),
// a journal.db in out that is not the batch's own: a symbolic link
// (dangling or not), anything but a regular file, or none (missing, or
// empty with no write-ahead log) in a folder that holds the batch's marker
// or artifacts.
func CheckJournalFile(out string) error {
	path := filepath.Join(out, JournalFile)
	fi, err := os.Lstat(path)
	state := ""
	switch {
	case errors.Is(err, fs.ErrNotExist):
		state = "missing"
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return fmt.Errorf("%w: %s is a symbolic link (to %s), not the batch's own file", ErrNotThisBatch, path, target)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file", ErrNotThisBatch, path)
	case fi.Size() == 0:
		if wal, err := os.Stat(path + "-wal"); err != nil || wal.Size() == 0 {
			state = "empty"
		}
	}
	if state == "" {
		return nil
	}
	marker, err := ReadMarker(out)
	if err != nil {
		return err
	}
	if marker != "" {
		return fmt.Errorf("%w: %s is %s, but the folder belongs to batch %s (%s)", ErrNotThisBatch, path, state, marker, filepath.Join(out, MarkerFile))
	}
	names, err := artifactNames(out)
	if err != nil {
		return err
	}
	if len(names) > 0 {
		return fmt.Errorf("%w: %s is %s, but %s holds %d artifacts", ErrNotThisBatch, path, state, filepath.Join(out, ArtifactsDir), len(names))
	}
	return nil
}

// ClaimFolder gives the batch in j its ID if it has none, and makes out
// its folder, or refuses a journal of another batch than out's: one whose
// ID is not the marker's, or, in a folder with no marker (one an earlier
// refbatch wrote), one that names none of the artifacts there. It returns
// the batch's ID.
func ClaimFolder(j *journal.Journal, out string) (string, error) {
	// The marker first: it is written after the journal records the ID,
	// so a marker read before the journal's ID never runs ahead of it.
	marker, err := ReadMarker(out)
	if err != nil {
		return "", err
	}
	id, err := j.Meta(MetaBatchID)
	if err != nil {
		return "", err
	}
	if marker != "" && marker != id {
		return "", fmt.Errorf("%w: %s is of batch %s, the folder of batch %s (%s)", ErrNotThisBatch, journal.Redact(j.Path()), OrNone(id), marker, filepath.Join(out, MarkerFile))
	}
	if marker == "" {
		if err := namesSomeArtifact(j, out); err != nil {
			return "", err
		}
	}
	if id, err = j.InitMeta(MetaBatchID, "refbatch-"+journal.NewToken()); err != nil {
		return "", err
	}
	if marker == "" {
		err = store.WriteFiles(out, []string{MarkerFile}, func(ws []io.Writer) error {
			_, err := io.WriteString(ws[0], id+"\n")
			return err
		})
	}
	return id, err
}

// namesSomeArtifact refuses a journal that names none of the artifacts in
// out: it is not the one that published them.
func namesSomeArtifact(j *journal.Journal, out string) error {
	names, err := artifactNames(out)
	if err != nil || len(names) == 0 {
		return err
	}
	present := map[string]bool{}
	for _, n := range names {
		present[n] = true
	}
	found := errors.New("found")
	err = j.StreamDocuments(func(d journal.Doc) error {
		if d.Artifact != "" && present[StoreName(d.Artifact)] {
			return found
		}
		return nil
	})
	switch {
	case errors.Is(err, found):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: %s names none of the %d artifacts in %s", ErrNotThisBatch, journal.Redact(j.Path()), len(names), filepath.Join(out, ArtifactsDir))
}

// ReadMarker returns the batch ID in out's marker, "" when there is none.
// A marker that is a symbolic link, or that holds no batch ID, is an
// error.
func ReadMarker(out string) (string, error) {
	path := filepath.Join(out, MarkerFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case errors.Is(err, syscall.ELOOP):
		return "", fmt.Errorf("%w: %s is a symbolic link", ErrNotThisBatch, path)
	case err != nil:
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if !validBatchID(id) {
		return "", fmt.Errorf("%w: %s holds no batch ID", ErrNotThisBatch, path)
	}
	return id, nil
}

// validBatchID reports whether id is one a run makes.
func validBatchID(id string) bool {
	hex, ok := strings.CutPrefix(id, "refbatch-")
	if !ok || hex == "" || len(hex) > 64 {
		return false
	}
	for _, c := range hex {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// artifactNames lists the artifacts in out's artifacts folder (a missing
// folder holds none), without temp files.
func artifactNames(out string) ([]string, error) {
	st, err := store.OpenReadOnly(filepath.Join(out, ArtifactsDir))
	if err != nil {
		return nil, err
	}
	var names []string
	err = st.Walk(func(n string) error {
		if !strings.HasPrefix(n, ".") {
			names = append(names, n)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return names, err
}

// OrNone is a batch ID for messages, "none" when there is none.
func OrNone(id string) string {
	if id == "" {
		return "none"
	}
	return id
}
