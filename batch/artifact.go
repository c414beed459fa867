package batch

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
)

// This file is the write side of the artifacts: making one from what the
// engines read, naming it, and sweeping the ones no document references.
// Their format is layout's.

func newArtifact(doc journal.Doc, line, attempt int, out ocrResult, v verdict, o Options) *layout.Artifact {
	return &layout.Artifact{
		Format: layout.ArtifactFormat,
		Provenance: layout.Provenance{
			SourceID:      doc.SourceID,
			SourceSHA256:  doc.SHA256,
			SourceSize:    doc.Size,
			ManifestLine:  line,
			TraceID:       doc.TraceID,
			Attempt:       attempt,
			Pages:         len(out.pages),
			DPI:           o.DPI,
			Lang:          o.Lang,
			Engines:       versionsMap(out.versions),
			PolicyVersion: o.PolicyVersion(),
			Policy:        o.PolicyRecord(),
			CreatedAt:     time.Now().UTC(),
			State:         v.state,
			Reason:        v.reason,
			BatchID:       o.batchID,
		},
		Pages:         out.pages,
		ContentSHA256: layout.ContentHash(out.pages),
	}
}

// artifactName is the file name of one attempt's artifact. It carries the
// attempt so that an attempt that lost its lease can never overwrite the
// artifact of the attempt that won.
func artifactName(sourceID, sha string, attempt int, encrypted bool) string {
	name := fmt.Sprintf("%s_%s_a%d.json", layout.SafeName(sourceID), sha[:16], attempt)
	if encrypted {
		name += ".age"
	}
	return name
}

// artifactKey is the part of an artifact name that names its document.
func artifactKey(sourceID, sha string) string {
	return layout.SafeName(sourceID) + "_" + sha[:16] + "_a"
}

// sweepOrphans removes artifacts that an attempt wrote but never committed
// (the process died between the rename and the journal write). Files that
// belong to a document another live process is working on, and files refbatch
// did not name, are left alone: verify reports the latter.
//
// A resumed batch may hold tens of thousands of artifacts, nearly all of
// them referenced: the sweep keeps 8 bytes per document (a hash of the
// artifact it references) and the few unreferenced names, never every name.
// A hash collision can only spare a file, never remove one: a file whose
// hash is among the references is kept, and any other is removed only once
// a second read of the journal, by name, finds its document and no
// reference to it.
func sweepOrphans(j *journal.Journal, st *store.Store, owner journal.Owner) (int, error) {
	seed := maphash.MakeSeed()
	var referenced []uint64
	err := j.StreamDocuments(func(d journal.Doc) error {
		if d.Artifact != "" {
			referenced = append(referenced, maphash.String(seed, layout.StoreName(d.Artifact)))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// Artifacts an event names (one superseded when its document was
	// read again) stay: verify checks them against their event.
	kept, err := j.EventArtifacts()
	if err != nil {
		return 0, err
	}
	for _, a := range kept {
		referenced = append(referenced, maphash.String(seed, layout.StoreName(a.Artifact)))
	}
	slices.Sort(referenced)
	// Candidates: names refbatch could have given an attempt's artifact
	// that no document references, by document key.
	candidates := map[string][]string{}
	err = st.Walk(func(n string) error {
		if strings.HasPrefix(n, store.TempPrefix) {
			return nil
		}
		if _, ok := slices.BinarySearch(referenced, maphash.String(seed, n)); ok {
			return nil
		}
		if i := strings.LastIndex(n, "_a"); i >= 0 {
			candidates[n[:i+2]] = append(candidates[n[:i+2]], n)
		}
		return nil
	})
	if err != nil || len(candidates) == 0 {
		return 0, err
	}
	// Their documents, if any, read after the folder as the journal stands
	// now: whether their stray attempts may go, and whether a candidate
	// was committed meanwhile by a process working beside this one.
	mayGo := map[string]bool{}
	committed := map[string]bool{}
	now := time.Now()
	err = j.StreamDocuments(func(d journal.Doc) error {
		k := artifactKey(d.SourceID, d.SHA256)
		if candidates[k] == nil {
			return nil
		}
		committed[layout.StoreName(d.Artifact)] = true
		if !d.LeasedByOther(owner, now) {
			mayGo[k] = true
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	removed := 0
	for k, names := range candidates {
		if !mayGo[k] {
			continue
		}
		for _, n := range names {
			if committed[n] {
				continue
			}
			// Another process's sweep, at the same moment, may have
			// removed it first (TestKillSoak: a join started again while
			// another swept).
			if err := st.Remove(n); errors.Is(err, fs.ErrNotExist) {
				continue
			} else if err != nil {
				return removed, err
			}
			removed++
		}
	}
	return removed, nil
}
