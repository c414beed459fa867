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
	// Decisions are the decisions persons made about the document
	// (refbatch review), and Amendments the verdicts found again from its
	// artifact (a corrected participant_id or referral_date, changed
	// validation settings), oldest first; absent when none.
	Decisions  []Decision  `json:"decisions,omitempty"`
	Amendments []Amendment `json:"amendments,omitempty"`
}

// Decision is one decision of a person about the document: the action
// (accept, reject, retry, dismiss), who, where, when, the note, and the
// state and reason it left.
type Decision struct {
	Action     string    `json:"action"`
	User       string    `json:"user"`
	Host       string    `json:"host"`
	At         time.Time `json:"at"`
	Note       string    `json:"note,omitempty"`
	FromState  string    `json:"from_state"`
	FromReason string    `json:"from_reason,omitempty"`
}

// Amendment is one verdict found again from the artifact, with no OCR:
// event "amended" (who, and which fields were corrected; never their
// values) or "revalidated" (the validation settings changed), the
// verdict before and after.
type Amendment struct {
	Event      string    `json:"event"`
	At         time.Time `json:"at"`
	User       string    `json:"user,omitempty"`
	Host       string    `json:"host,omitempty"`
	Fields     []string  `json:"fields,omitempty"`
	FromState  string    `json:"from_state"`
	FromReason string    `json:"from_reason,omitempty"`
	State      string    `json:"state"`
	Reason     string    `json:"reason,omitempty"`
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
