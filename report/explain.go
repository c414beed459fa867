package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// explanation is what report.html says of a reason: for a rejection, what
// it means; for a review reason, what a person should do about the row,
// and the reason's rank in the review lane.
type explanation struct {
	meaning string // rejected: what the code means, in a few words
	action  string // review: what to do; low_confidence's holds a %s for its threshold
	rank    int    // review: the lane's order, most actionable first
}

// explanations holds one explanation per reason of package outcome (a test
// checks that none is missing). The review lane's order:
//
//   - id_not_found first: the text reads well but does not name the
//     participant, so the file may be filed under the wrong person. That is
//     the one outcome that can put a referral in someone else's record, and
//     one look at page 1 settles it.
//   - date_not_found next: the participant is right but the date is not
//     found; usually the manifest's date is off, and a look settles it.
//   - incomplete_text next: what was read is sound, but print is missing
//     from it, and a medical note in small print is often what matters.
//   - low_confidence and empty_text next: a person looks at the scan and
//     accepts it, rescans it or transcribes it.
//   - render_error, timeout and attempts_exhausted last: looking at the
//     document does not fix them; they need a rerun with other settings or
//     whoever runs the engines, and they tend to come in clusters the
//     timeline explains.
//
// Reasons this table does not know follow, by name.
var explanations = map[outcome.Reason]explanation{
	outcome.IDNotFound:        {rank: 1, action: "The text reads, but the participant ID from the manifest is not in it: the file may belong to someone else. Check page 1 against the manifest before anything else."},
	outcome.DateNotFound:      {rank: 2, action: "The participant ID is in the text, but the manifest's referral date is not, in any usual spelling (2024-03-07, 7/3/2024, 7 March 2024, March 7, 2024). The manifest's date is likely off, or the date on the page was misread: compare them; fix the date in the manifest and run again, or accept the document."},
	outcome.IncompleteText:    {rank: 3, action: "Print on a page was not read, even on a second reading: faint or small print, or print under a stamp. The words that were read are right, but some are missing. Compare the scan with the text (the artifact lists the unread regions per page) and transcribe what is missing, or rescan it darker."},
	outcome.LowConfidence:     {rank: 4, action: "The engine doubts what it read%s. Look at the scan: accept it, rescan it or transcribe it."},
	outcome.EmptyText:         {rank: 5, action: "No usable text was found: a blank, handwritten or picture-only scan. Look at it; rescan or transcribe it."},
	outcome.RenderError:       {rank: 6, action: "The PDF could not be rendered. Open it in a viewer; re-export or rescan it."},
	outcome.Timeout:           {rank: 7, action: "A page took longer than the page timeout. Rerun it with a longer --page-timeout or a lower --dpi, or look at the file."},
	outcome.AttemptsExhausted: {rank: 8, action: "The engine failed on every attempt (crash, out of memory, I/O). Give the trace ID to whoever runs refbatch: every log line of every attempt carries it."},

	outcome.MissingField:     {meaning: "a required column is empty"},
	outcome.BadDate:          {meaning: "referral_date is not a real YYYY-MM-DD date"},
	outcome.BadConsent:       {meaning: "consent is not yes or no"},
	outcome.BadSHA256:        {meaning: "sha256 is not 64 hex digits"},
	outcome.NoConsent:        {meaning: "consent is no: not imported"},
	outcome.PathOutsideRoot:  {meaning: "the path leads outside the root folder"},
	outcome.MissingFile:      {meaning: "the file is not there"},
	outcome.EmptyFile:        {meaning: "the file is empty"},
	outcome.NotPDF:           {meaning: "the file is not a PDF"},
	outcome.TooLarge:         {meaning: "the file is larger than --max-bytes"},
	outcome.TooManyPages:     {meaning: "more pages than --max-pages"},
	outcome.PageTooLarge:     {meaning: "a page or image is larger than --max-page-pixels"},
	outcome.Encrypted:        {meaning: "the PDF is encrypted"},
	outcome.MalformedPDF:     {meaning: "the PDF is damaged and cannot be read"},
	outcome.UnparseablePDF:   {meaning: "the PDF checks crashed, ran out of memory or took too long, twice: a damaged or hostile file"},
	outcome.Unreadable:       {meaning: "the file is there but cannot be read (permissions, I/O error)"},
	outcome.HashMismatch:     {meaning: "the bytes differ from the manifest's sha256"},
	outcome.Conflict:         {meaning: "an earlier row has the same source_id with other bytes"},
	outcome.RejectedByPerson: {meaning: "a person looked at it in review and rejected it (refbatch review reject); who, when and why are in the journal and the report's decision"},
}

// reviewAction says what a person should do with a row in review for
// reason; low is the low band's threshold, 0 when the report has none.
func reviewAction(reason outcome.Reason, low float64) string {
	action := explanations[reason].action
	if reason == outcome.LowConfidence {
		threshold := ""
		if low > 0 {
			threshold = " (confidence below " + formatCount(low) + ")"
		}
		action = fmt.Sprintf(action, threshold)
	}
	return action
}

// compareReview orders review reasons for the lane: by rank, then those
// without one by name.
func compareReview(a, b outcome.Reason) int {
	rank := func(r outcome.Reason) int {
		if e, ok := explanations[r]; ok && e.rank > 0 {
			return e.rank
		}
		return len(explanations) + 1
	}
	return cmp.Or(rank(a)-rank(b), strings.Compare(string(a), string(b)))
}
