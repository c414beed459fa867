// Package export turns a document's verified artifact into the files an
// archive takes. This branch holds its page geometry and searchable PDF;
// the rest of the package (and its documentation) comes from the export
// branch.
package export

// This file stands in for the export branch's provenance.go until the two
// branches merge, and is deleted then: it copies that file's Provenance so
// that the searchable PDF builds and is tested on its own.

import "time"

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
