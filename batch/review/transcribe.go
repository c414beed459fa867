package review

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/ocr/result"
)

// This file records a person's transcription of a region (refbatch desk):
// an amendment (layout.Amendment), a small artifact version encrypted as
// the batch's are that holds the transcription, marked as a person's, and
// names the version it amends by path and hash; the journal names it as
// the document's artifact, and the version amended stays, named by the
// journal's event. A transcription costs its own few kilobytes, not a
// copy of the whole artifact.

// TranscriptionSource marks a transcription's text as a person's.
const TranscriptionSource = "person"

// MaxTranscription caps a transcription's text, in bytes.
const MaxTranscription = 16 << 10

// TranscribeOptions are one transcription of a document in review.
type TranscribeOptions struct {
	Out, Journal string
	SourceID     string
	// Since is the document's version as the person saw it (DeskDoc's
	// Version); 0 does not check it.
	Since int64
	Page  int
	Box   [4]int
	Field string
	Text  string
	// User and Host are recorded as a decision's are.
	User, Host string
	// Identities decrypt the current artifact.
	Identities []age.Identity
}

// Transcribe adds o's transcription to the document's artifact: it writes
// an amendment of the current version with it (layout.Amendment), then
// has the journal name the amendment, in one transaction that
// requires the document in review with the artifact read (else a
// *journal.ChangedError or *journal.NotInReviewError, and the new file is
// removed). It returns the new artifact's path as the journal names it.
func Transcribe(ctx context.Context, o TranscribeOptions) (string, error) {
	text := strings.TrimSpace(o.Text)
	switch {
	case text == "":
		return "", errors.New("a transcription needs text")
	case len(text) > MaxTranscription || !utf8.ValidString(text):
		return "", fmt.Errorf("a transcription is valid UTF-8 of at most %d bytes", MaxTranscription)
	}
	j, p, err := layout.OpenJournalRW(ctx, layout.Place{Out: o.Out, Journal: o.Journal})
	if err != nil {
		return "", err
	}
	defer j.Close()
	d, ok, err := j.DocumentBySource(o.SourceID)
	if err == nil && !ok {
		err = fmt.Errorf("%s: %w", o.SourceID, journal.ErrNoDocument)
	}
	if err != nil {
		return "", err
	}
	if d.Artifact == "" {
		return "", fmt.Errorf("%s has no artifact to add a transcription to", o.SourceID)
	}
	recipients, err := layout.Recipients(j)
	if err != nil {
		return "", err
	}
	st, err := store.Open(filepath.Join(p.Out, layout.ArtifactsDir), recipients)
	if err != nil {
		return "", err
	}
	defer st.Close()
	a, err := layout.OpenArtifact(st, d, o.Identities)
	if err != nil {
		return "", err
	}
	if o.Page < 0 || o.Page >= len(a.Pages) {
		return "", fmt.Errorf("%s has no page %d", o.SourceID, o.Page+1)
	}
	if err := checkBox(o.Box, a.Pages[o.Page]); err != nil {
		return "", err
	}
	t := layout.Transcription{Source: TranscriptionSource, Page: o.Page, Box: o.Box, Geometry: layout.BoxOnCanvas, Field: o.Field,
		Text: text, User: o.User, Host: o.Host, At: time.Now().UTC()}
	m := layout.Amendment{Amends: d.Artifact, AmendsSHA256: d.ArtifactSHA256, AmendsSize: d.ArtifactSize, SourceID: d.SourceID, Transcription: t}
	b, err := m.Marshal()
	if err != nil {
		return "", err
	}
	name, err := transcribedName(layout.StoreName(d.Artifact), len(a.Transcriptions)+1)
	if err != nil {
		return "", err
	}
	sum, size, err := st.PutSized(name, b)
	if err != nil {
		return "", err
	}
	path := filepath.ToSlash(filepath.Join(layout.ArtifactsDir, name))
	err = j.Transcribe(o.SourceID, journal.Transcription{User: o.User, Host: o.Host, Page: o.Page, Box: o.Box, Field: o.Field,
		Artifact: d.Artifact, ArtifactSHA256: d.ArtifactSHA256, NewArtifact: path, NewArtifactSHA256: sum, NewArtifactSize: size, Since: o.Since})
	if err != nil {
		_ = st.Remove(name)
		return "", err
	}
	return path, nil
}

// transcribedName is the name of the amendment that adds the n-th
// transcription, made from the name of the version it amends: the
// attempt's name with "_t", n, "-" and eight random hex digits before the
// extension, so that it stays the document's, and so that a file a desk
// published and was stopped before the journal named (which verify lists
// as unknown_file) never takes the name of the next one.
func transcribedName(old string, n int) (string, error) {
	base, ext, _ := strings.Cut(old, ".json")
	if i := strings.LastIndex(base, "_t"); i > 0 && strings.Contains(base[:i], "_a") {
		base = base[:i]
	}
	var r [4]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s_t%d-%s.json%s", base, n, hex.EncodeToString(r[:]), ext), nil
}

// BoxError is a transcription's box that breaks a rule: not ordered, or
// not inside its page. Rule names the rule, for the person.
type BoxError struct {
	Box  [4]int
	Rule string
}

func (e *BoxError) Error() string {
	return fmt.Sprintf("the box %d,%d,%d,%d %s", e.Box[0], e.Box[1], e.Box[2], e.Box[3], e.Rule)
}

// checkBox holds a transcription's box (x0, y0, x1, y1, in pixels of the
// page as read) to the page: ordered, at least a pixel wide and high,
// and inside the page's width and height (a page an earlier build read
// without them is held to being ordered and not negative).
func checkBox(b [4]int, p result.PageResult) error {
	switch {
	case b[0] < 0 || b[1] < 0:
		return &BoxError{b, "starts off the page: x0 and y0 are at least 0"}
	case b[0] >= b[2] || b[1] >= b[3]:
		return &BoxError{b, "is not ordered: x0 < x1 and y0 < y1"}
	case p.Width > 0 && p.Height > 0 && (b[2] > p.Width || b[3] > p.Height):
		return &BoxError{b, fmt.Sprintf("ends off the page: the page is %d by %d pixels", p.Width, p.Height)}
	}
	return nil
}
