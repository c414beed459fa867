package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file holds verify's checks of one file: an artifact, the
// journal's first bytes.

// verifyState checks that the document's state is its artifact's verdict,
// or that a decision of a person or a revalidation about that artifact
// explains the difference (explained: the states they moved it to).
func verifyState(file string, d journal.Doc, a *layout.Artifact, explained []outcome.State, add func(kind, file, source, detail string)) {
	if a.Provenance.State == d.State || slices.Contains(explained, d.State) {
		return
	}
	add(FindingUndecidedState, file, d.SourceID, fmt.Sprintf("the artifact says %s %s, the journal %s %s, and no decision of a person explains it",
		a.Provenance.State, a.Provenance.Reason, d.State, d.Reason))
}

// verifyKept checks an artifact an event names against the size and
// hash the event recorded; pages are its document's, which bound it when
// the event recorded no size.
func verifyKept(st *store.Store, name string, a journal.EventArtifact, pages int, res *VerifyResult, add func(kind, file, source, detail string)) {
	path := filepath.Join(st.Dir(), name)
	want := store.Recorded(a.Size, layout.MaxArtifactBytes(pages))
	if a.Size <= 0 {
		res.Unsized++
	}
	sum, err := st.HashSized(name, want)
	if err != nil {
		detail := fmt.Sprintf("named by the journal's %s event %d", a.Kind, a.EventID)
		if unsafeArtifact(err, path, a.SourceID, detail, add) {
			res.noteSizeMismatch(err, name, path, a.SourceID, a.SHA256)
			return
		}
		if !errors.Is(err, os.ErrNotExist) {
			detail += ": " + err.Error()
		}
		add(FindingMissingArtifact, path, a.SourceID, detail)
		return
	}
	res.Artifacts++
	res.Superseded++
	if sum != a.SHA256 {
		res.mismatches = append(res.mismatches, hashMismatch{path, sum, a.SHA256})
		add(FindingArtifactHash, path, a.SourceID, fmt.Sprintf("sha256 %s, the journal's %s event %d %s", sum, a.Kind, a.EventID, a.SHA256))
	}
}

// unsafeArtifact adds the finding for an artifact refused unread (a link,
// not a regular file, not the size the journal recorded, larger than its
// document's pages can hold) and reports whether err was one; detail,
// when set, goes before the reason.
func unsafeArtifact(err error, path, sourceID, detail string, add func(kind, file, source, detail string)) bool {
	kind := ""
	switch {
	case errors.Is(err, store.ErrLink) || errors.Is(err, store.ErrNotRegular):
		kind = FindingArtifactNotRegular
	case errors.Is(err, store.ErrTooLarge):
		kind = FindingArtifactOversized
	case errors.Is(err, store.ErrTooSmall):
		kind = FindingArtifactUndersized
	default:
		return false
	}
	var reason string
	var le *store.LinkError
	var ne *store.NotRegularError
	var se *store.SizeError
	var te *store.TooLargeError
	switch {
	case errors.As(err, &le):
		reason = "a symbolic link in the artifact's place: not followed"
	case errors.As(err, &ne):
		reason = describeNotRegular(ne) + " in the artifact's place: not read"
	case errors.As(err, &se) && se.Size > se.Want:
		reason = fmt.Sprintf("%d bytes, more than the %d the journal recorded when it was written: not read", se.Size, se.Want)
	case errors.As(err, &se):
		reason = fmt.Sprintf("%d bytes, fewer than the %d the journal recorded when it was written: not read", se.Size, se.Want)
	case errors.As(err, &te):
		reason = fmt.Sprintf("%d bytes, more than the %d its document's pages can hold (the journal recorded no size for it): not read", te.Size, te.Max)
	}
	if detail != "" {
		reason = detail + ": " + reason
	}
	add(kind, path, sourceID, reason)
	return true
}

// describeNotRegular is what stands in an artifact's place, in a few
// words ("a FIFO").
func describeNotRegular(e *store.NotRegularError) string {
	msg := e.Error()
	if rest, ok := strings.CutPrefix(msg, e.Path+" is "); ok {
		msg, _, _ = strings.Cut(rest, ", not a regular file")
	}
	return msg
}

// VerifyArtifact checks a document's artifact as Verify does (its bytes
// against the journal, its content hash, its provenance and its batch,
// batchID), for a reader that hands over only what verifies (export); nil
// when it could not be read.
func VerifyArtifact(st *store.Store, d journal.Doc, batchID string, ids []age.Identity, add func(kind, file, source, detail string)) *layout.Artifact {
	return verifyArtifact(st, d, layout.StoreName(d.Artifact), ids, &VerifyResult{batchID: batchID}, add)
}

// verifyArtifact checks a document's artifact against the journal and,
// when it can decrypt it, its content hash and provenance. It returns the
// artifact when every check passed and it was decrypted, else nil.
func verifyArtifact(st *store.Store, d journal.Doc, name string, ids []age.Identity, res *VerifyResult, add func(kind, file, source, detail string)) *layout.Artifact {
	path := filepath.Join(st.Dir(), name)
	want := layout.ArtifactSize(d)
	if d.ArtifactSize == 0 {
		res.Unsized++
	}
	sum, err := st.HashSized(name, want)
	if err != nil && unsafeArtifact(err, path, d.SourceID, "", add) {
		res.noteSizeMismatch(err, name, path, d.SourceID, d.ArtifactSHA256)
		return nil
	}
	if errors.Is(err, os.ErrNotExist) {
		add(FindingMissingArtifact, path, d.SourceID, "")
		return nil
	}
	if err != nil {
		add(FindingMissingArtifact, path, d.SourceID, err.Error())
		return nil
	}
	res.Artifacts++
	if sum != d.ArtifactSHA256 {
		res.mismatches = append(res.mismatches, hashMismatch{path, sum, d.ArtifactSHA256})
		add(FindingArtifactHash, path, d.SourceID, "sha256 "+sum+", journal "+d.ArtifactSHA256)
		return nil
	}
	if len(ids) == 0 && st.Encrypted() {
		return nil
	}
	if len(ids) == 0 && strings.HasSuffix(name, ".age") {
		return nil
	}
	a, err := layout.ReadArtifactSized(st, name, want, layout.MaxArtifactBytes(d.Pages), ids)
	if err != nil && unsafeArtifact(err, path, d.SourceID, "replaced after it was hashed", add) {
		return nil
	}
	if err != nil {
		add(FindingArtifactUnreadable, path, d.SourceID, err.Error())
		return nil
	}
	res.Decrypted++
	ok := true
	if got := layout.ContentHash(a.Pages); got != a.ContentSHA256 {
		add(FindingContentHash, path, d.SourceID, "text hashes to "+got+", artifact says "+a.ContentSHA256)
		ok = false
	} else if d.ContentSHA256 != "" && a.ContentSHA256 != d.ContentSHA256 {
		add(FindingContentHash, path, d.SourceID, "text hashes to "+got+", the journal recorded "+d.ContentSHA256)
		ok = false
	}
	if a.Provenance.SourceSHA256 != d.SHA256 || a.Provenance.SourceID != d.SourceID {
		add(FindingProvenance, path, d.SourceID, fmt.Sprintf("artifact names %s %s, journal %s %s",
			a.Provenance.SourceID, a.Provenance.SourceSHA256, d.SourceID, d.SHA256))
		ok = false
	}
	if a.Provenance.BatchID != "" && a.Provenance.BatchID != res.batchID {
		add(FindingBatchMismatch, path, d.SourceID, fmt.Sprintf("artifact of batch %s, journal of batch %s", a.Provenance.BatchID, layout.OrNone(res.batchID)))
		ok = false
	}
	if !ok {
		return nil
	}
	return a
}

// SourceRoot is the folder the sources' paths are under, as the latest run
// recorded it; "" when no run recorded one (an old journal).
func SourceRoot(runs []journal.Run) string {
	if len(runs) == 0 {
		return ""
	}
	if s, ok := layout.DecodeSettings(runs[len(runs)-1].Settings); ok {
		return s.Root
	}
	return ""
}

// notSQLite says why the file at path is not a SQLite database ("" when
// it starts as one). A file it cannot open is an error, not a reason; one
// that is not a regular file (a FIFO in its place) is a reason, found
// without blocking.
func notSQLite(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return (&store.NotRegularError{Path: path, Mode: fi.Mode()}).Error(), nil
	}
	head := make([]byte, 16)
	if _, err := io.ReadFull(f, head); err != nil || string(head) != "SQLite format 3\x00" {
		return "not a SQLite database", nil
	}
	return "", nil
}

// unknownDetail says what an unknown file in the artifacts folder is, and
// what to do, when its name tells: a transcription's amendment that a
// desk published and was stopped before the journal recorded it (nothing
// refers to it, and it blocks nothing: the next one takes another name).
func unknownDetail(name string) string {
	if transcriptionName.MatchString(name) {
		return "not recorded in the journal: a transcription the desk was stopped before recording " +
			"(nothing refers to it: transcribe the region again at the desk, and remove this file)"
	}
	return "not recorded in the journal"
}

// transcriptionName matches the names of transcriptions' artifacts, this
// build's amendments and earlier builds' whole copies.
var transcriptionName = regexp.MustCompile(`_a[0-9]+_t[0-9]+(-[0-9a-f]{8})?\.json(\.age)?$`)
