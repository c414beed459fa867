package batch

import (
	"fmt"
	"os"
	"path/filepath"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/store"
)

// ReadArtifacts calls fn with every artifact of the output folder out, in
// manifest order, with the path the journal and the report give it
// ("artifacts/<name>"). Each artifact is checked as Show checks one: its
// bytes must hash to what the journal recorded and its text to its content
// hash; a mismatch is an error, since text that was altered cannot be
// scored. ids decrypt encrypted artifacts.
//
// It opens the journal once, so scoring a large batch (refbatch eval) does
// not cost one journal scan per document.
func ReadArtifacts(out string, ids []age.Identity, fn func(path string, a *Artifact) error) error {
	dbPath := filepath.Join(out, JournalFile)
	if _, err := os.Stat(dbPath); err != nil {
		return fmt.Errorf("%s is not a refbatch output folder: %w", out, err)
	}
	j, err := journal.OpenReadOnly(dbPath)
	if err != nil {
		return err
	}
	defer j.Close()
	var docs []journal.Doc
	err = j.Documents(func(d journal.Doc) error {
		if d.Artifact != "" {
			docs = append(docs, d)
		}
		return nil
	})
	if err != nil {
		return err
	}
	st, err := store.OpenReadOnly(filepath.Join(out, ArtifactsDir))
	if err != nil {
		return err
	}
	for _, d := range docs {
		a, err := openArtifact(st, d, ids)
		if err != nil {
			return err
		}
		if err := fn(d.Artifact, a); err != nil {
			return err
		}
	}
	return nil
}
