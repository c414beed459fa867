package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file holds verify's checks of one file: an artifact, the
// journal's first bytes.

// verifyState checks that the document's state is its artifact's verdict,
// or that a decision of a person or a revalidation about that artifact
// explains the difference (explained: the states they moved it to).
func verifyState(file string, d journal.Doc, a *layout.Artifact, explained []outcome.State, add func(kind, file, source, detail string)) {
	if a.Provenance.State == d.State || slices.Contains(explained, d.State) {
		return
	}
	add(FindingUndecidedState, file, d.SourceID, fmt.Sprintf("the artifact says %s %s, the journal %s %s, and no decision of a person explains it",
		a.Provenance.State, a.Provenance.Reason, d.State, d.Reason))
}

// verifyKept checks an artifact an event names against the hash the
// event recorded.
func verifyKept(st *store.Store, name string, a journal.EventArtifact, res *VerifyResult, add func(kind, file, source, detail string)) {
	path := filepath.Join(st.Dir(), name)
	sum, err := st.Hash(name)
	if err != nil {
		detail := fmt.Sprintf("named by the journal's %s event %d", a.Kind, a.EventID)
		if !errors.Is(err, os.ErrNotExist) {
			detail += ": " + err.Error()
		}
		add(FindingMissingArtifact, path, a.SourceID, detail)
		return
	}
	res.Artifacts++
	res.Superseded++
	if sum != a.SHA256 {
		res.mismatches = append(res.mismatches, hashMismatch{path, sum, a.SHA256})
		add(FindingArtifactHash, path, a.SourceID, fmt.Sprintf("sha256 %s, the journal's %s event %d %s", sum, a.Kind, a.EventID, a.SHA256))
	}
}

// VerifyArtifact checks a document's artifact as Verify does (its bytes
// against the journal, its content hash, its provenance and its batch,
// batchID), for a reader that hands over only what verifies (export); nil
// when it could not be read.
func VerifyArtifact(st *store.Store, d journal.Doc, batchID string, ids []age.Identity, add func(kind, file, source, detail string)) *layout.Artifact {
	return verifyArtifact(st, d, layout.StoreName(d.Artifact), ids, &VerifyResult{batchID: batchID}, add)
}

// verifyArtifact checks a document's artifact against the journal and,
// when it can decrypt it, its content hash and provenance. It returns the
// artifact when every check passed and it was decrypted, else nil.
func verifyArtifact(st *store.Store, d journal.Doc, name string, ids []age.Identity, res *VerifyResult, add func(kind, file, source, detail string)) *layout.Artifact {
	path := filepath.Join(st.Dir(), name)
	sum, err := st.Hash(name)
	if errors.Is(err, os.ErrNotExist) {
		add(FindingMissingArtifact, path, d.SourceID, "")
		return nil
	}
	if err != nil {
		add(FindingMissingArtifact, path, d.SourceID, err.Error())
		return nil
	}
	res.Artifacts++
	if sum != d.ArtifactSHA256 {
		res.mismatches = append(res.mismatches, hashMismatch{path, sum, d.ArtifactSHA256})
		add(FindingArtifactHash, path, d.SourceID, "sha256 "+sum+", journal "+d.ArtifactSHA256)
		return nil
	}
	if len(ids) == 0 && st.Encrypted() {
		return nil
	}
	if len(ids) == 0 && strings.HasSuffix(name, ".age") {
		return nil
	}
	a, err := layout.ReadArtifact(st, name, ids)
	if err != nil {
		add(FindingArtifactUnreadable, path, d.SourceID, err.Error())
		return nil
	}
	res.Decrypted++
	ok := true
	if got := layout.ContentHash(a.Pages); got != a.ContentSHA256 {
		add(FindingContentHash, path, d.SourceID, "text hashes to "+got+", artifact says "+a.ContentSHA256)
		ok = false
	} else if d.ContentSHA256 != "" && a.ContentSHA256 != d.ContentSHA256 {
		add(FindingContentHash, path, d.SourceID, "text hashes to "+got+", the journal recorded "+d.ContentSHA256)
		ok = false
	}
	if a.Provenance.SourceSHA256 != d.SHA256 || a.Provenance.SourceID != d.SourceID {
		add(FindingProvenance, path, d.SourceID, fmt.Sprintf("artifact names %s %s, journal %s %s",
			a.Provenance.SourceID, a.Provenance.SourceSHA256, d.SourceID, d.SHA256))
		ok = false
	}
	if a.Provenance.BatchID != "" && a.Provenance.BatchID != res.batchID {
		add(FindingBatchMismatch, path, d.SourceID, fmt.Sprintf("artifact of batch %s, journal of batch %s", a.Provenance.BatchID, layout.OrNone(res.batchID)))
		ok = false
	}
	if !ok {
		return nil
	}
	return a
}

// SourceRoot is the folder the sources' paths are under, as the latest run
// recorded it; "" when no run recorded one (an old journal).
func SourceRoot(runs []journal.Run) string {
	if len(runs) == 0 {
		return ""
	}
	if s, ok := layout.DecodeSettings(runs[len(runs)-1].Settings); ok {
		return s.Root
	}
	return ""
}

// looksLikeSQLite reports whether the file at path starts as a SQLite
// database does. A file it cannot open is an error, not a no.
func looksLikeSQLite(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 16)
	if _, err := io.ReadFull(f, head); err != nil {
		return false, nil
	}
	return string(head) == "SQLite format 3\x00", nil
}
