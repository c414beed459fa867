package export

import (
	"encoding/json"
	"time"
)

// Provenance is what an exported document says about where its text came
// from: it is the bag's provenance.json and the searchable PDF's refbatch
// metadata entry. It holds IDs, hashes and settings, never text or a
// participant ID.
type Provenance struct {
	SourceID       string `json:"source_id"`
	ManifestLine   int    `json:"manifest_line"`
	SourceSHA256   string `json:"source_sha256"`
	SourceSize     int64  `json:"source_size"`
	ArtifactSHA256 string `json:"artifact_sha256"`
	// ContentSHA256 is the SHA-256 of the text the artifact holds (its
	// pages joined by form feeds): the plain text export's bytes.
	ContentSHA256 string            `json:"content_sha256"`
	State         string            `json:"state"`
	Reason        string            `json:"reason,omitempty"`
	Band          string            `json:"band,omitempty"`
	Pages         int               `json:"pages"`
	Lang          string            `json:"lang"`
	Engines       map[string]string `json:"engines"`
	PolicyVersion string            `json:"policy_version"`
	Policy        map[string]any    `json:"policy,omitempty"`
	// ReadAt is when the artifact was made (the OCR, not the export).
	ReadAt time.Time `json:"read_at"`
	// Producer names the refbatch that exported: "refbatch <version>".
	Producer string `json:"producer"`
}

// JSON is p as indented JSON with a final newline, the bytes of
// provenance.json.
func (p Provenance) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
