package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/ocr/result"
	"github.com/refbatch/refbatch/report/outcome"
)

// ArtifactFormat names the artifact's schema.
const ArtifactFormat = "refbatch-artifact/1"

// Artifact is what refbatch publishes for one document: the text of every
// page with its word confidences, and where it came from.
type Artifact struct {
	Format     string              `json:"format"`
	Provenance Provenance          `json:"provenance"`
	Pages      []result.PageResult `json:"pages"`
	// ContentSHA256 is the SHA-256 of ContentText(Pages): it proves the text
	// was not altered after it was read.
	ContentSHA256 string `json:"content_sha256"`
	// Transcriptions are the texts a person typed for regions refbatch
	// could not read (refbatch desk), oldest first: a person's, not
	// recognised, and outside Pages and the content hash.
	Transcriptions []Transcription `json:"transcriptions,omitempty"`
	// WithdrawnTranscriptions are the transcriptions a person withdrew
	// (see Withdrawal), oldest first, each with its Withdrawn set: kept
	// in custody, out of Transcriptions and so of every export.
	WithdrawnTranscriptions []Transcription `json:"withdrawn_transcriptions,omitempty"`
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

// Transcription is a region's text as a person typed it.
type Transcription struct {
	// Source is always "person": the text was typed, not recognised.
	Source string `json:"source"`
	// Page (from 0) and Box (pixels of the page as read, x0, y0, x1, y1)
	// are the region; Field is the manifest field it corrects, if any.
	Page int    `json:"page"`
	Box  [4]int `json:"box"`
	// Geometry is the image Box was drawn on: BoxOnCanvas, or "" for a
	// transcription made before it was recorded, drawn on the page turned
	// upright but not deskewed (the same pixels unless the page was
	// deskewed).
	Geometry string    `json:"geometry,omitempty"`
	Field    string    `json:"field,omitempty"`
	Text     string    `json:"text"`
	User     string    `json:"user"`
	Host     string    `json:"host"`
	At       time.Time `json:"at"`
	// ID is the transcription's amendment, as the journal names
	// artifacts: what a withdrawal names. A reader sets it; a
	// transcription written whole into an artifact by an earlier build
	// has none, and cannot be withdrawn.
	ID string `json:"id,omitempty"`
	// Withdrawn is who withdrew it, set by a reader; nil while it stands.
	Withdrawn *Withdrawal `json:"withdrawn,omitempty"`
}

// BoxOnCanvas is a Transcription's Geometry when its box was drawn on the
// canvas OCR read (the page turned upright and deskewed, as the words'
// boxes are): the pixels every box of an artifact is in, and that exports
// take back to the page by its recorded canvas map.
const BoxOnCanvas = "canvas"

// ContentText is the canonical text of a document: its pages' texts joined
// by form feeds, as Tesseract separates pages.
func ContentText(pages []result.PageResult) string {
	texts := make([]string, len(pages))
	for i, p := range pages {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\f")
}

// ContentHash is the SHA-256 of ContentText, in hex.
func ContentHash(pages []result.PageResult) string {
	sum := sha256.Sum256([]byte(ContentText(pages)))
	return hex.EncodeToString(sum[:])
}

func (a *Artifact) Marshal() ([]byte, error) {
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encoding artifact: %w", err)
	}
	return b, nil
}

// SafeName keeps a source_id readable in a file name: letters, digits, '-',
// '.' and '_' pass; anything else becomes '_' and a short hash of the whole
// ID keeps distinct IDs distinct.
func SafeName(id string) string {
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

// ArtifactPath is the path the journal and the report give artifact name:
// relative to the output folder, with a forward slash on every system.
func ArtifactPath(name string) string { return ArtifactsDir + "/" + name }

// StoreName is the store's name of the artifact at path, as ArtifactPath
// wrote it.
func StoreName(path string) string { return strings.TrimPrefix(path, ArtifactsDir+"/") }

// Bounds of an artifact's size, which a reader checks before it reads a
// byte (MaxArtifactBytes).
const (
	// maxPageBytes is the most a page of an artifact can take: a page's
	// result is a worker's answer, which the parent refuses over 32 MiB
	// (ocr's maxReply), and the artifact writes it as the answer was.
	maxPageBytes = 32 << 20
	// maxArtifactBase is the rest: provenance, encryption, and the
	// transcriptions of an artifact an earlier build wrote whole (each at
	// most 16 KiB of text, which JSON escapes to at most six times that).
	maxArtifactBase = 16 << 20
)

// MaxArtifactBytes is the most an artifact of a document of pages pages
// can be on disk: the bound of an artifact whose size the journal did not
// record (ArtifactSize). The journal records the pages at admission; a
// file in an artifact's place that is larger (a sparse file of gigabytes)
// is refused unread.
func MaxArtifactBytes(pages int) int64 {
	return maxArtifactBase + int64(max(pages, 1))*maxPageBytes
}

// ArtifactSize is the size a reader expects of the document's artifact
// before it reads a byte: the size the journal recorded when it was
// written, or, for an artifact published before sizes were recorded,
// at most MaxArtifactBytes of its pages.
func ArtifactSize(d journal.Doc) store.Size {
	return store.Recorded(d.ArtifactSize, MaxArtifactBytes(d.Pages))
}

// OpenArtifact reads a document's artifact for a reader (show, eval): its
// bytes must hash to what the journal recorded and its text to its content
// hash, since altered text must not be shown or scored as if it were read.
// It reads a regular file only, of the size the journal recorded
// (ArtifactSize), opened with no link followed (store.IsUnsafe tells
// those refusals).
func OpenArtifact(st *store.Store, d journal.Doc, ids []age.Identity) (*Artifact, error) {
	name := StoreName(d.Artifact)
	want := ArtifactSize(d)
	sum, err := st.HashSized(name, want)
	if err != nil {
		return nil, fmt.Errorf("artifact of %s: %w", d.SourceID, err)
	}
	if sum != d.ArtifactSHA256 {
		return nil, fmt.Errorf("artifact %s was altered: sha256 %s, journal %s", d.Artifact, sum, d.ArtifactSHA256)
	}
	a, err := ReadArtifactSized(st, name, want, MaxArtifactBytes(d.Pages), ids)
	if err != nil {
		return nil, fmt.Errorf("artifact %s: %w", d.Artifact, err)
	}
	if ContentHash(a.Pages) != a.ContentSHA256 {
		return nil, fmt.Errorf("artifact %s: its text does not match its content hash", d.Artifact)
	}
	return a, nil
}

// ReadArtifact reads and parses the artifact name, of any size; see
// ReadArtifactSized.
func ReadArtifact(st *store.Store, name string, ids []age.Identity) (*Artifact, error) {
	return ReadArtifactSized(st, name, store.AnySize, -1, ids)
}

// ReadArtifactSized reads the artifact name as store.ReadSized does, of
// size want, and parses it. An amendment (a transcription stored on its
// own: see Amendment) is read with the artifact it amends, each link's
// hash and size checked against the one before's record of them (a link
// whose amendment recorded no size is bounded by bound bytes), and
// returned as that artifact with the transcriptions added, oldest first.
// A withdrawal (see Withdrawal) is a link read and checked the same way;
// the transcription it names is listed in WithdrawnTranscriptions instead.
func ReadArtifactSized(st *store.Store, name string, want store.Size, bound int64, ids []age.Identity) (*Artifact, error) {
	var added, withdrawn []Transcription
	by := map[string]*Withdrawal{} // the withdrawals met, by what they withdraw
	for hops := 0; ; hops++ {
		b, err := st.ReadSized(name, want, ids)
		if err != nil {
			return nil, err
		}
		var head struct {
			Format string `json:"format"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			return nil, fmt.Errorf("parsing artifact: %w", err)
		}
		if head.Format != ArtifactFormat && hops >= maxAmendments {
			return nil, fmt.Errorf("artifact %s: more than %d amendments in a row", name, maxAmendments)
		}
		var next string
		var size store.Size
		switch head.Format {
		case ArtifactFormat:
			var a Artifact
			if err := json.Unmarshal(b, &a); err != nil {
				return nil, fmt.Errorf("parsing artifact: %w", err)
			}
			if len(by) > 0 {
				return nil, fmt.Errorf("artifact %s: a withdrawal names a transcription not in its chain", name)
			}
			slices.Reverse(added)
			slices.Reverse(withdrawn)
			a.Transcriptions = append(a.Transcriptions, added...)
			a.WithdrawnTranscriptions = withdrawn
			return &a, nil
		case AmendmentFormat:
			var t Transcription
			if next, size, t, err = readAmendment(st, name, b, bound); err != nil {
				return nil, err
			}
			t.ID = path.Join(ArtifactsDir, name)
			if w := by[t.ID]; w != nil {
				t.Withdrawn = w
				withdrawn = append(withdrawn, t)
				delete(by, t.ID)
			} else {
				added = append(added, t)
			}
		case WithdrawalFormat:
			var w Withdrawal
			if next, size, w, err = readWithdrawal(st, name, b, bound); err != nil {
				return nil, err
			}
			if by[w.Withdraws] != nil {
				return nil, fmt.Errorf("artifact %s: %s is withdrawn twice", name, w.Withdraws)
			}
			by[w.Withdraws] = &w
		default:
			return nil, fmt.Errorf("unknown artifact format %q", head.Format)
		}
		name, want = next, size
	}
}
