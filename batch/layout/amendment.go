package layout

import (
	"encoding/json"
	"fmt"
	"time"

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

// WithdrawalFormat names the schema of a withdrawal: an artifact version,
// chained as an amendment is, that takes back one earlier transcription.
// A build that predates it refuses the artifact (unknown format) rather
// than show the text withdrawn.
const WithdrawalFormat = "refbatch-withdrawal/1"

// Withdrawal takes back the transcription of the amendment Withdraws (as
// the journal names artifacts): a reader keeps that transcription out of
// the artifact's Transcriptions and lists it in WithdrawnTranscriptions,
// with who withdrew it. The amendment and this version stay on disk.
type Withdrawal struct {
	Format string `json:"format"`
	// Amends, AmendsSHA256 and AmendsSize are the version it follows, as
	// an Amendment's are.
	Amends       string `json:"amends"`
	AmendsSHA256 string `json:"amends_sha256"`
	AmendsSize   int64  `json:"amends_size,omitempty"`
	SourceID     string `json:"source_id"`
	Withdraws    string `json:"withdraws"`
	// User, Host, At and Note say who withdrew it, when and why (the
	// person's own words).
	User string    `json:"user"`
	Host string    `json:"host"`
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
}

// Marshal encodes the withdrawal as it is stored.
func (w *Withdrawal) Marshal() ([]byte, error) {
	w.Format = WithdrawalFormat
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding withdrawal: %w", err)
	}
	return b, nil
}

// readWithdrawal parses the withdrawal b (read from the artifact name)
// and checks its link as readAmendment does; it returns the version's
// store name and size as readAmendment does, and the withdrawal.
func readWithdrawal(st *store.Store, name string, b []byte, bound int64) (string, store.Size, Withdrawal, error) {
	var w Withdrawal
	if err := json.Unmarshal(b, &w); err != nil {
		return "", store.Size{}, w, fmt.Errorf("parsing withdrawal %s: %w", name, err)
	}
	if w.Withdraws == "" {
		return "", store.Size{}, w, fmt.Errorf("withdrawal %s names no transcription", name)
	}
	prev, size, err := checkLink(st, name, w.Amends, w.AmendsSHA256, w.AmendsSize, bound)
	return prev, size, w, err
}

// checkLink checks that the version amends, which the amendment or
// withdrawal name says it amends, is still the size (at most bound bytes
// when it recorded none: 0) and bytes sum it recorded; it returns that
// version's store name and the size it was read at.
func checkLink(st *store.Store, name, amends, sum string, recorded, bound int64) (string, store.Size, error) {
	if amends == "" || sum == "" || recorded < 0 {
		return "", store.Size{}, fmt.Errorf("amendment %s names no artifact it amends", name)
	}
	prev, size := StoreName(amends), store.Recorded(recorded, bound)
	got, err := st.HashSized(prev, size)
	if err != nil {
		return "", store.Size{}, fmt.Errorf("amendment %s amends %s: %w", name, amends, err)
	}
	if got != sum {
		return "", store.Size{}, fmt.Errorf("amendment %s amends %s, whose sha256 is %s, not the %s it recorded", name, amends, got, sum)
	}
	return prev, size, nil
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
	prev, size, err := checkLink(st, name, m.Amends, m.AmendsSHA256, m.AmendsSize, bound)
	if err != nil {
		return "", store.Size{}, Transcription{}, err
	}
	return prev, size, m.Transcription, nil
}
