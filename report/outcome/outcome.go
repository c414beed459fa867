// Package outcome is refbatch's vocabulary of results: the state every
// manifest row ends in, the reason code that says why, the cause of an
// attempt that failed and will be retried, and the confidence band of a
// document that was read. Each code is declared here once, with what it
// implies (Reason.State, Cause.Transient), so that the packages producing
// them (manifest, batch/admit, batch/journal, batch) and those reading
// them (report, batch/eval, cmd) cannot disagree.
//
// # Contract
//
// The values are stable snake_case strings. They are written into the
// journal (documents.state, documents.reason, documents.band,
// attempts.cause), report.json, report.csv, the artifacts and
// `refbatch run --json`'s events, and people filter on them in
// spreadsheets: a code is never renamed or given another meaning. A new
// one may be added; it then needs its explanation in package report and
// its row in the Outcomes table of `refbatch help outcomes`
// (cmd/refbatch/topics/outcomes.md; tests check both).
//
// # States
//
// A row is queued while its document waits for or goes through OCR, then
// ends in exactly one final state: done (text published and verified),
// review (a person must look), rejected (permanent: never retried) or
// duplicate (the same source_id and bytes as an earlier row).
//
// # Reasons
//
// A review or rejected row carries one Reason; done and duplicate rows
// carry none. Each reason leads to one state, whatever finds it:
// page_too_large and malformed_pdf are rejected whether admission or the
// OCR worker meets them.
//
// # Causes
//
// An attempt that fails without a verdict records a Cause and does not
// decide the row: the document goes back to the queue, and only when its
// attempts run out does the row go to review as attempts_exhausted.
//
// This package imports only the standard library, so that every other
// package of refbatch may import it.
package outcome

// State is the state of a manifest row or of a document.
type State string

// The states, the four final ones first.
const (
	// Done: searchable text was published and verified.
	Done State = "done"
	// Review: a person must look; the Reason says at what.
	Review State = "review"
	// Rejected: refused for good, with a Reason; never retried.
	Rejected State = "rejected"
	// Duplicate: the same source_id and bytes as an earlier row, whose
	// document it shares.
	Duplicate State = "duplicate"
	// Queued: admitted, waiting for or going through OCR.
	Queued State = "queued"
)

// States returns every state in display order: done, review, rejected,
// duplicate, queued.
func States() []State { return []State{Done, Review, Rejected, Duplicate, Queued} }

// Final reports whether s is an end state: done, review, rejected or
// duplicate.
func (s State) Final() bool {
	switch s {
	case Done, Review, Rejected, Duplicate:
		return true
	}
	return false
}

// Reason is the stable code saying why a row is in review or rejected.
type Reason string

// Rejections found in the manifest row itself (package manifest). When a
// row has several problems the first in the manifest's own order wins.
const (
	MissingField Reason = "missing_field" // a required column is empty or absent
	BadDate      Reason = "bad_date"      // referral_date is not a real YYYY-MM-DD date
	BadConsent   Reason = "bad_consent"   // consent is not a yes or a no
	BadSHA256    Reason = "bad_sha256"    // sha256 is not 64 hex digits
	NoConsent    Reason = "no_consent"    // consent is no
)

// Rejections found by admission (package batch/admit), before any OCR;
// page_too_large and malformed_pdf also when the OCR worker meets them.
const (
	PathOutsideRoot Reason = "path_outside_root" // the path leads outside the root
	MissingFile     Reason = "missing_file"      // no file at the path
	Unreadable      Reason = "unreadable"        // the file is there but cannot be read (a symlink loop too)
	EmptyFile       Reason = "empty_file"        // the file has 0 bytes
	NotPDF          Reason = "not_pdf"           // not a PDF, or not a regular file
	TooLarge        Reason = "too_large"         // over the byte cap
	HashMismatch    Reason = "hash_mismatch"     // the bytes differ from the manifest's sha256
	Encrypted       Reason = "encrypted"         // the PDF is encrypted
	MalformedPDF    Reason = "malformed_pdf"     // the PDF is damaged: it cannot be read or opened
	TooManyPages    Reason = "too_many_pages"    // over the page cap
	PageTooLarge    Reason = "page_too_large"    // a page or an image is over the pixel cap even at the lowest DPI
	UnparseablePDF  Reason = "unparseable_pdf"   // the PDF checks crashed, ran out of memory or overran their deadline, twice
)

// Conflict rejects a row whose source_id an earlier row (or a run before)
// recorded with other bytes; the first document is kept.
const Conflict Reason = "conflict"

// RejectedByPerson rejects a document a person looked at in review and
// refused (`refbatch review reject`); the decision, who made it and the
// review reason it came from are in the journal's events.
const RejectedByPerson Reason = "rejected_by_person"

// Review reasons set by validation of a recognised document, in the order
// its checks run.
const (
	EmptyText      Reason = "empty_text"      // too few credible words: no usable text
	LowConfidence  Reason = "low_confidence"  // the document's confidence is in the low band
	Handwriting    Reason = "handwriting"     // a handwritten note on a page was not read credibly
	IncompleteText Reason = "incomplete_text" // print on a page was left unread
	IDNotFound     Reason = "id_not_found"    // the text lacks the participant ID
	DateNotFound   Reason = "date_not_found"  // the text holds the participant ID but not the referral date
)

// Review reasons of documents the engines could not read.
const (
	Timeout           Reason = "timeout"            // a page or the document overran its deadline
	RenderError       Reason = "render_error"       // MuPDF could not render a page
	AttemptsExhausted Reason = "attempts_exhausted" // every allowed attempt failed (Cause says how)
)

// reasons lists every reason once, with the state it leads to, in
// display order: rejections as a row meets them (manifest, admission,
// the journal), then review reasons (validation, engines).
var reasons = []struct {
	reason Reason
	state  State
}{
	{MissingField, Rejected}, {BadDate, Rejected}, {BadConsent, Rejected}, {BadSHA256, Rejected}, {NoConsent, Rejected},
	{PathOutsideRoot, Rejected}, {MissingFile, Rejected}, {Unreadable, Rejected}, {EmptyFile, Rejected},
	{NotPDF, Rejected}, {TooLarge, Rejected}, {HashMismatch, Rejected}, {Encrypted, Rejected},
	{MalformedPDF, Rejected}, {TooManyPages, Rejected}, {PageTooLarge, Rejected}, {UnparseablePDF, Rejected},
	{Conflict, Rejected}, {RejectedByPerson, Rejected},
	{EmptyText, Review}, {LowConfidence, Review}, {Handwriting, Review}, {IncompleteText, Review}, {IDNotFound, Review}, {DateNotFound, Review},
	{Timeout, Review}, {RenderError, Review}, {AttemptsExhausted, Review},
}

// Reasons returns every reason in display order: the rejections, then the
// review reasons.
func Reasons() []Reason {
	out := make([]Reason, len(reasons))
	for i, r := range reasons {
		out[i] = r.reason
	}
	return out
}

// State returns the state a row with reason r is in: Review or Rejected,
// or "" for a code this package does not declare.
func (r Reason) State() State {
	for _, x := range reasons {
		if x.reason == r {
			return x.state
		}
	}
	return ""
}

// NeedsPerson reports whether r sends its row to review: someone must look
// at the document (or at what the engines did with it) before its text is
// used.
func (r Reason) NeedsPerson() bool { return r.State() == Review }

// Permanent reports whether r rejects its row for good: the same file and
// manifest row would be refused again, so it is never retried.
func (r Reason) Permanent() bool { return r.State() == Rejected }

// Cause is why an attempt ended without a verdict. It is recorded with the
// attempt (the journal's attempts.cause), never as a row's reason.
type Cause string

// The causes of an attempt that ended without a verdict.
const (
	// CauseCrash: the OCR worker died or failed in a way it did not
	// classify.
	CauseCrash Cause = "crash"
	// CauseOOM: the OCR worker ran out of memory.
	CauseOOM Cause = "oom"
	// CauseTransient: the engine reported a failure expected to pass.
	CauseTransient Cause = "transient"
	// CauseIO: the source could not be read again for OCR.
	CauseIO Cause = "io"
	// CauseSourceChanged: the source's bytes differ from those admitted;
	// the next pass admits the row again, which decides it.
	CauseSourceChanged Cause = "source_changed"
	// CauseLeaseExpired: the attempt's lease ran out without a verdict
	// and another process took the document over.
	CauseLeaseExpired Cause = "lease_expired"
	// CauseOwnerDied: the process holding the attempt's lease died.
	CauseOwnerDied Cause = "owner_died"
)

// Causes returns every cause, those of failed attempts first.
func Causes() []Cause {
	return []Cause{CauseCrash, CauseOOM, CauseTransient, CauseIO, CauseSourceChanged, CauseLeaseExpired, CauseOwnerDied}
}

// Transient reports whether c is a failure of the attempt itself (crash,
// oom, transient, io, source_changed): the attempt counts against the
// attempt cap and the document is retried after a backoff. lease_expired
// and owner_died are not: the process running the attempt was lost, the
// attempt is recorded as abandoned and is not counted.
func (c Cause) Transient() bool {
	switch c {
	case CauseCrash, CauseOOM, CauseTransient, CauseIO, CauseSourceChanged:
		return true
	}
	return false
}

// Band is the confidence band of a document that was read, from its
// confidence (its words' confidences weighted by their characters)
// against the run's thresholds.
type Band string

// The confidence bands.
const (
	BandHigh   Band = "high"   // at or above the high threshold, with no page's print left unread over 2%
	BandMedium Band = "medium" // between the thresholds
	BandLow    Band = "low"    // under the low threshold: the row is in review
)

// Bands returns the bands from the most to the least confident.
func Bands() []Band { return []Band{BandHigh, BandMedium, BandLow} }

// NeedsNoAction reports whether a row rejected with r asks nothing of
// anyone: the participant said no (no_consent), or a person already
// decided (rejected_by_person). Such a row is final and closed.
func (r Reason) NeedsNoAction() bool { return r == NoConsent || r == RejectedByPerson }

// Open reports whether a row in state s with reason r still needs a
// person: every row in review, and every rejected one whose reason asks
// for action and that no person dismissed (acknowledged). It is the one
// count behind run's exit 4, its summary line, status and the
// notifications.
func Open(s State, r Reason, dismissed bool) bool {
	switch s {
	case Review:
		return true
	case Rejected:
		return !dismissed && !r.NeedsNoAction()
	}
	return false
}
