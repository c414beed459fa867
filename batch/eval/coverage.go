package eval

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// Coverage figures: how much of a page's text a reading covers. Tesseract
// binarises a page with one global threshold, so print lighter than it is
// lost before layout analysis while the words read keep high confidences;
// a section of two columns can be read across its columns; a stamp can
// take whole lines. A corpus marks such pages in its truth (faint_text,
// columns) and expects the documents either read or sent to review
// incomplete_text.

// FaintReadRecall is the share of its faint print's words a document must
// read for that print to count as read.
const FaintReadRecall = 0.8

// PageCoverage is what an artifact page says of its own coverage: the
// share of the page's text-like ink no recognised word covers, and the
// words a recovery pass added. Either is nil when the artifact does not
// record it (refbatch builds before the coverage measurement).
type PageCoverage struct {
	UncoveredShare *float64 `json:"uncovered_share,omitempty"`
	UncoveredFirst *float64 `json:"uncovered_share_first,omitempty"`
	RecoveredWords *int     `json:"recovered_words,omitempty"`
}

// Coverage holds the coverage figures of a run.
//
// Coverage documents are those whose truth has faint print or columns, or
// that expected.csv allows to end review incomplete_text: they are scored
// like the others but kept out of the text figures and the calibration,
// which measure ordinary reading, and counted here.
type Coverage struct {
	Documents int     `json:"documents"`
	MeanCER   float64 `json:"mean_cer"`
	// Bands counts the coverage documents per confidence band: text left
	// unread in a high band is the confidence lying.
	Bands map[outcome.Band]int `json:"bands"`

	// FaintDocuments have faint print in their truth. FaintRead read
	// FaintReadRecall or more of its words; FaintFlagged ended review
	// incomplete_text; FaintUnflagged ended done reading less: published
	// as complete with text missing, the failure the figures are for.
	FaintDocuments    int      `json:"faint_documents"`
	FaintRead         int      `json:"faint_read"`
	FaintFlagged      int      `json:"faint_flagged"`
	FaintUnflagged    int      `json:"faint_unflagged"`
	FaintUnflaggedIDs []string `json:"faint_unflagged_ids"`
	// FaintWords is every faint word over every faint document.
	FaintWords Recall `json:"faint_words"`

	// ColumnPages are the pages with two columns; their CER shows a
	// reading across the columns.
	ColumnPages     int     `json:"column_pages"`
	ColumnMeanCER   float64 `json:"column_mean_cer"`
	ColumnMaxCER    float64 `json:"column_max_cer"`
	ColumnMaxSource string  `json:"column_max_source_id,omitempty"`
	ColumnMaxPage   int     `json:"column_max_page,omitempty"`

	// CleanDocuments are the scored documents without faint print that
	// expected.csv does not allow to end incomplete; FalseAlarms of them
	// ended review incomplete_text.
	CleanDocuments int      `json:"clean_documents"`
	FalseAlarms    int      `json:"false_alarms"`
	FalseAlarmIDs  []string `json:"false_alarm_ids"`
}

// faintRecall counts the words of faint, the faint print of a page whose
// whole truth text is truth, that the page's OCR text ocr holds, words
// compared after Normalize, as multisets. A word counts as read only
// beyond the copies of it the rest of the page accounts for: "the" read
// five times on a page whose other text has it five times does not read
// a faint "the".
func faintRecall(ocr, truth, faint string) Recall {
	want := wordCounts(faint)
	rest := wordCounts(truth)
	for w, n := range want {
		rest[w] = max(0, rest[w]-n)
	}
	got := wordCounts(ocr)
	var rc Recall
	for w, n := range want {
		rc.Of += n
		rc.Found += min(n, max(0, got[w]-rest[w]))
	}
	if rc.Of > 0 {
		rc.Rate = float64(rc.Found) / float64(rc.Of)
	}
	return rc
}

func wordCounts(s string) map[string]int {
	m := map[string]int{}
	for _, w := range strings.Fields(s) {
		m[w]++
	}
	return m
}

// addRecall adds b's counts to a and recomputes the rate.
func addRecall(a *Recall, b Recall) {
	a.Found += b.Found
	a.Of += b.Of
	if a.Of > 0 {
		a.Rate = float64(a.Found) / float64(a.Of)
	}
}

// faint reports whether the document's truth has faint print.
func (d DocScore) faint() bool { return d.FaintWords != nil && d.FaintWords.Of > 0 }

// faintUnread reports whether the document read under FaintReadRecall of
// its faint print.
func (d DocScore) faintUnread() bool { return d.faint() && d.FaintWords.Rate < FaintReadRecall }

// flagged reports whether the document ended review incomplete_text.
func (d DocScore) flagged() bool {
	return d.Got == Outcome{State: outcome.Review, Reason: outcome.IncompleteText}
}

// clean reports whether the document must not be flagged incomplete: no
// faint print, and expected.csv does not allow review incomplete_text.
func (d DocScore) clean() bool { return !d.Doubted && !d.faint() && !d.incompleteAllowed }

// scoreCoverage gathers the coverage figures of the scored documents.
func scoreCoverage(docs []DocScore) *Coverage {
	c := &Coverage{Bands: map[outcome.Band]int{}, FaintUnflaggedIDs: []string{}, FalseAlarmIDs: []string{}}
	var columnSum float64
	for _, d := range docs {
		if d.Coverage {
			c.Documents++
			c.MeanCER += d.CER.Rate
			c.Bands[d.Band]++
		}
		if d.Doubted {
			continue
		}
		for _, p := range d.Pages {
			if !p.Columns {
				continue
			}
			c.ColumnPages++
			columnSum += p.CER.Rate
			if c.ColumnMaxSource == "" || p.CER.Rate > c.ColumnMaxCER {
				c.ColumnMaxCER, c.ColumnMaxSource, c.ColumnMaxPage = p.CER.Rate, d.SourceID, p.Page
			}
		}
		switch {
		case d.faint():
			c.FaintDocuments++
			addRecall(&c.FaintWords, *d.FaintWords)
			switch {
			case !d.faintUnread():
				c.FaintRead++
			case d.flagged():
				c.FaintFlagged++
			case d.Got.State == outcome.Done:
				c.FaintUnflagged++
				c.FaintUnflaggedIDs = append(c.FaintUnflaggedIDs, d.SourceID)
			}
		case d.clean():
			c.CleanDocuments++
			if d.flagged() {
				c.FalseAlarms++
				c.FalseAlarmIDs = append(c.FalseAlarmIDs, d.SourceID)
			}
		}
	}
	if c.Documents > 0 {
		c.MeanCER /= float64(c.Documents)
	}
	if c.ColumnPages > 0 {
		c.ColumnMeanCER = columnSum / float64(c.ColumnPages)
	}
	return c
}

// CoverageThreshold is the uncovered share from which a document should
// go to review incomplete_text, as the documents of a run suggest it
// (SuggestCoverage). A document is flagged when its largest page
// uncovered share is Threshold or more.
type CoverageThreshold struct {
	// Threshold is 0 when no document needs flagging (MustFlag is 0).
	Threshold float64 `json:"threshold"`
	// MustFlag counts the documents reading under FaintReadRecall of
	// their faint print, and those whose faint print was read only on the
	// second reading (Recovered of them, by their share before it: the
	// share they would have kept had that reading failed); Threshold
	// flags them all, and MustMin is the least share among them.
	MustFlag  int     `json:"must_flag"`
	Recovered int     `json:"recovered"`
	MustMin   float64 `json:"must_min"`
	// Clean counts the documents that must not be flagged (no faint
	// print, not expected incomplete), CleanFlagged those Threshold
	// flags all the same, and CleanMax is the largest share among them.
	Clean        int     `json:"clean"`
	CleanFlagged int     `json:"clean_flagged"`
	CleanMax     float64 `json:"clean_max"`
	// FaintRead counts the documents that read their faint print well
	// enough, FaintReadFlagged those Threshold flags needlessly.
	FaintRead        int `json:"faint_read"`
	FaintReadFlagged int `json:"faint_read_flagged"`
}

// SuggestCoverage derives the coverage threshold the read documents
// support, as Suggest does the confidence bands: the threshold that flags
// every document reading under FaintReadRecall of its faint print while
// flagging the fewest documents that must not be flagged. Of the
// thresholds that do, it takes the middle of the gap below the lowest
// document to flag (from the highest clean document under it, or 0),
// rounded, so that a document a little off either way still falls on its
// side. Doubted documents, documents not read, and
// documents allowed to end incomplete without faint print (stamps) are
// left out; so is every document when no page carries an uncovered share.
// ok is false then.
func SuggestCoverage(docs []DocScore) (s CoverageThreshold, ok bool) {
	var must, clean []float64
	for _, d := range docs {
		if !d.Read || d.Doubted || d.MaxUncoveredShare == nil {
			continue
		}
		v := *d.MaxUncoveredShare
		switch {
		case d.faintUnread():
			must = append(must, v)
		case d.faint():
			s.FaintRead++
			if d.RecoveredWords != nil && *d.RecoveredWords > 0 && d.MaxUncoveredFirst != nil && *d.MaxUncoveredFirst > v {
				must = append(must, *d.MaxUncoveredFirst)
				s.Recovered++
			}
		case d.clean():
			clean = append(clean, v)
		default:
			continue
		}
		ok = true
	}
	if !ok {
		return s, false
	}
	s.MustFlag, s.Clean = len(must), len(clean)
	if len(clean) > 0 {
		s.CleanMax = slices.Max(clean)
	}
	if len(must) > 0 {
		hi := slices.Min(must)
		s.MustMin = hi
		lo := 0.0
		for _, v := range clean {
			if v < hi {
				lo = max(lo, v)
			}
		}
		s.Threshold = roundBetween(lo, hi)
		for _, v := range clean {
			if v >= s.Threshold {
				s.CleanFlagged++
			}
		}
	}
	for _, d := range docs {
		if s.Threshold > 0 && d.Read && !d.Doubted && d.MaxUncoveredShare != nil && d.faint() && !d.faintUnread() && *d.MaxUncoveredShare >= s.Threshold {
			s.FaintReadFlagged++
		}
	}
	return s, true
}

// roundBetween returns the middle of lo and hi rounded to the fewest
// decimals that keep it within a quarter of the gap from the middle.
func roundBetween(lo, hi float64) float64 {
	mid, slack := (lo+hi)/2, (hi-lo)/4
	for prec := 1; prec <= 6; prec++ {
		p := math.Pow(10, float64(prec))
		if v := math.Round(mid*p) / p; math.Abs(v-mid) <= slack {
			return v
		}
	}
	return mid
}

// shareText formats an uncovered share.
func shareText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
