package review

import (
	"context"
	"errors"
	"slices"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/ocr/page"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is the review lane's side of a batch: the list of documents a
// person must look at (ListReview) and the decisions about them (Decide);
// a run reads a document again under a retry's page policy (batch's
// docOptions).

// ReviewItem is one document in review, with what a person needs to find
// and judge it. It holds no text.
type ReviewItem struct {
	SourceID       string         `json:"source_id"`
	Manifest       string         `json:"manifest"`
	ManifestLine   int            `json:"manifest_line"`
	Reason         outcome.Reason `json:"reason"`
	Pages          int            `json:"pages"`
	MeanConfidence float64        `json:"mean_confidence"`
	Band           outcome.Band   `json:"band"`
	Attempts       int            `json:"attempts"`
	Artifact       string         `json:"artifact"`
	TraceID        string         `json:"trace_id"`
	// Detail is what exactly its verdict found, when it says (for
	// handwriting, the pages of the note not transcribed).
	Detail string `json:"detail,omitempty"`
	// Decision is the latest earlier decision about the document (a
	// retry that read it again into review), nil if none.
	Decision *report.Decision `json:"decision"`
	// Transcriptions counts the transcriptions people made of the
	// document at the desk, and TranscriptionsWithdrawn those withdrawn
	// since (each kept in custody).
	Transcriptions          int `json:"transcriptions"`
	TranscriptionsWithdrawn int `json:"transcriptions_withdrawn"`
}

// ListReview lists the documents in review in the batch at p, in
// manifest order. It only reads: it opens the journal read-only and
// writes nothing, also while a run goes on.
func ListReview(p layout.Place) ([]ReviewItem, error) {
	j, _, err := layout.OpenJournal(p)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	items := []ReviewItem{}
	err = j.ReportRows("", func(r journal.ReportRow) error {
		if r.State != outcome.Review || r.Withdrawn {
			return nil
		}
		it := ReviewItem{SourceID: r.SourceID, Manifest: r.Manifest, ManifestLine: r.Line, Reason: r.Reason, Pages: r.Pages,
			MeanConfidence: standing.Round1(r.MeanConfidence), Band: r.Band, Attempts: r.Attempts, Artifact: r.Artifact, TraceID: r.TraceID,
			Detail: r.Detail, Transcriptions: r.Transcriptions.Made, TranscriptionsWithdrawn: r.Transcriptions.Withdrawn}
		if r.Decision != nil {
			it.Decision = standing.ReportDecision(*r.Decision)
		}
		items = append(items, it)
		return nil
	})
	return items, err
}

// DecideOptions are a person's decisions about documents in review.
type DecideOptions struct {
	// Out and Journal are where the batch is (see layout.Place).
	Out       string
	Journal   string
	Action    journal.Action
	SourceIDs []string
	// User, Host and Note are recorded with each decision. The note is
	// the person's own words, stored in the clear: it must hold no
	// patient data.
	User, Host, Note string
	// Retry and RetrySet are a retry's page settings: the fields of Retry
	// named in RetrySet (page.Policy's JSON names) replace the latest
	// run's for the document's next reading.
	Retry    page.Policy
	RetrySet []string
	// RetryValidation are a retry's validation settings: those named in
	// RetrySet (no_id_check, high_confidence, low_confidence,
	// coverage_threshold) replace the latest run's for the document's
	// next verdict.
	RetryValidation RetryValidation
	// CheckLanguages refuses a retry's languages that are not installed
	// (ocr.CheckLanguages, which the caller passes: review does not link
	// the engines). A retry that sets a language is refused without it.
	CheckLanguages func(lang string, orientation bool) error
	// Since, when set, holds each document's latest event as the person
	// saw it (DeskDocument's Version): a document that changed since is
	// refused (*journal.ChangedError).
	Since map[string]int64
}

// Decided is the outcome of one decision: recorded, or refused (Err: a
// *journal.NotInReviewError, a *journal.ChangedError, a
// *journal.NotRejectedError for a dismissal, journal.ErrDismissed, or
// journal.ErrNoDocument).
type Decided struct {
	SourceID string
	Decision journal.Decision
	Err      error
}

// Decide records o's decision about each of o.SourceIDs, one journal
// transaction each: a document not in review is refused, and the others
// are decided all the same. A dismissal (journal.Dismiss) is about
// rejected rows instead: the row stays rejected and no longer needs a
// person; a row not rejected, or dismissed already, is refused. It returns an error only when no decision
// could be tried (no journal, a retry policy no page could be read
// under), or when ctx ended while it waited for the journal's lock: the
// decisions before are recorded, the others are not tried. The refusals
// are in the results.
//
// A retry's page policy and validation settings (RetryValidation) are
// the latest run's, with the settings o names replaced, and recorded
// complete; min_dpi, which no flag sets, follows the dpi. The document is
// read again under it by the next run, whatever that run's own page
// flags.
func Decide(ctx context.Context, o DecideOptions) ([]Decided, error) {
	j, _, err := layout.OpenJournalRW(ctx, layout.Place{Out: o.Out, Journal: o.Journal})
	if err != nil {
		return nil, err
	}
	defer j.Close()
	retry := ""
	if o.Action == journal.Retry {
		var pageSet, valSet []string
		for _, name := range o.RetrySet {
			if slices.Contains(retryValidationNames, name) {
				valSet = append(valSet, name)
			} else {
				pageSet = append(pageSet, name)
			}
		}
		p, err := retryPolicy(j, o.Retry, pageSet, o.CheckLanguages)
		if err != nil {
			return nil, err
		}
		v, err := retryValidation(j, o.RetryValidation, valSet)
		if err != nil {
			return nil, err
		}
		if retry, err = retryRecord(p, v); err != nil {
			return nil, err
		}
	}
	var out []Decided
	for _, id := range o.SourceIDs {
		d, err := decideOne(j, id, journal.Decision{Action: o.Action, User: o.User, Host: o.Host, Note: o.Note, Since: o.Since[id]}, retry)
		if errors.Is(err, context.Canceled) {
			// Interrupted waiting for the lock: not a refusal, and the
			// decisions after it are not tried.
			return out, err
		}
		out = append(out, Decided{SourceID: id, Decision: d, Err: err})
	}
	return out, nil
}

// decideOne records one decision: a dismissal of a rejected row, an undo
// of the latest accept or reject, or a decision about a document in
// review.
func decideOne(j *journal.Journal, id string, d journal.Decision, retry string) (journal.Decision, error) {
	if d.Action == journal.Undo {
		return j.UndoDecision(id, d)
	}
	if d.Action != journal.Dismiss {
		return j.Decide(id, d, retry)
	}
	ds, err := j.Dismiss(id, d)
	if err != nil {
		return d, err
	}
	return ds[0], nil
}

// retryPolicy is the latest run's page policy with the fields set
// replaced by over's, its min_dpi following its dpi, validated; a dpi set
// without first_dpi or cascade turns the cascade off (a person asked
// for that resolution: the document is read at it, not first lower), and
// no_cascade (the flag --no-cascade) is cascade set off; a
// language set here must be installed, which check (ocr.CheckLanguages)
// tells (*ocr.LanguageError), as a run checks its own.
func retryPolicy(j *journal.Journal, over page.Policy, set []string, check func(string, bool) error) (page.Policy, error) {
	base := page.Default()
	runs, err := j.Runs()
	if err != nil {
		return base, err
	}
	for _, r := range slices.Backward(runs) {
		if s, ok := layout.DecodeSettings(r.Settings); ok {
			base = s.Policy
			break
		}
	}
	set = slices.Clone(set)
	for i, name := range set {
		if name == "no_cascade" {
			set[i], over.Cascade = "cascade", false
		}
	}
	p, err := base.Overlay(over, set)
	if err != nil {
		return p, err
	}
	if !slices.Contains(set, "min_dpi") {
		p.MinDPI = 0
	}
	if slices.Contains(set, "dpi") && !slices.Contains(set, "first_dpi") && !slices.Contains(set, "cascade") {
		p.Cascade = false
	}
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return p, err
	}
	if slices.Contains(set, "lang") {
		if check == nil {
			return p, errors.New("review: a retry's language cannot be checked: no language check given")
		}
		if err := check(p.Lang, !p.NoOrientation); err != nil {
			return p, &LanguageError{Err: err}
		}
	}
	return p, nil
}

// LanguageError is a retry refused because the check passed in
// (DecideOptions.CheckLanguages) refused its language: a language that is
// not installed, which is the caller's request to mend, not a failure of
// the batch. Err is the check's own error (*ocr.LanguageError), which it
// unwraps to and whose message it keeps.
type LanguageError struct{ Err error }

func (e *LanguageError) Error() string { return e.Err.Error() }
func (e *LanguageError) Unwrap() error { return e.Err }

// RejectedItem is a rejected row that still needs a person (neither a
// refusal that needs no action nor dismissed): what refused it, in its
// detail's words, and the advice chosen from them.
type RejectedItem struct {
	SourceID     string         `json:"source_id"`
	Manifest     string         `json:"manifest"`
	ManifestLine int            `json:"manifest_line"`
	Reason       outcome.Reason `json:"reason"`
	Detail       string         `json:"detail,omitempty"`
	Advice       string         `json:"advice"`
}

// ListRejected lists the rejected rows of the batch at p that still need
// a person, in manifest order: fix each, or dismiss it (Decide with
// journal.Dismiss). It only reads.
func ListRejected(p layout.Place) ([]RejectedItem, error) {
	j, _, err := layout.OpenJournal(p)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	items := []RejectedItem{}
	err = j.ReportRows("", func(r journal.ReportRow) error {
		dismissed := r.Decision != nil && r.Decision.Action == journal.Dismiss
		if r.State != outcome.Rejected || r.Withdrawn || !outcome.Open(r.State, r.Reason, dismissed) {
			return nil
		}
		items = append(items, RejectedItem{SourceID: r.SourceID, Manifest: r.Manifest, ManifestLine: r.Line, Reason: r.Reason,
			Detail: r.Detail, Advice: report.Advice(r.Reason, r.Detail)})
		return nil
	})
	return items, err
}

// QueuedRetries counts the documents of the batch at p that a person sent
// back to be read again (a retry) and that no run has read yet: they are
// in no lane until the next run reads them. It only reads.
func QueuedRetries(p layout.Place) (int, error) {
	j, _, err := layout.OpenJournal(p)
	if err != nil {
		return 0, err
	}
	defer j.Close()
	n := 0
	err = j.ReportRows("", func(r journal.ReportRow) error {
		if r.State == outcome.Queued && !r.Withdrawn && r.Decision != nil && r.Decision.Action == journal.Retry {
			n++
		}
		return nil
	})
	return n, err
}
