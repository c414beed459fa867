package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file checks a document's source against the journal, for verify
// --sources and for export.

// VerifySource re-hashes a document's source under admission's rules: a
// FIFO, a device, a symlink out of the root or a file grown past its
// admitted size is a finding, never a read that blocks or fills memory.
func VerifySource(root string, d journal.Doc, add func(kind, file, source, detail string)) {
	sum, _, err := admit.HashSource(root, d.Path, d.Size)
	sourceFindings(d, sum, err, add)
}

// verifySourceUntil is verifySource, given up when ctx ends first (a
// source may be large, and Ctrl-C ends verify within a moment): it then
// returns ctx's error, and the hash, left to finish, is not looked at.
func verifySourceUntil(ctx context.Context, root string, d journal.Doc, add func(kind, file, source, detail string)) error {
	type hashed struct {
		sum string
		err error
	}
	done := make(chan hashed, 1)
	go func() {
		sum, _, err := admit.HashSource(root, d.Path, d.Size)
		done <- hashed{sum, err}
	}()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case h := <-done:
		sourceFindings(d, h.sum, h.err, add)
		return nil
	}
}

// ReadVerifiedSource reads a document's source under admission's rules, as
// VerifySource hashes it, and returns its bytes when they still hash to
// the admitted SHA-256; otherwise it reports the finding verifySource
// would and returns nil.
func ReadVerifiedSource(root string, d journal.Doc, add func(kind, file, source, detail string)) []byte {
	data, err := admit.ReadSource(root, d.Path, d.Size)
	sum := ""
	if err == nil {
		h := sha256.Sum256(data)
		sum = hex.EncodeToString(h[:])
	}
	if !sourceFindings(d, sum, err, add) {
		return nil
	}
	return data
}

// sourceFindings reports what a source read as sum (or failing with err)
// says against the journal, and whether the source is as admitted.
func sourceFindings(d journal.Doc, sum string, err error, add func(kind, file, source, detail string)) bool {
	rej, _ := admit.IsRejection(err)
	switch {
	case err == nil && sum == d.SHA256:
		return true
	case err == nil:
		add(FindingSourceChanged, d.Path, d.SourceID, "sha256 "+sum+", journal "+d.SHA256)
	case rej == nil:
		add(FindingSourceUnreadable, d.Path, d.SourceID, err.Error())
	case rej.Reason == outcome.MissingFile:
		add(FindingSourceMissing, d.Path, d.SourceID, "")
	case rej.Reason == outcome.Unreadable:
		add(FindingSourceUnreadable, d.Path, d.SourceID, rej.Detail)
	case rej.Reason == outcome.TooLarge:
		add(FindingSourceChanged, d.Path, d.SourceID, fmt.Sprintf("larger than the %d bytes admitted", d.Size))
	default:
		add(FindingSourceChanged, d.Path, d.SourceID, rej.Detail)
	}
	return false
}
