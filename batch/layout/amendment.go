package layout

import (
	"encoding/json"
	"fmt"

	"github.com/refbatch/refbatch/batch/store"
)

// AmendmentFormat names the schema of an amendment: a person's
// transcription stored as an artifact version of its own.
const AmendmentFormat = "refbatch-amendment/1"

// maxAmendments bounds the chain a reader follows from a document's
// artifact to the text it amends (a cycle planted among artifacts ends
// there too).
const maxAmendments = 4096

// Amendment is a transcription stored on its own: a small artifact (the
// transcription, a few kilobytes) that names the artifact version it
// amends and that version's SHA-256 on disk, instead of a copy of the
// whole artifact with the transcription added. The journal names it as
// the document's artifact; a reader follows Amends back to the artifact
// of the reading, checking each link's hash, and sees that artifact with
// every transcription since (ReadArtifactSized). An artifact written
// whole with its transcriptions, as earlier builds did, is read as it is.
type Amendment struct {
	Format string `json:"format"`
	// Amends is the version amended, as the journal names artifacts
	// ("artifacts/<name>"), and AmendsSHA256 its bytes' SHA-256 on disk.
	Amends       string `json:"amends"`
	AmendsSHA256 string `json:"amends_sha256"`
	// AmendsSize is the version amended's size on disk, as the journal
	// recorded it (0: it recorded none, and the reader bounds the
	// version by its document's pages).
	AmendsSize int64 `json:"amends_size,omitempty"`
	// SourceID is the document's, for a person reading the file.
	SourceID      string        `json:"source_id"`
	Transcription Transcription `json:"transcription"`
}

// Marshal encodes the amendment as it is stored.
func (m *Amendment) Marshal() ([]byte, error) {
	m.Format = AmendmentFormat
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding amendment: %w", err)
	}
	return b, nil
}

// readAmendment parses the amendment b (read from the artifact name) and
// checks that the version it amends is still the size and bytes it
// recorded (at most bound bytes when it recorded no size); it returns
// that version's store name, its size, and the transcription.
func readAmendment(st *store.Store, name string, b []byte, bound int64) (string, store.Size, Transcription, error) {
	var m Amendment
	if err := json.Unmarshal(b, &m); err != nil {
		return "", store.Size{}, Transcription{}, fmt.Errorf("parsing amendment %s: %w", name, err)
	}
	if m.Amends == "" || m.AmendsSHA256 == "" || m.AmendsSize < 0 {
		return "", store.Size{}, Transcription{}, fmt.Errorf("amendment %s names no artifact it amends", name)
	}
	prev, size := StoreName(m.Amends), store.AtMost(bound)
	if m.AmendsSize > 0 {
		size = store.Exactly(m.AmendsSize)
	}
	sum, err := st.HashSized(prev, size)
	if err != nil {
		return "", store.Size{}, Transcription{}, fmt.Errorf("amendment %s amends %s: %w", name, m.Amends, err)
	}
	if sum != m.AmendsSHA256 {
		return "", store.Size{}, Transcription{}, fmt.Errorf("amendment %s amends %s, whose sha256 is %s, not the %s it recorded", name, m.Amends, sum, m.AmendsSHA256)
	}
	return prev, size, m.Transcription, nil
}
