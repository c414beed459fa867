// Package batchtest makes, for tests, inputs that cost no OCR time beyond
// what the test is about: documents small enough to read in a fraction
// of a second, so that a test of the journal, the processes or the
// reports does not spend its time reading scans it never looks at.
package batchtest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
)

// TinyReferral is a good document as cheap as one can be: a small page of
// large print holding its participant ID and referral date, read at 100
// DPI in a fraction of a second. seed makes each file's bytes its own.
func TinyReferral(seed int, id, date string) []byte {
	return Referral(fmt.Sprintf("Referral number %d to the clinic", seed), "Participant ID: "+id, "Referral date: "+date)
}

// Deflated is a PDF stream object holding content, compressed.
func Deflated(content []byte) string {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	w.Write(content)
	w.Close()
	return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes())
}

// Doc is a good document written by TinyDocs and its manifest fields.
type Doc struct {
	SourceID, ParticipantID, Date, Path string
}

// TinyDocs writes n tiny referrals into dir, their source_ids prefix-0,
// prefix-1…, each with a participant ID and bytes of its own (seed
// offsets them, so that two calls can make different files), and returns
// them.
func TinyDocs(dir, prefix string, seed, n int) ([]Doc, error) {
	var docs []Doc
	for i := range n {
		d := Doc{fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf("P-%06d", 100000+seed+i), "2024-03-14", ""}
		d.Path = filepath.Join(dir, d.SourceID+".pdf")
		if err := os.WriteFile(d.Path, TinyReferral(seed+i, d.ParticipantID, d.Date), 0o644); err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}
