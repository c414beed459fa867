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
	"fmt"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/report"
)

// Band names of the calibration table, in display order. BandNone holds
// readable documents that have no band because they were never read.
const (
	BandHigh   = "high"
	BandMedium = "medium"
	BandLow    = "low"
	BandNone   = "none"
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
	// NoIDCheck is for corpora whose documents do not carry the
	// manifest's participant IDs (real-world files): a row in review only
	// for id_not_found is scored as done. Validation checks the ID last,
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
	// SuggestedCoverage is the coverage threshold this corpus calibrates
	// (see SuggestCoverage); nil when the artifacts record no uncovered
	// share.
	SuggestedCoverage *CoverageThreshold `json:"suggested_coverage,omitempty"`
}

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
	// Got is the report's outcome; state "missing" when the report has
	// fewer rows than expected.csv, and Want is empty when it has more.
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

// Text holds the text figures over the readable documents.
type Text struct {
	Documents int `json:"documents"`
	Pages     int `json:"pages"`
	// Unread counts readable documents with no artifact (scored empty).
	Unread  int       `json:"unread"`
	MeanCER float64   `json:"mean_cer"`
	P95CER  float64   `json:"p95_cer"`
	CER     ErrorRate `json:"cer_overall"`
	MeanWER float64   `json:"mean_wer"`
	WER     ErrorRate `json:"wer_overall"`
	// IDRecall and DateRecall: of the documents whose truth text holds
	// the field, how many OCR texts hold it too.
	IDRecall   Recall `json:"participant_id_recall"`
	DateRecall Recall `json:"referral_date_recall"`
	// Doubted counts the doubted documents and DoubtedCER is their mean
	// document CER.
	Doubted    int        `json:"doubted"`
	DoubtedCER float64    `json:"doubted_mean_cer"`
	Docs       []DocScore `json:"documents_detail"`
}

// Recall is Found of Of, and their ratio (0 when Of is 0).
type Recall struct {
	Found int     `json:"found"`
	Of    int     `json:"of"`
	Rate  float64 `json:"rate"`
}

func (r *Recall) count(present, found bool) {
	if !present {
		return
	}
	r.Of++
	if found {
		r.Found++
	}
	r.Rate = float64(r.Found) / float64(r.Of)
}

// DocScore is one readable document's figures. IDFound and DateFound are
// absent when its truth text does not hold the field.
type DocScore struct {
	SourceID   string  `json:"source_id"`
	Got        Outcome `json:"got"`
	Band       string  `json:"band"`
	Confidence float64 `json:"mean_confidence"`
	Read       bool    `json:"read"`
	// Doubted is set for a document expected only in review for its text
	// (see the package documentation): it counts in the calibration, not
	// in the text figures.
	Doubted bool `json:"doubted,omitempty"`
	// Coverage is set for a coverage document (see Coverage): it counts
	// in the coverage figures, not in the text figures or the calibration.
	Coverage  bool      `json:"coverage,omitempty"`
	CER       ErrorRate `json:"cer"`
	WER       ErrorRate `json:"wer"`
	IDFound   *bool     `json:"participant_id_found,omitempty"`
	DateFound *bool     `json:"referral_date_found,omitempty"`
	// FaintWords is the faint-print word recall over the document's
	// pages (faintRecall); absent when its truth has no faint print.
	FaintWords *Recall `json:"faint_words,omitempty"`
	// MaxUncoveredShare is the largest uncovered share of its pages and
	// RecoveredWords the words recovery added, when the artifacts record
	// them.
	MaxUncoveredShare *float64    `json:"max_uncovered_share,omitempty"`
	MaxUncoveredFirst *float64    `json:"max_uncovered_share_first,omitempty"`
	RecoveredWords    *int        `json:"recovered_words,omitempty"`
	Pages             []PageScore `json:"pages"`

	// incompleteAllowed: expected.csv allows review incomplete_text.
	incompleteAllowed bool
}

// PageScore is one page's error rates; Page counts from 1. Columns,
// FaintWords and the coverage fields are set as on DocScore.
type PageScore struct {
	Page           int       `json:"page"`
	CER            ErrorRate `json:"cer"`
	WER            ErrorRate `json:"wer"`
	Columns        bool      `json:"columns,omitempty"`
	FaintWords     *Recall   `json:"faint_words,omitempty"`
	UncoveredShare *float64  `json:"uncovered_share,omitempty"`
	UncoveredFirst *float64  `json:"uncovered_share_first,omitempty"`
	RecoveredWords *int      `json:"recovered_words,omitempty"`
}

// BandScore is one row of the calibration table.
type BandScore struct {
	Band           string   `json:"band"`
	Documents      int      `json:"documents"`
	Pages          int      `json:"pages"`
	MeanCER        float64  `json:"mean_cer"`
	MeanConfidence float64  `json:"mean_confidence"`
	SourceIDs      []string `json:"source_ids"`
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
	if s, ok := SuggestCoverage(text.Docs); ok {
		res.SuggestedCoverage = &s
	}
	return res, nil
}

func scoreOutcomes(expected []Expected, rows []report.Row, noIDCheck bool) Outcomes {
	o := Outcomes{Rows: max(len(expected), len(rows)), Detail: []RowOutcome{}}
	for i := 0; i < o.Rows; i++ {
		r := RowOutcome{Row: i + 1, Got: Outcome{State: "missing"}}
		var want *Expected
		if i < len(expected) {
			want = &expected[i]
			r.SourceID, r.Want = want.SourceID, want.String()
		}
		if i < len(rows) {
			row := rows[i]
			r.ManifestLine, r.Got = row.ManifestLine, Outcome{State: string(row.State), Reason: string(row.Reason)}
			if r.SourceID == "" {
				r.SourceID = row.SourceID
			}
		}
		scored := r.Got
		if noIDCheck && scored == (Outcome{State: "review", Reason: "id_not_found"}) {
			scored, r.ScoredAsDone = Outcome{State: "done"}, true
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

func scoreText(in Input, rows []report.Row) (*Text, error) {
	t := &Text{Docs: []DocScore{}}
	seen := map[string]bool{}
	var pageCER []float64
	var sumWER float64
	// A page without an uncovered share counts as fully covered once any
	// artifact records one: a build may leave the field out when it is 0.
	measured := false
	for _, pages := range in.Coverage {
		measured = measured || slices.ContainsFunc(pages, func(p PageCoverage) bool { return p.UncoveredShare != nil })
	}
	for i, e := range in.Expected {
		readable, doubted := e.readable(), e.doubted()
		if (!readable && !doubted) || seen[e.SourceID] {
			continue
		}
		seen[e.SourceID] = true
		truth := in.Truth[e.SourceID]
		if truth == nil {
			return nil, fmt.Errorf("no truth for %s, which is expected to be read (%s)", e.SourceID, e)
		}
		incomplete := e.Allows(Outcome{State: "review", Reason: IncompleteText})
		probe := incomplete || slices.ContainsFunc(truth.Pages, func(p TruthPage) bool { return p.Columns || strings.TrimSpace(p.FaintText) != "" })
		d := DocScore{SourceID: e.SourceID, Band: BandNone, Pages: []PageScore{}, Doubted: doubted, Coverage: probe && !doubted, incompleteAllowed: incomplete}
		var ocr []string
		var cov []PageCoverage
		if i < len(rows) && rows[i].SourceID == e.SourceID {
			row := rows[i]
			d.Got = Outcome{State: string(row.State), Reason: string(row.Reason)}
			if texts, ok := in.Texts[row.Artifact]; ok && row.Artifact != "" {
				ocr, d.Read = texts, true
				d.Band, d.Confidence = cmp.Or(string(row.Band), BandNone), row.MeanConfidence
				cov = in.Coverage[row.Artifact]
			}
		}
		if !d.Read && readable && !d.Coverage {
			t.Unread++
		}
		var docOCR, docTruth []string
		for p := 0; p < max(len(truth.Pages), len(ocr)); p++ {
			var h, r string
			if p < len(ocr) {
				h = ocr[p]
			}
			if p < len(truth.Pages) {
				r = truth.Pages[p].Text
			}
			ps := PageScore{Page: p + 1, CER: CER(h, r), WER: WER(h, r)}
			if p < len(truth.Pages) {
				tp := truth.Pages[p]
				ps.Columns = tp.Columns
				if strings.TrimSpace(tp.FaintText) != "" {
					rc := faintRecall(h, tp.Text, tp.FaintText)
					ps.FaintWords = &rc
					if d.FaintWords == nil {
						d.FaintWords = &Recall{}
					}
					addRecall(d.FaintWords, rc)
				}
			}
			if d.Read && measured {
				pc := PageCoverage{UncoveredShare: new(float64)}
				if p < len(cov) && cov[p].UncoveredShare != nil {
					pc = cov[p]
				}
				ps.UncoveredShare, ps.UncoveredFirst, ps.RecoveredWords = pc.UncoveredShare, pc.UncoveredFirst, pc.RecoveredWords
				if d.MaxUncoveredShare == nil || *pc.UncoveredShare > *d.MaxUncoveredShare {
					d.MaxUncoveredShare = pc.UncoveredShare
				}
				if pc.UncoveredFirst != nil && (d.MaxUncoveredFirst == nil || *pc.UncoveredFirst > *d.MaxUncoveredFirst) {
					d.MaxUncoveredFirst = pc.UncoveredFirst
				}
				if pc.RecoveredWords != nil {
					if d.RecoveredWords == nil {
						d.RecoveredWords = new(int)
					}
					*d.RecoveredWords += *pc.RecoveredWords
				}
			}
			d.Pages = append(d.Pages, ps)
			docOCR, docTruth = append(docOCR, h), append(docTruth, r)
			if doubted || d.Coverage {
				continue
			}
			pageCER = append(pageCER, ps.CER.Rate)
			sumWER += ps.WER.Rate
			t.CER.Distance += ps.CER.Distance
			t.CER.N += ps.CER.N
			t.WER.Distance += ps.WER.Distance
			t.WER.N += ps.WER.N
		}
		d.CER = sumRates(d.Pages, func(p PageScore) ErrorRate { return p.CER })
		d.WER = sumRates(d.Pages, func(p PageScore) ErrorRate { return p.WER })
		hay, src := Normalize(strings.Join(docOCR, " ")), Normalize(strings.Join(docTruth, " "))
		d.IDFound = field(truth.ParticipantID, src, hay)
		d.DateFound = field(truth.ReferralDate, src, hay)
		t.Docs = append(t.Docs, d)
		if doubted {
			t.Doubted++
			t.DoubtedCER += d.CER.Rate
			continue
		}
		if d.Coverage {
			continue
		}
		t.Documents++
		t.IDRecall.count(d.IDFound != nil, d.IDFound != nil && *d.IDFound)
		t.DateRecall.count(d.DateFound != nil, d.DateFound != nil && *d.DateFound)
	}
	if t.Doubted > 0 {
		t.DoubtedCER /= float64(t.Doubted)
	}
	t.Pages = len(pageCER)
	if t.Pages > 0 {
		var sum float64
		for _, c := range pageCER {
			sum += c
		}
		t.MeanCER = sum / float64(t.Pages)
		t.MeanWER = sumWER / float64(t.Pages)
		t.P95CER = report.NewQuantiles(pageCER).P95
	}
	if t.CER.N > 0 {
		t.CER.Rate = float64(t.CER.Distance) / float64(t.CER.N)
	}
	if t.WER.N > 0 {
		t.WER.Rate = float64(t.WER.Distance) / float64(t.WER.N)
	}
	return t, nil
}

// sumRates adds a document's page distances into one rate, with the empty
// reference convention of CER: a document whose pages are all blank scores
// 0 when read as blank.
func sumRates(pages []PageScore, of func(PageScore) ErrorRate) ErrorRate {
	var d, n, hyp int
	for _, p := range pages {
		e := of(p)
		d, n = d+e.Distance, n+e.N
		if e.N == 0 && e.Rate > 0 {
			hyp++
		}
	}
	return rate(d, n, hyp)
}

// field reports whether value, present in the truth text src, is found in
// the OCR text hay; nil when the truth does not hold it (nothing to recall).
func field(value, src, hay string) *bool {
	if value == "" || !strings.Contains(src, value) {
		return nil
	}
	found := strings.Contains(hay, value)
	return &found
}

func calibrate(docs []DocScore) []BandScore {
	bands := []BandScore{{Band: BandHigh}, {Band: BandMedium}, {Band: BandLow}, {Band: BandNone}}
	for _, d := range docs {
		i := slices.IndexFunc(bands, func(b BandScore) bool { return b.Band == d.Band })
		if i < 0 {
			i = len(bands) - 1 // a band this package does not know reads as none
		}
		b := &bands[i]
		b.Documents++
		b.Pages += len(d.Pages)
		b.MeanCER += d.CER.Rate
		b.MeanConfidence += d.Confidence
		b.SourceIDs = append(b.SourceIDs, d.SourceID)
	}
	out := bands[:0]
	for _, b := range bands {
		if b.Band == BandNone && b.Documents == 0 {
			continue
		}
		if b.Documents > 0 {
			b.MeanCER /= float64(b.Documents)
			b.MeanConfidence /= float64(b.Documents)
		} else {
			b.SourceIDs = []string{}
		}
		out = append(out, b)
	}
	return out
}
