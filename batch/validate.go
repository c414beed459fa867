package batch

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report/outcome"
)

// highBandUnread is the most of a page's print that may be left unread in
// a document of the high band: the band promises under 2% of characters
// misread, and an unread character is a missed one.
const highBandUnread = 0.02

// minCredibleWords is how many credible words (recognised with at least
// credibleWordConf, with three or more letters or digits) a
// document needs to count as having text at all. Tesseract reads noise
// into pictures with no text: on lichtenstein.pdf, 453 words, three of them
// at 60 or more, all two letters long ("ih", "By", "ye"). The shortest real
// page of the shared corpus (kcs.pdf, a test scan) has four such words; a
// referral has dozens.
const minCredibleWords = 3

// credibleWordConf is the confidence from which a word is credible. It is
// a word's, not a document's: the low band's threshold is calibrated on
// documents' mean confidence, and a document of 77 holds many words of 60
// that are right.
const credibleWordConf = ocr.CredibleConf

// verdict is validation's decision on a recognised document.
type verdict struct {
	state    outcome.State
	reason   outcome.Reason
	meanConf float64
	band     outcome.Band
	// detail says what exactly a review verdict found, and pages the
	// pages (from 1) it names: the pages of a handwritten note not
	// transcribed; whether the letter prints other IDs or dates than the
	// manifest's (counted, never quoted). "" and nil for other verdicts.
	detail string
	pages  []int
}

// validate decides done or review. The checks run from the most to the
// least fundamental, and the first that fails names the reason: no text
// (fewer than minCredibleWords credible words), text the engine itself
// doubts, a page whose text-like ink is left unread over
// Options.CoverageThreshold even after it was read again
// (incomplete_text: what is missing may be anything, the ID included),
// a handwritten note not read credibly (handwriting, checked before
// incomplete_text: the note is the more specific),
// text that does not hold the manifest's participant ID or its referral
// date (both id_not_found; see containsID and containsDate). An empty
// participantID or referralDate skips that field's check, which is how
// --no-id-check switches both off. A document with unread text is never
// in the high band, however sure the words it has are. Validation
// failures are never retried: the same bytes would read the same way.
func validate(pages []ocr.PageResult, participantID, referralDate string, o Options) verdict {
	// The document's confidence is its words' confidences weighted by
	// their characters: an estimate of how many characters are right,
	// which is what the bands are calibrated against (CER). Per word, the
	// zero-confidence junk Tesseract reads into a margin's specks and
	// dashes ("7:", "-") weighs as much as a word of ten letters, and a
	// short page of good text falls into review.
	var chars, credible int
	var sum float64
	for _, p := range pages {
		for _, w := range p.Words {
			n := w.Chars()
			chars += n
			sum += w.Conf * float64(n)
			if w.Conf >= credibleWordConf && ocr.AlnumCount(w.Text) >= 3 {
				credible++
			}
		}
	}
	v := verdict{state: outcome.Done}
	if chars > 0 {
		v.meanConf = sum / float64(chars)
	}
	switch {
	case v.meanConf >= o.HighConfidence:
		v.band = outcome.BandHigh
	case v.meanConf >= o.LowConfidence:
		v.band = outcome.BandMedium
	default:
		v.band = outcome.BandLow
	}
	// Unread print is error the words' confidences do not see: a document
	// with more of a page unread than the high band's promise of 2% of
	// characters misread cannot be in it, however sure its words are.
	hand := unreadHand(pages)
	if v.band == outcome.BandHigh && !o.NoCoverage && (maxUncovered(pages) > highBandUnread || len(hand) > 0) {
		v.band = outcome.BandMedium
	}
	switch {
	case credible < minCredibleWords:
		v.state, v.reason, v.band = outcome.Review, outcome.EmptyText, outcome.BandLow
	case v.band == outcome.BandLow:
		v.state, v.reason = outcome.Review, outcome.LowConfidence
	case !o.NoCoverage && len(hand) > 0:
		v.state, v.reason = outcome.Review, outcome.Handwriting
		v.detail, v.pages = handwritingDetail(hand), hand
	case !o.NoCoverage && maxUncovered(pages) > o.CoverageThreshold:
		v.state, v.reason = outcome.Review, outcome.IncompleteText
		if v.band == outcome.BandHigh {
			v.band = outcome.BandMedium
		}
	case participantID != "" && !containsID(pages, participantID):
		v.state, v.reason = outcome.Review, outcome.IDNotFound
		v.detail = idDetail(pages, participantID)
	case referralDate != "" && !containsDate(pages, referralDate):
		v.state, v.reason = outcome.Review, outcome.DateNotFound
		v.detail = dateDetail(pages)
	}
	return v
}

// unreadHand is the pages (from 1, in order) with a handwritten note not
// read credibly, nil when none has one. A signature, a stamp or a mark
// needs no person, read or not.
func unreadHand(pages []ocr.PageResult) []int {
	var out []int
	for i, p := range pages {
		for _, r := range p.HandwritingRegions {
			if !r.Read && r.IsNote() {
				out = append(out, i+1)
				break
			}
		}
	}
	return out
}

// handwritingDetail is the detail of a review handwriting verdict: which
// pages hold the note a person must read in the scan. It names pages
// only, never the note's words (they were not read credibly, and would be
// document text) nor the document.
func handwritingDetail(pages []int) string {
	if len(pages) == 1 {
		return fmt.Sprintf("a handwritten note on page %d was not transcribed: read it in the scan", pages[0])
	}
	return "handwritten notes on pages " + andList(pages) + " were not transcribed: read them in the scan"
}

// andList writes numbers as a person would list them: "2 and 4",
// "1, 2 and 5".
func andList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// maxUncovered is the largest unread share of any page.
func maxUncovered(pages []ocr.PageResult) float64 {
	m := 0.0
	for _, p := range pages {
		m = max(m, p.UncoveredShare)
	}
	return m
}

// containsID reports whether the participant ID appears in the text,
// compared without whitespace and case, and with every dash-like character
// read as a hyphen: OCR often splits "P-123456" as "P- 123456" or reads its
// hyphen as an em dash, and neither case nor the dash's width carries
// meaning in these IDs. No confusion that changes a letter or digit (O/0,
// l/1, S/5) is forgiven: a wrong ID must not pass.
func containsID(pages []ocr.PageResult, id string) bool {
	norm := func(s string) string { return strings.Map(foldRune, s) }
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

// foldRune is the comparison both field checks share: whitespace dropped
// (-1), every dash-like character read as '-', letters upper-cased.
func foldRune(r rune) rune {
	switch {
	case unicode.IsSpace(r):
		return -1
	case unicode.Is(unicode.Pd, r) || r == '\u2212' || r == '~':
		return '-'
	}
	return unicode.ToUpper(r)
}

// containsDate reports whether the referral date (YYYY-MM-DD, as the
// manifest holds it) is written in the text in one of the forms referrals
// use, compared like the participant ID: without whitespace or case, every
// dash-like character read as '-'. For 2024-03-07 the forms are:
//
//   - ISO: 2024-03-07
//   - numeric, day first or month first (a document does not say which, so
//     both are accepted), day and month each with or without a leading
//     zero, one separator '/', '.' or '-' used twice: 07/03/2024, 7.3.2024,
//     03/07/2024, 3-7-2024
//   - day, month name, year: 7 March 2024, 07 Mar 2024, 7th March 2024
//   - month name, day, year: March 7, 2024, Mar 7th 2024
//
// Month names are English, in full or as their first three letters (the
// abbreviation may end in '.'); the comma after the day is optional, and
// so is an ordinal suffix (st, nd, rd or th, which is not checked against
// the day: it carries no date). Years have four digits.
//
// The date must stand on its own: it may not continue a number or a word
// of the text, so 2024-03-07 is not found in 12024-03-079 and 7/3/2024 is
// not found in 17/3/2024. White space in the text is a boundary even
// though it is ignored inside the date. No confusion that changes a letter
// or digit is forgiven (O/0, l/1, a wrong day or month): a wrong date must
// not pass. A date that is not a valid YYYY-MM-DD is never found.
func containsDate(pages []ocr.PageResult, date string) bool {
	forms := dateForms(date)
	if len(forms) == 0 {
		return false
	}
	for _, p := range pages {
		t := foldText(p.Text)
		for _, f := range forms {
			if t.containsWord(f) {
				return true
			}
		}
	}
	return false
}

// dateForms returns every accepted spelling of date, folded by foldRune,
// or nil when date is not a valid YYYY-MM-DD.
func dateForms(date string) []string {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return nil
	}
	y, day, mon := d.Year(), d.Day(), int(d.Month())
	pad := func(n int) []string {
		if n < 10 {
			return []string{fmt.Sprint(n), fmt.Sprintf("%02d", n)}
		}
		return []string{fmt.Sprint(n)}
	}
	seen := map[string]bool{}
	var forms []string
	add := func(f string) {
		f = strings.Map(foldRune, f)
		if !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	add(d.Format(time.DateOnly))
	for _, sep := range []string{"/", ".", "-"} {
		for _, dd := range pad(day) {
			for _, mm := range pad(mon) {
				add(fmt.Sprintf("%s%s%s%s%d", dd, sep, mm, sep, y))
				add(fmt.Sprintf("%s%s%s%s%d", mm, sep, dd, sep, y))
			}
		}
	}
	full := d.Month().String()
	names := []string{full, full[:3], full[:3] + "."}
	for _, dd := range pad(day) {
		for _, ord := range []string{"", "st", "nd", "rd", "th"} {
			for _, name := range names {
				add(fmt.Sprintf("%s%s%s%d", dd, ord, name, y))
				add(fmt.Sprintf("%s%s%s%d", name, dd, ord, y))
				add(fmt.Sprintf("%s%s%s,%d", name, dd, ord, y))
			}
		}
	}
	return forms
}

// foldedText is a page's text folded by foldRune, remembering where white
// space was dropped so that it can still end a word.
type foldedText struct {
	runes []rune
	gap   []bool // gap[i]: white space (or the start) comes before runes[i]
}

func foldText(s string) foldedText {
	var t foldedText
	space := true
	for _, r := range s {
		f := foldRune(r)
		if f < 0 {
			space = true
			continue
		}
		t.runes = append(t.runes, f)
		t.gap = append(t.gap, space)
		space = false
	}
	return t
}

// containsWord reports whether want occurs in t without continuing a run
// of digits or of letters on either side.
func (t foldedText) containsWord(want string) bool {
	w := []rune(want)
	if len(w) == 0 {
		return false
	}
	for i := 0; i+len(w) <= len(t.runes); i++ {
		if !equalRunes(t.runes[i:i+len(w)], w) {
			continue
		}
		j := i + len(w)
		startOK := t.gap[i] || !sameKind(t.runes[i-1], t.runes[i])
		endOK := j == len(t.runes) || t.gap[j] || !sameKind(t.runes[j-1], t.runes[j])
		if startOK && endOK {
			return true
		}
	}
	return false
}

func equalRunes(a, b []rune) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameKind reports whether a and b would read as one number or one word.
func sameKind(a, b rune) bool {
	return unicode.IsDigit(a) && unicode.IsDigit(b) || unicode.IsLetter(a) && unicode.IsLetter(b)
}
