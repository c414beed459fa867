package batch

import (
	"strings"
	"unicode"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/ocr"
)

// Confidence bands.
const (
	BandHigh   = "high"
	BandMedium = "medium"
	BandLow    = "low"
)

// Review reasons set by validation (DESIGN.md §4).
const (
	ReasonEmptyText     = "empty_text"
	ReasonLowConfidence = "low_confidence"
	ReasonIDNotFound    = "id_not_found"
)

// minCredibleWords is how many credible words (recognised with at least
// the low-confidence threshold, with three or more letters or digits) a
// document needs to count as having text at all. Tesseract reads noise
// into pictures with no text: on lichtenstein.pdf, 453 words, three of them
// at 60 or more, all two letters long ("ih", "By", "ye"). The shortest real
// page of the shared corpus (kcs.pdf, a test scan) has four such words; a
// referral has dozens.
const minCredibleWords = 3

// verdict is validation's decision on a recognised document.
type verdict struct {
	state    journal.State
	reason   string
	meanConf float64
	band     string
}

// validate decides done or review. The checks run from the most to the
// least fundamental, and the first that fails names the reason: no text
// (fewer than minCredibleWords credible words), text the engine itself doubts, text that does not name the
// participant. Validation failures are never retried: the same bytes would
// read the same way.
func validate(pages []ocr.PageResult, participantID string, o Options) verdict {
	var words, credible int
	var sum float64
	for _, p := range pages {
		for _, w := range p.Words {
			words++
			sum += w.Conf
			if w.Conf >= o.LowConfidence && alnum(w.Text) >= 3 {
				credible++
			}
		}
	}
	v := verdict{state: journal.Done}
	if words > 0 {
		v.meanConf = sum / float64(words)
	}
	switch {
	case v.meanConf >= o.HighConfidence:
		v.band = BandHigh
	case v.meanConf >= o.LowConfidence:
		v.band = BandMedium
	default:
		v.band = BandLow
	}
	switch {
	case credible < minCredibleWords:
		v.state, v.reason, v.band = journal.Review, ReasonEmptyText, BandLow
	case v.band == BandLow:
		v.state, v.reason = journal.Review, ReasonLowConfidence
	case participantID != "" && !containsID(pages, participantID):
		v.state, v.reason = journal.Review, ReasonIDNotFound
	}
	return v
}

func alnum(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// containsID reports whether the participant ID appears in the text,
// compared without whitespace and case, and with every dash-like character
// read as a hyphen: OCR often splits "P-123456" as "P- 123456" or reads its
// hyphen as an em dash, and neither case nor the dash's width carries
// meaning in these IDs. No confusion that changes a letter or digit (O/0,
// l/1, S/5) is forgiven: a wrong ID must not pass.
func containsID(pages []ocr.PageResult, id string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case unicode.IsSpace(r):
				return -1
			case unicode.Is(unicode.Pd, r) || r == '\u2212' || r == '~':
				return '-'
			}
			return unicode.ToUpper(r)
		}, s)
	}
	want := norm(id)
	if want == "" {
		return true
	}
	for _, p := range pages {
		if strings.Contains(norm(p.Text), want) {
			return true
		}
	}
	return false
}
