// Package eval scores a finished refbatch batch against a corpus's ground
// truth, for `refbatch eval`: the quality gate CI replays. It is pure Go
// and never touches an engine; the caller runs or reads the batch and hands
// Score its report rows and the text of its artifacts.
//
// What it measures:
//
//   - Outcomes: every report row's state and reason against expected.csv,
//     row by row in manifest order (ReadExpected). A row may allow several
//     outcomes.
//   - Text, over the readable documents: those expected done, counted
//     once per source_id. Documents expected only in review with text that
//     validation doubts (low_confidence, id_not_found) are doubted: scored
//     the same way and shown beside, but kept out of the text figures,
//     since a corpus holds them to calibrate the confidence bands, not to
//     be read well. Each truth page is compared with the OCR
//     text of the same page. A readable document that was not read (no
//     artifact) scores as empty text on every page, so a regression that
//     stops reading documents raises the error rates instead of shrinking
//     their sample.
//   - CER per page: Levenshtein distance over Unicode code points after
//     whitespace normalisation (Normalize), over the truth's length (CER);
//     its mean and nearest-rank p95 over the pages, and the overall rate
//     (all distances over all truth characters).
//   - WER per page, the same over words (WER); its mean over the pages.
//   - Field recall: of the readable documents whose truth text contains the
//     participant ID (referral date), the share whose normalised OCR text
//     contains it exactly, as the same string.
//   - Calibration: per confidence band of the report rows (high, medium,
//     low; "none" for documents that were never read), over the readable
//     and the doubted documents, the
//     documents in it and their mean document CER (a document's distance
//     over its truth characters). A confidence that means anything has a
//     low CER in high and a higher one in low.
//   - Coverage (see Coverage): documents whose truth has faint print or
//     columns, or that expected.csv allows to end review incomplete_text,
//     are kept out of the text figures and the calibration, like doubted
//     ones, and measured apart: per document the faint-print word recall
//     (faintRecall), the documents done with their faint print unread,
//     the CER of column pages, and the documents without faint print sent
//     to review incomplete_text (false alarms). With the artifacts'
//     uncovered shares, SuggestCoverage derives the threshold they support.
//
// Check compares a Result with Thresholds (thresholds.json) and names every
// figure that regressed. Neither a Result nor its text rendering holds
// document text or participant IDs: only source IDs, counts and rates.
package eval

import (
	"cmp"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// Input is what Score compares.
type Input struct {
	// Expected is expected.csv, one entry per manifest row, in order.
	Expected []Expected
	// Rows are the report's rows; Score orders them by manifest line.
	Rows []report.Row
	// Truth enables the text figures; nil scores outcomes only.
	Truth map[string]*Truth
	// Texts holds the OCR text of every page of each artifact, keyed by
	// the artifact path the report rows name ("artifacts/...").
	Texts map[string][]string
	// Coverage holds what each artifact's pages say of their coverage,
	// keyed like Texts; nil or empty when no artifact records it.
	Coverage map[string][]PageCoverage
	// Reads holds how each artifact's pages were read, keyed like Texts;
	// nil or empty when no artifact says.
	Reads map[string][]PageRead
	// Words holds each artifact's pages' words, keyed like Texts, for
	// the cover confidence (SuggestCover); nil leaves it out.
	Words map[string][]PageWords
	// NoIDCheck is for corpora whose documents do not carry the
	// manifest's participant IDs (real-world files): a row in review only
	// for id_not_found or date_not_found is scored as done. Validation checks the ID last,
	// after the text and its confidence passed, so this is exactly the
	// outcome the run would have had without the ID check.
	NoIDCheck bool
}

// Result is everything Score measured.
type Result struct {
	NoIDCheck bool     `json:"no_id_check"`
	Outcomes  Outcomes `json:"outcomes"`
	// Text is nil when no truth was given.
	Text *Text `json:"text,omitempty"`
	// Calibration has one entry per band: high, medium, low, and none
	// when some readable document was not read. Empty without truth.
	Calibration []BandScore `json:"calibration"`
	// SuggestedBands are the band thresholds this corpus calibrates (see
	// Suggest); nil without truth or with too few documents read.
	SuggestedBands *Bands `json:"suggested_bands,omitempty"`
	// Coverage holds the coverage figures; nil without truth.
	Coverage *Coverage `json:"coverage,omitempty"`
	// Handwriting holds the handwriting figures; nil when no document's
	// truth has a note or a signature and none ended review handwriting.
	Handwriting *Handwriting `json:"handwriting,omitempty"`
	// SuggestedCoverage is the coverage threshold this corpus calibrates
	// (see SuggestCoverage); nil when the artifacts record no uncovered
	// share.
	SuggestedCoverage *CoverageThreshold `json:"suggested_coverage,omitempty"`
	// Cascade counts the pages read first under their resolution and
	// read again; nil when no page was. SuggestedCascade are the
	// thresholds a probe calibrates (see Probe).
	// SuggestedCover is the cover confidence this corpus calibrates (see
	// SuggestCover); nil when no artifact's words were given.
	SuggestedCover   *CoverCut          `json:"suggested_cover,omitempty"`
	Cascade          *Cascade           `json:"cascade,omitempty"`
	SuggestedCascade *CascadeThresholds `json:"suggested_cascade,omitempty"`
}

// stateMissing is the state Score gives a row expected.csv has and the
// report does not; it is no state of the vocabulary.
const stateMissing outcome.State = "missing"

// Outcomes compares the rows' outcomes with expected.csv.
type Outcomes struct {
	Rows       int          `json:"rows"`
	Matched    int          `json:"matched"`
	Mismatched int          `json:"mismatched"`
	Detail     []RowOutcome `json:"detail"`
}

// RowOutcome is one manifest row's outcome against its expectation.
type RowOutcome struct {
	// Row is the row's position (1-based) in expected.csv and the report.
	Row          int    `json:"row"`
	ManifestLine int    `json:"manifest_line,omitempty"`
	SourceID     string `json:"source_id"`
	// Got is the report's outcome; state "missing" (stateMissing) when
	// the report has fewer rows than expected.csv, and Want is empty when
	// it has more.
	Got  Outcome `json:"got"`
	Want string  `json:"want"`
	// ScoredAsDone is set when NoIDCheck scored review id_not_found as done.
	ScoredAsDone bool `json:"scored_as_done,omitempty"`
	Match        bool `json:"match"`
}

// Mismatches returns the rows whose outcome was not allowed.
func (o Outcomes) Mismatches() []RowOutcome {
	var out []RowOutcome
	for _, r := range o.Detail {
		if !r.Match {
			out = append(out, r)
		}
	}
	return out
}

// Score compares in's rows with its expectations and, with truth, its
// texts with the truth. It fails only on inputs it cannot score: a
// readable document with no truth.
func Score(in Input) (*Result, error) {
	rows := slices.Clone(in.Rows)
	slices.SortStableFunc(rows, func(a, b report.Row) int {
		return cmp.Or(strings.Compare(a.Manifest, b.Manifest), a.ManifestLine-b.ManifestLine)
	})
	res := &Result{NoIDCheck: in.NoIDCheck, Outcomes: scoreOutcomes(in.Expected, rows, in.NoIDCheck), Calibration: []BandScore{}}
	if in.Truth == nil {
		return res, nil
	}
	text, err := scoreText(in, rows)
	if err != nil {
		return nil, err
	}
	res.Text = text
	calibrated := slices.DeleteFunc(slices.Clone(text.Docs), func(d DocScore) bool { return d.Coverage })
	res.Calibration = calibrate(calibrated)
	if b, ok := Suggest(calibrated); ok {
		res.SuggestedBands = &b
	}
	res.Coverage = scoreCoverage(text.Docs)
	res.Handwriting = scoreHandwriting(in, text.Docs)
	if s, ok := SuggestCoverage(text.Docs); ok {
		res.SuggestedCoverage = &s
	}
	if c, ok := SuggestCover(coverWords(in, rows)); ok {
		res.SuggestedCover = &c
	}
	res.Cascade = scoreCascade(text.Docs)
	return res, nil
}

func scoreOutcomes(expected []Expected, rows []report.Row, noIDCheck bool) Outcomes {
	o := Outcomes{Rows: max(len(expected), len(rows)), Detail: []RowOutcome{}}
	for i := 0; i < o.Rows; i++ {
		r := RowOutcome{Row: i + 1, Got: Outcome{State: stateMissing}}
		var want *Expected
		if i < len(expected) {
			want = &expected[i]
			r.SourceID, r.Want = want.SourceID, want.String()
		}
		if i < len(rows) {
			row := rows[i]
			r.ManifestLine, r.Got = row.ManifestLine, Outcome{State: row.State, Reason: row.Reason}
			if r.SourceID == "" {
				r.SourceID = row.SourceID
			}
		}
		scored := r.Got
		if noIDCheck && scored.State == outcome.Review && (scored.Reason == outcome.IDNotFound || scored.Reason == outcome.DateNotFound) {
			scored, r.ScoredAsDone = Outcome{State: outcome.Done}, true
		}
		r.Match = want != nil && i < len(rows) && sameSource(want.SourceID, rows[i].SourceID) && want.Allows(scored)
		if r.Match {
			o.Matched++
		} else {
			o.Mismatched++
		}
		o.Detail = append(o.Detail, r)
	}
	return o
}

// sameSource compares source IDs, except that a row rejected for a missing
// field may have none.
func sameSource(want, got string) bool {
	return want == got || want == "" || got == ""
}
