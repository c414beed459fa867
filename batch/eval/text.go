package eval

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file scores the text of the readable documents (see the package
// documentation): per page, per document and over the corpus.

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
	SourceID   string       `json:"source_id"`
	Got        Outcome      `json:"got"`
	Band       outcome.Band `json:"band"`
	Confidence float64      `json:"mean_confidence"`
	Read       bool         `json:"read"`
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
	// NoteWords is the recall of the words of the document's handwritten
	// note, as FaintWords; absent when its truth has no note.
	NoteWords *Recall `json:"note_words,omitempty"`
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
	// Read is how the page was read, when the artifact says.
	Read *PageRead `json:"read,omitempty"`
}

func scoreText(in Input, rows []report.Row) (*Text, error) {
	t := &Text{Docs: []DocScore{}}
	seen := map[string]bool{}
	var pageCER []float64
	var sumWER float64
	// A page without an uncovered share counts as fully covered once any
	// artifact records one: a build may leave the field out when it is 0.
	measured := slices.ContainsFunc(slices.Collect(maps.Values(in.Coverage)), func(pages []PageCoverage) bool {
		return slices.ContainsFunc(pages, func(p PageCoverage) bool { return p.UncoveredShare != nil })
	})
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
		incomplete := e.Allows(Outcome{State: outcome.Review, Reason: outcome.IncompleteText})
		probe := incomplete || slices.ContainsFunc(truth.Pages, func(p TruthPage) bool {
			return p.Columns || strings.TrimSpace(p.FaintText) != "" || strings.TrimSpace(p.HandwritingText) != ""
		})
		d := DocScore{SourceID: e.SourceID, Band: BandNone, Pages: []PageScore{}, Doubted: doubted, Coverage: probe && !doubted, incompleteAllowed: incomplete}
		var ocr []string
		var cov []PageCoverage
		var reads []PageRead
		if i < len(rows) && rows[i].SourceID == e.SourceID {
			row := rows[i]
			d.Got = Outcome{State: row.State, Reason: row.Reason}
			if texts, ok := in.Texts[row.Artifact]; ok && row.Artifact != "" {
				ocr, d.Read = texts, true
				d.Band, d.Confidence = cmp.Or(row.Band, BandNone), row.MeanConfidence
				cov = in.Coverage[row.Artifact]
				reads = in.Reads[row.Artifact]
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
			if p < len(reads) && d.Read {
				ps.Read = &reads[p]
			}
			if p < len(truth.Pages) {
				d.scoreTruthPage(&ps, h, truth.Pages[p])
			}
			if d.Read && measured {
				d.addCoverage(&ps, cov, p)
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
	t.total(pageCER, sumWER)
	return t, nil
}

// addCoverage records page p's coverage in ps and adds it to d's: a page
// the artifact records no share for counts as fully covered.
func (d *DocScore) addCoverage(ps *PageScore, cov []PageCoverage, p int) {
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

// total turns t's sums into its figures: means, the 95th percentile of the
// pages' CER, the overall rates.
func (t *Text) total(pageCER []float64, sumWER float64) {
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

// scoreTruthPage scores what the truth of page ps marks apart: its
// columns, its faint print and its handwritten note, against h, the
// page's reading.
func (d *DocScore) scoreTruthPage(ps *PageScore, h string, tp TruthPage) {
	ps.Columns = tp.Columns
	if strings.TrimSpace(tp.FaintText) != "" {
		rc := faintRecall(h, tp.Text, tp.FaintText)
		ps.FaintWords = &rc
		if d.FaintWords == nil {
			d.FaintWords = &Recall{}
		}
		addRecall(d.FaintWords, rc)
	}
	if strings.TrimSpace(tp.HandwritingText) != "" {
		rc := faintRecall(h, tp.Text, tp.HandwritingText)
		if d.NoteWords == nil {
			d.NoteWords = &Recall{}
		}
		addRecall(d.NoteWords, rc)
	}
}
