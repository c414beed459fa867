// Package export turns a document's verified artifact into the files an
// archive takes. This branch holds its page geometry and searchable PDF;
// the rest of the package (and its documentation) comes from the export
// branch.
package export

// This file stands in for the export branch's provenance.go until the two
// branches merge, and is deleted then: it holds the fields of that file's
// Provenance that the searchable PDF uses, so that it builds and is tested
// on its own.

// Provenance is what an exported document says about where its text came
// from. It holds IDs, hashes and settings, never text or a participant ID.
type Provenance struct {
	SourceID       string            `json:"source_id"`
	SourceSHA256   string            `json:"source_sha256"`
	ArtifactSHA256 string            `json:"artifact_sha256"`
	Engines        map[string]string `json:"engines"`
	PolicyVersion  string            `json:"policy_version"`
	// Producer names the refbatch that exported: "refbatch <version>".
	Producer string `json:"producer"`
}
