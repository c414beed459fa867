package review

import (
	"context"
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
)

// This file takes a person's transcription back (refbatch desk, refbatch
// review withdraw): one more artifact version (layout.Withdrawal), chained
// as a transcription's amendment is, that names the transcription
// withdrawn; the journal names it as the document's artifact in an
// EventTranscriptionWithdrawn. The transcription's amendment and its
// event stay in custody; readers of the artifact (the desk, show, every
// export) no longer see its text among the transcriptions.

// WithdrawOptions are one withdrawal of a transcription of a document in
// review.
type WithdrawOptions struct {
	Out, Journal string
	SourceID     string
	// Since is the document's version as the person saw it; 0 does not
	// check it.
	Since int64
	// ID is the transcription's (layout.Transcription's ID); when it is
	// "", Number is its place among the document's standing
	// transcriptions, from 1, oldest first (as show lists them).
	ID     string
	Number int
	// Note is the person's own words, stored in the clear: no patient
	// data.
	Note       string
	User, Host string
	// Identities decrypt the current artifact.
	Identities []age.Identity
}

// ErrNoTranscription means the document has no standing transcription
// that the withdrawal names (none, another, or one already withdrawn).
var ErrNoTranscription = errors.New("no such transcription")

// Withdrawn is what a withdrawal took back: the transcription's page and
// field (never its text), and the new artifact's path.
type Withdrawn struct {
	Page     int
	Field    string
	Artifact string
}

// WithdrawTranscription records o's withdrawal: it writes a
// layout.Withdrawal of the current version, then has the journal name it,
// in one transaction that requires the document in review with the
// artifact read (else a *journal.ChangedError or *journal.NotInReviewError,
// and the new file is removed).
func WithdrawTranscription(ctx context.Context, o WithdrawOptions) (Withdrawn, error) {
	var out Withdrawn
	if note := strings.TrimSpace(o.Note); len(note) > 500 || !utf8.ValidString(note) {
		return out, errors.New("a note is valid UTF-8 of at most 500 bytes")
	}
	j, p, err := layout.OpenJournalRW(ctx, layout.Place{Out: o.Out, Journal: o.Journal})
	if err != nil {
		return out, err
	}
	defer j.Close()
	d, ok, err := j.DocumentBySource(o.SourceID)
	if err == nil && !ok {
		err = fmt.Errorf("%s: %w", o.SourceID, journal.ErrNoDocument)
	}
	if err != nil {
		return out, err
	}
	if d.Artifact == "" {
		return out, fmt.Errorf("%s has no artifact: %w", o.SourceID, ErrNoTranscription)
	}
	recipients, err := layout.Recipients(j)
	if err != nil {
		return out, err
	}
	st, err := store.Open(filepath.Join(p.Out, layout.ArtifactsDir), recipients)
	if err != nil {
		return out, err
	}
	defer st.Close()
	a, err := layout.OpenArtifact(st, d, o.Identities)
	if err != nil {
		return out, err
	}
	t, err := pickTranscription(a, o)
	if err != nil {
		return out, err
	}
	w := layout.Withdrawal{Amends: d.Artifact, AmendsSHA256: d.ArtifactSHA256, AmendsSize: d.ArtifactSize, SourceID: d.SourceID, Withdraws: t.ID,
		User: o.User, Host: o.Host, At: time.Now().UTC(), Note: strings.TrimSpace(o.Note)}
	b, err := w.Marshal()
	if err != nil {
		return out, err
	}
	name, err := transcribedName(layout.StoreName(d.Artifact), len(a.Transcriptions)+2*len(a.WithdrawnTranscriptions)+2)
	if err != nil {
		return out, err
	}
	sum, size, err := st.PutSized(name, b)
	if err != nil {
		return out, err
	}
	out = Withdrawn{Page: t.Page, Field: t.Field, Artifact: filepath.ToSlash(filepath.Join(layout.ArtifactsDir, name))}
	err = j.WithdrawTranscription(o.SourceID, journal.TranscriptionWithdrawal{User: o.User, Host: o.Host, Note: w.Note, Withdraws: t.ID,
		Page: t.Page, Artifact: d.Artifact, ArtifactSHA256: d.ArtifactSHA256, NewArtifact: out.Artifact, NewArtifactSHA256: sum, NewArtifactSize: size, Since: o.Since})
	if err != nil {
		_ = st.Remove(name)
		return Withdrawn{}, err
	}
	return out, nil
}

// pickTranscription is the standing transcription of a that o names.
func pickTranscription(a *layout.Artifact, o WithdrawOptions) (layout.Transcription, error) {
	for i, t := range a.Transcriptions {
		if (o.ID != "" && t.ID == o.ID) || (o.ID == "" && o.Number == i+1) {
			if t.ID == "" {
				return t, fmt.Errorf("%s's transcription %d was written by an earlier build into the artifact itself: it cannot be withdrawn", o.SourceID, i+1)
			}
			return t, nil
		}
	}
	for _, t := range a.WithdrawnTranscriptions {
		if o.ID != "" && t.ID == o.ID {
			return t, fmt.Errorf("%s: that transcription was withdrawn already, by %s@%s: %w", o.SourceID, t.Withdrawn.User, t.Withdrawn.Host, ErrNoTranscription)
		}
	}
	if o.ID == "" {
		return layout.Transcription{}, fmt.Errorf("%s has %d standing transcription(s), not a number %d: %w", o.SourceID, len(a.Transcriptions), o.Number, ErrNoTranscription)
	}
	return layout.Transcription{}, fmt.Errorf("%s has no standing transcription %s: %w", o.SourceID, o.ID, ErrNoTranscription)
}
