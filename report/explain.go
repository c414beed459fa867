package report

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// explanation is what report.html says of a reason: for a rejection,
// what it means and how to fix it; for a review reason, what a person
// should look at, how `refbatch review` may decide it, and the reason's
// rank in the review lane.
type explanation struct {
	meaning string // rejected: what the code means, in a few words
	fix     string // rejected: what to change before the rerun
	action  string // review: what to look at; low_confidence's holds a %s for its threshold
	rank    int    // review: the lane's order, most actionable first
	// noText marks the review reasons whose document has no text to
	// accept: a person can only have it read again or reject it.
	noText bool
	// retry is the flags suggested for `refbatch review retry`, "" for
	// none (the same settings, attempts counted afresh).
	retry string
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
//   - handwriting next: a note written on the referral (an allergy, a
//     drug to stop) was not read, and only a person reading the scan
//     finds it.
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
	outcome.IDNotFound:        {rank: 1, retry: "--dpi 400", action: "The text reads, but the participant ID from the manifest is not in it: the file may belong to someone else. Check page 1 against the manifest before anything else."},
	outcome.DateNotFound:      {rank: 2, retry: "--dpi 400", action: "The participant ID is in the text, but the manifest's referral date is not, in any usual spelling (2024-03-07, 7/3/2024, 7 March 2024, March 7, 2024). The manifest's date is likely off, or the date on the page was misread: compare them; fix the date in the manifest and run again, or accept the document."},
	outcome.Handwriting:       {rank: 3, action: "A handwritten note on a page was not transcribed: read it in the scan (each row names its pages). The printed text was read; the note (a clinician's or the referrals office's, often what matters most) was not, or not credibly. The artifact lists the handwritten regions per page (handwriting_regions); transcribe the note, then accept the document."},
	outcome.IncompleteText:    {rank: 4, retry: "--dpi 400", action: "Print on a page was not read, even on a second reading: faint or small print, or print under a stamp. The words that were read are right, but some are missing. Compare the scan with the text (the artifact lists the unread regions per page) and transcribe what is missing, or rescan it darker."},
	outcome.LowConfidence:     {rank: 5, retry: "--dpi 400", action: "The engine doubts what it read%s. Look at the scan: accept it, rescan it or transcribe it."},
	outcome.EmptyText:         {rank: 6, retry: "--dpi 400", action: "No usable text was found: a blank, handwritten or picture-only scan. Look at it; rescan or transcribe it."},
	outcome.RenderError:       {rank: 7, noText: true, action: "The PDF could not be rendered. Open it in a viewer; re-export or rescan it."},
	outcome.Timeout:           {rank: 8, noText: true, retry: "--dpi 200", action: "A page took longer than the page timeout. Rerun it with a longer --page-timeout or a lower --dpi, or look at the file."},
	outcome.AttemptsExhausted: {rank: 9, noText: true, action: "The engine failed on every attempt (crash, out of memory, I/O). Give the trace ID to whoever runs refbatch: every log line of every attempt carries it."},

	outcome.MissingField:     {meaning: "a required column is empty", fix: "Fill in the empty column (source_id, participant_id, referral_date, consent and path are required)."},
	outcome.BadDate:          {meaning: "referral_date is not a real YYYY-MM-DD date", fix: "Write the date as YYYY-MM-DD, a day that exists (2024-02-30 does not)."},
	outcome.BadConsent:       {meaning: "consent is not yes or no", fix: "Write consent as yes or no (true/false, y/n and 1/0 also do)."},
	outcome.BadSHA256:        {meaning: "sha256 is not 64 hex digits", fix: "Give the file's SHA-256 as 64 hex digits (sha256sum FILE prints it), or leave the column empty."},
	outcome.NoConsent:        {meaning: "consent is no: not imported", fix: "Nothing to fix if consent was refused. If it has been given since, write yes."},
	outcome.PathOutsideRoot:  {meaning: "the path leads outside the root folder", fix: "The path is outside --root: rerun with --root DIR, a folder that holds the file, or fix the path."},
	outcome.MissingFile:      {meaning: "the file is not there", fix: "Add the file at the path, or fix the path (folders are separated by /, not \\)."},
	outcome.EmptyFile:        {meaning: "the file is empty", fix: "Copy the file again from where it came from: this copy has 0 bytes."},
	outcome.NotPDF:           {meaning: "the file is not a PDF", fix: "Put the PDF at the path (export or scan it again as PDF), or fix the path if it names another file."},
	outcome.TooLarge:         {meaning: "the file is larger than --max-bytes", fix: "Rerun with a larger --max-bytes if the file is genuine, or split or compress it."},
	outcome.TooManyPages:     {meaning: "more pages than --max-pages", fix: "Rerun with a larger --max-pages if the file is genuine, or split it."},
	outcome.PageTooLarge:     {meaning: "a page or image is larger than --max-page-pixels", fix: "Rerun with a larger --max-page-pixels, or rescan the pages at a lower resolution."},
	outcome.Encrypted:        {meaning: "the PDF is encrypted", fix: "Save a copy without the password or encryption, put it at the path, and give the row the copy's SHA-256 (sha256sum FILE), or empty the sha256 column: the copy's bytes are not the encrypted file's."},
	outcome.MalformedPDF:     {meaning: "the PDF is damaged and cannot be read", fix: "Re-export or rescan the document, or get a good copy from where it came from."},
	outcome.UnparseablePDF:   {meaning: "the PDF checks crashed, ran out of memory or took too long, twice: a damaged or hostile file", fix: "Treat the file as suspect and get a clean copy from where it came from; if it is merely huge, rerun with a larger --admit-memory or --admit-timeout."},
	outcome.Unreadable:       {meaning: "the file is there but cannot be read (permissions, I/O error, a symlink loop)", fix: "Make the file readable by the user running refbatch, or copy it again; a symlink loop (the detail says so) needs the link replaced by the file."},
	outcome.HashMismatch:     {meaning: "the file's bytes are not the ones the manifest's sha256 names", fix: "Put the right file at the path, or, if the file is right (a copy saved again, a decrypted one), give the row its SHA-256 (sha256sum FILE prints it)."},
	outcome.RejectedByPerson: {meaning: "a person looked at it in review and rejected it (refbatch review reject); who, when and why are in the journal and the report's decision", fix: "Nothing to fix: a person decided, and the decision's note says why."},
	outcome.Conflict:         {meaning: "an earlier row has the same source_id with other bytes", fix: "The earlier document is kept. If this one is another document, give it its own source_id in a new row; if it is the same referral rescanned, it needs no row."},
}

// decision is one way to decide a row in review: the `refbatch review`
// command (SOURCE_ID stands for the row's) and when to choose it.
type decision struct {
	Command string
	When    string
}

// reviewDecisions lists the `refbatch review` commands that may decide a
// row in review for reason: accept when there is text to accept, retry
// with the settings most likely to read it better, reject.
func reviewDecisions(reason outcome.Reason) []decision {
	e := explanations[reason]
	var out []decision
	if !e.noText {
		out = append(out, decision{"refbatch review accept --note TEXT SOURCE_ID", "the text is right as it is: the row becomes done"})
	}
	retry := "refbatch review retry SOURCE_ID"
	if e.retry != "" {
		retry = "refbatch review retry " + e.retry + " SOURCE_ID"
	}
	out = append(out,
		decision{retry, "read it again on the next run, attempts counted afresh"},
		decision{"refbatch review reject --note TEXT SOURCE_ID", "refuse it: the row becomes rejected"})
	return out
}

// Explain returns, on one line, what report.html says of reason: for a
// rejection what it means and how to fix it, for a review reason what a
// person should look at; "" for a reason it does not know. The log and the
// run's summary print it beside the reason code.
func Explain(reason outcome.Reason) string { return explain(reason, 0) }

// explain is Explain with the low band's threshold, 0 when unknown.
func explain(reason outcome.Reason, low float64) string {
	e := explanations[reason]
	switch {
	case e.action != "":
		return reviewAction(reason, low)
	case e.meaning != "":
		return sentence(e.meaning) + ". " + e.fix
	}
	return ""
}

// sentence starts s with a capital, unless its first word is a column's
// name (referral_date), which keeps its spelling.
func sentence(s string) string {
	first, _, _ := strings.Cut(s, " ")
	if s == "" || strings.Contains(first, "_") || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
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

// bombPixels is the size, in pixels at 300 dpi, from which a page or an
// image is no scan of a paper referral: an A4 page at 600 dpi is 35 Mpx,
// an A0 poster at 300 dpi 140 Mpx. A page over it is a decompression bomb
// or a generated file, and a larger --max-page-pixels would render it.
const bombPixels = 1e9

var (
	pageDetail  = regexp.MustCompile(`page \d+ is (\d+)×(\d+) pt`)
	imageDetail = regexp.MustCompile(`is (\d+)×(\d+) px`)
)

// Advice is the fix for a row rejected for reason with detail (the
// refusal's own words): the reason's fix, unless the detail shows that
// fix would not help. A decompression bomb is not fixed by a larger limit.
func Advice(reason outcome.Reason, detail string) string {
	if strings.Contains(detail, "decompression bomb") {
		return "A decompression bomb: the file unpacks to far more than any scan holds. Treat it as hostile, do not raise a limit for it, and get a clean copy from where it came from."
	}
	if reason == outcome.PageTooLarge {
		px := 0.0
		if m := pageDetail.FindStringSubmatch(detail); m != nil {
			w, _ := strconv.ParseFloat(m[1], 64)
			h, _ := strconv.ParseFloat(m[2], 64)
			px = (w / 72 * 300) * (h / 72 * 300)
		} else if m := imageDetail.FindStringSubmatch(detail); m != nil {
			w, _ := strconv.ParseFloat(m[1], 64)
			h, _ := strconv.ParseFloat(m[2], 64)
			px = w * h
		}
		if px >= bombPixels {
			return fmt.Sprintf("At 300 dpi this is %.1f gigapixels, which no scan of a paper referral comes near: a decompression bomb or a generated file. Do not raise --max-page-pixels (rendering it would take gigabytes); get a normal scan from the sender.", px/1e9)
		}
	}
	return explanations[reason].fix
}
