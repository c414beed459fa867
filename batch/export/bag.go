package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The tag files of a bag (RFC 8493), in the order Bag.TagFiles writes
// them; TagManifestFile is written last, on its own.
const (
	BagItFile       = "bagit.txt"
	BagInfoFile     = "bag-info.txt"
	ManifestFile    = "manifest-sha256.txt"
	TagManifestFile = "tagmanifest-sha256.txt"
	// PayloadDir is the bag's payload folder.
	PayloadDir = "data"
)

// Bag accumulates a bag's payload, file by file, and renders its tag
// files. Payload paths are relative to the bag, with forward slashes,
// starting with "data/".
type Bag struct {
	files map[string]payloadFile
}

type payloadFile struct {
	sha256 string
	size   int64
}

// BagInfo is what bag-info.txt says beyond the payload's size.
type BagInfo struct {
	// ExternalIdentifier is the batch's ID.
	ExternalIdentifier string
	// Agent names the software: "refbatch <version>".
	Agent string
	// Documents counts the documents in the payload.
	Documents int
	Date      time.Time
	// Metadata names the payload's table of each document's manifest
	// fields (data/metadata.csv), "" for none.
	Metadata string
}

// NewBag returns an empty bag.
func NewBag() *Bag { return &Bag{files: map[string]payloadFile{}} }

// Add records one payload file and its content's SHA-256 (hex) and size.
// Adding a path again replaces it.
func (b *Bag) Add(path, sha256hex string, size int64) {
	b.files[path] = payloadFile{sha256: sha256hex, size: size}
}

// Has reports whether path is in the payload.
func (b *Bag) Has(path string) bool {
	_, ok := b.files[path]
	return ok
}

// Oxum is the Payload-Oxum: the payload's octet count and file count.
func (b *Bag) Oxum() string {
	var n int64
	for _, f := range b.files {
		n += f.size
	}
	return fmt.Sprintf("%d.%d", n, len(b.files))
}

// TagFiles renders bagit.txt, bag-info.txt and manifest-sha256.txt, in
// that order, then tagmanifest-sha256.txt over those three. Write the
// first three, then the tag manifest: a bag without one is unfinished.
func (b *Bag) TagFiles(info BagInfo) (names []string, contents [][]byte, tagManifest []byte) {
	bagit := []byte("BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")
	var bi strings.Builder
	fmt.Fprintf(&bi, "Bag-Software-Agent: %s\n", tagValue(info.Agent))
	fmt.Fprintf(&bi, "Bagging-Date: %s\n", info.Date.Format(time.DateOnly))
	fmt.Fprintf(&bi, "External-Identifier: %s\n", tagValue(info.ExternalIdentifier))
	fmt.Fprintf(&bi, "Payload-Oxum: %s\n", b.Oxum())
	fmt.Fprintf(&bi, "Refbatch-Document-Count: %d\n", info.Documents)
	if info.Metadata != "" {
		fmt.Fprintf(&bi, "Internal-Sender-Description: %s/%s lists each document's source_id, participant_id, referral_date, state, and the decision a person made and its note; the participant IDs are in the clear, as everything in this bag\n",
			PayloadDir, info.Metadata)
	}
	var m strings.Builder
	paths := make([]string, 0, len(b.files))
	for p := range b.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		fmt.Fprintf(&m, "%s  %s\n", b.files[p].sha256, encodePath(p))
	}
	names = []string{BagItFile, BagInfoFile, ManifestFile}
	contents = [][]byte{bagit, []byte(bi.String()), []byte(m.String())}
	var t strings.Builder
	for i, name := range names {
		fmt.Fprintf(&t, "%s  %s\n", Sum(contents[i]), name)
	}
	return names, contents, []byte(t.String())
}

// Sum is the SHA-256 of b in lowercase hex.
func Sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// encodePath percent-encodes what RFC 8493 §2.1.3 requires of a manifest
// path: CR, LF and '%'. refbatch's names hold none, but the rule costs
// nothing.
func encodePath(p string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(p)
}

// tagValue keeps a tag value on one line.
func tagValue(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}
