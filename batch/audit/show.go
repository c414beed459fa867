package audit

// This file reads artifacts for people and programs outside a run: Show for
// `refbatch show`, ReadArtifacts for `refbatch eval`. Both check an artifact
// against the journal before returning it.

import (
	"context"
	"fmt"
	"path/filepath"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
)

// Show returns the artifact of the document with the given source_id, after
// checking that its bytes hash to what the journal recorded; its reads
// stop when ctx ends.
func Show(ctx context.Context, p layout.Place, sourceID string, ids []age.Identity) (*layout.Artifact, error) {
	j, p, err := layout.OpenJournal(p)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	doc, ok, err := j.DocumentBySource(sourceID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", sourceID, layout.ErrNotFound)
	}
	if doc.Artifact == "" {
		return nil, fmt.Errorf("%s is %s %s and has no artifact: %w", sourceID, doc.State, doc.Reason, layout.ErrNotFound)
	}
	st, err := store.OpenReadOnly(filepath.Join(p.Out, layout.ArtifactsDir))
	if err != nil {
		return nil, err
	}
	st.StopWith(ctx)
	return layout.OpenArtifact(st, doc, ids)
}

// ReadArtifacts calls fn with every artifact of the batch at p, in
// manifest order, with the path the journal and the report give it
// ("artifacts/<name>"). Each artifact is checked as Show checks one: its
// bytes must hash to what the journal recorded and its text to its content
// hash; a mismatch is an error, since text that was altered cannot be
// scored. ids decrypt encrypted artifacts.
//
// It opens the journal once, so scoring a large batch (refbatch eval) does
// not cost one journal scan per document.
func ReadArtifacts(p layout.Place, ids []age.Identity, fn func(path string, a *layout.Artifact) error) error {
	j, p, err := layout.OpenJournal(p)
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
	st, err := store.OpenReadOnly(filepath.Join(p.Out, layout.ArtifactsDir))
	if err != nil {
		return err
	}
	for _, d := range docs {
		a, err := layout.OpenArtifact(st, d, ids)
		if err != nil {
			return err
		}
		if err := fn(d.Artifact, a); err != nil {
			return err
		}
	}
	return nil
}
