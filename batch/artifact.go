package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report/outcome"
)

// ArtifactFormat names the artifact's schema.
const ArtifactFormat = "refbatch-artifact/1"

// Artifact is what refbatch publishes for one document: the text of every
// page with its word confidences, and where it came from.
type Artifact struct {
	Format     string           `json:"format"`
	Provenance Provenance       `json:"provenance"`
	Pages      []ocr.PageResult `json:"pages"`
	// ContentSHA256 is the SHA-256 of ContentText(Pages): it proves the text
	// was not altered after it was read.
	ContentSHA256 string `json:"content_sha256"`
	// Transcriptions are the texts a person typed for regions refbatch
	// could not read (refbatch desk), oldest first: a person's, not
	// recognised, and outside Pages and the content hash.
	Transcriptions []Transcription `json:"transcriptions,omitempty"`
}

// Provenance says which bytes, settings and engines produced an artifact.
type Provenance struct {
	SourceID      string            `json:"source_id"`
	SourceSHA256  string            `json:"source_sha256"`
	SourceSize    int64             `json:"source_size"`
	ManifestLine  int               `json:"manifest_line"`
	TraceID       string            `json:"trace_id"`
	Attempt       int               `json:"attempt"`
	Pages         int               `json:"pages"`
	DPI           int               `json:"dpi"`
	Lang          string            `json:"lang"`
	Engines       map[string]string `json:"engines"`
	PolicyVersion string            `json:"policy_version"`
	Policy        map[string]any    `json:"policy"`
	CreatedAt     time.Time         `json:"created_at"`
	State         outcome.State     `json:"state"`
	Reason        outcome.Reason    `json:"reason"`
	// BatchID is the ID of the batch that published the artifact, as its
	// journal and its folder's marker record it; artifacts from before
	// it was recorded have none.
	BatchID string `json:"batch_id,omitempty"`
}

// ContentText is the canonical text of a document: its pages' texts joined
// by form feeds, as Tesseract separates pages.
func ContentText(pages []ocr.PageResult) string {
	texts := make([]string, len(pages))
	for i, p := range pages {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\f")
}

// ContentHash is the SHA-256 of ContentText, in hex.
func ContentHash(pages []ocr.PageResult) string {
	sum := sha256.Sum256([]byte(ContentText(pages)))
	return hex.EncodeToString(sum[:])
}

func newArtifact(doc journal.Doc, line, attempt int, out ocrResult, v verdict, o Options) *Artifact {
	return &Artifact{
		Format: ArtifactFormat,
		Provenance: Provenance{
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
			Policy:        o.policyRecord(),
			CreatedAt:     time.Now().UTC(),
			State:         v.state,
			Reason:        v.reason,
			BatchID:       o.batchID,
		},
		Pages:         out.pages,
		ContentSHA256: ContentHash(out.pages),
	}
}

func (a *Artifact) marshal() ([]byte, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encoding artifact: %w", err)
	}
	return b, nil
}

// artifactName is the file name of one attempt's artifact. It carries the
// attempt so that an attempt that lost its lease can never overwrite the
// artifact of the attempt that won.
func artifactName(sourceID, sha string, attempt int, encrypted bool) string {
	name := fmt.Sprintf("%s_%s_a%d.json", safeName(sourceID), sha[:16], attempt)
	if encrypted {
		name += ".age"
	}
	return name
}

// artifactKey is the part of an artifact name that names its document.
func artifactKey(sourceID, sha string) string {
	return safeName(sourceID) + "_" + sha[:16] + "_a"
}

// safeName keeps a source_id readable in a file name: letters, digits, '-',
// '.' and '_' pass; anything else becomes '_' and a short hash of the whole
// ID keeps distinct IDs distinct.
func safeName(id string) string {
	var b strings.Builder
	clean := true
	for _, r := range id {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '.' || r == '_') {
			b.WriteRune(r)
			continue
		}
		b.WriteByte('_')
		clean = false
	}
	s := b.String()
	if len(s) > 64 {
		s, clean = s[:64], false
	}
	if strings.HasPrefix(s, ".") {
		s, clean = "_"+s[1:], false
	}
	if !clean || s == "" {
		sum := sha256.Sum256([]byte(id))
		s += "~" + hex.EncodeToString(sum[:4])
	}
	return s
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
			referenced = append(referenced, maphash.String(seed, storeName(d.Artifact)))
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
		referenced = append(referenced, maphash.String(seed, storeName(a.Artifact)))
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
		committed[storeName(d.Artifact)] = true
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
			if err := st.Remove(n); err != nil {
				return removed, err
			}
			removed++
		}
	}
	return removed, nil
}

// artifactPath is the path the journal and the report give artifact name:
// relative to the output folder, with a forward slash on every system.
func artifactPath(name string) string { return ArtifactsDir + "/" + name }

// storeName is the store's name of the artifact at path, as artifactPath
// wrote it.
func storeName(path string) string { return strings.TrimPrefix(path, ArtifactsDir+"/") }
