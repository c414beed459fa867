package batch

// This file reads artifacts for people and programs outside a run: Show for
// `refbatch show`, ReadArtifacts for `refbatch eval`. Both check an artifact
// against the journal before returning it.

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/store"
)

// Show returns the artifact of the document with the given source_id, after
// checking that its bytes hash to what the journal recorded.
func Show(p Place, sourceID string, ids []age.Identity) (*Artifact, error) {
	j, p, err := openJournal(p)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	doc, ok, err := j.DocumentBySource(sourceID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", sourceID, ErrNotFound)
	}
	if doc.Artifact == "" {
		return nil, fmt.Errorf("%s is %s %s and has no artifact: %w", sourceID, doc.State, doc.Reason, ErrNotFound)
	}
	st, err := store.OpenReadOnly(filepath.Join(p.Out, ArtifactsDir))
	if err != nil {
		return nil, err
	}
	return openArtifact(st, doc, ids)
}

// openArtifact reads a document's artifact for a reader (show, eval): its
// bytes must hash to what the journal recorded and its text to its content
// hash, since altered text must not be shown or scored as if it were read.
func openArtifact(st *store.Store, d journal.Doc, ids []age.Identity) (*Artifact, error) {
	name := storeName(d.Artifact)
	sum, err := st.Hash(name)
	if err != nil {
		return nil, fmt.Errorf("artifact of %s: %w", d.SourceID, err)
	}
	if sum != d.ArtifactSHA256 {
		return nil, fmt.Errorf("artifact %s was altered: sha256 %s, journal %s", d.Artifact, sum, d.ArtifactSHA256)
	}
	a, err := readArtifact(st, name, ids)
	if err != nil {
		return nil, fmt.Errorf("artifact %s: %w", d.Artifact, err)
	}
	if ContentHash(a.Pages) != a.ContentSHA256 {
		return nil, fmt.Errorf("artifact %s: its text does not match its content hash", d.Artifact)
	}
	return a, nil
}

func readArtifact(st *store.Store, name string, ids []age.Identity) (*Artifact, error) {
	b, err := st.Read(name, ids)
	if err != nil {
		return nil, err
	}
	var a Artifact
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("parsing artifact: %w", err)
	}
	if a.Format != ArtifactFormat {
		return nil, fmt.Errorf("unknown artifact format %q", a.Format)
	}
	return &a, nil
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
func ReadArtifacts(p Place, ids []age.Identity, fn func(path string, a *Artifact) error) error {
	j, p, err := openJournal(p)
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
	st, err := store.OpenReadOnly(filepath.Join(p.Out, ArtifactsDir))
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
