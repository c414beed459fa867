package ocr

import (
	"strings"
	"unicode"
)

// The text-layer rule; see "Text layers" in the package documentation.
// The thresholds come from comparing the layers and readings of the real
// corpus with each other: a layer against a reading of its own page agreed
// 0.99–1.00 on text pages and 0.42 on graph_ocred.pdf's chart, whose layer
// is OCRmyPDF's poor reading of it; a layer against an unrelated page
// agreed 0.02–0.25 (0.02–0.08 against the chart), with a coverage of
// 0.00–0.25.
const (
	// minLayerWords is how many distinct words of two or more letters or
	// digits a page's text layer needs to count as text at all; fewer is
	// treated as no layer (a stray page number, a form field's label).
	minLayerWords = 3
	// minLayerAgreement is the share of the layer's words that a reading
	// of the page must also hold for the layer to be believed, and
	// minLayerCoverage the share of the reading's credible words that the
	// layer must hold. The first rejects a layer whose text
	// is not what the page shows; the second a layer covering only part
	// of the page (a fax header stamped as text on a scanned letter).
	minLayerAgreement = 0.6
	minLayerCoverage  = 0.6
	// minDoubtfulLayerAgreement replaces both when the reading itself is
	// doubtful (fewer than half its words credible: a chart, a
	// picture, a poor scan). Its credible words are then too few and too
	// often wrong to hold the layer to, and reading the page again would
	// do no better than the layer; a layer that has nothing to do with
	// the page still fails.
	minDoubtfulLayerAgreement = 0.3
	// sampleShare is the share of a page's inked rows that the sample
	// reading checking a layer recognises: Tesseract's time follows the
	// amount of text rather than the pixels (a whole page at 150 dpi
	// takes 75% of the time at 300 dpi), so a cheap check reads less text,
	// not fewer pixels. minSampleWords is how many distinct credible words
	// the sample needs to decide; maxLayerWordRatio bounds the layer's
	// word count against the page's as the sample estimates it.
	sampleShare       = 0.25
	minSampleWords    = 10
	maxLayerWordRatio = 2
	// maxLayerBytes bounds the text layer a page may have and still be
	// considered: 256 KiB, over ten times the densest page of 6 pt print
	// (about 20 KB). A layer believed becomes the page's words, one
	// record each in the worker's answer; a 36 KB file whose layer claims
	// 10 MB of a few words repeated, drawn on the page, was believed and
	// its answer, over the size the parent accepts, killed the worker.
	maxLayerBytes = 256 << 10
)

// textLayer is a page's own text, as MuPDF extracts it.
type textLayer struct {
	text    string // lines of words joined by single spaces
	words   []string
	keys    map[string]bool // the words' match keys
	counted int             // words with a match key
}

// parseLayer tidies MuPDF's text for a page: words separated by single
// spaces, lines by a newline, runs of blank lines by one blank line. ok is
// false when the layer holds fewer than minLayerWords words worth reading.
func parseLayer(s string) (textLayer, bool) {
	var l textLayer
	l.keys = map[string]bool{}
	var sb strings.Builder
	blank := false
	for line := range strings.Lines(s) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			blank = sb.Len() > 0
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
			if blank {
				sb.WriteByte('\n')
			}
		}
		blank = false
		sb.WriteString(strings.Join(fields, " "))
		l.words = append(l.words, fields...)
		for _, f := range fields {
			if k := matchKey(f); k != "" {
				l.keys[k] = true
				l.counted++
			}
		}
	}
	l.text = sb.String()
	return l, len(l.keys) >= minLayerWords
}

// matchKey is the form in which a word of a layer and a word of a
// recognition are compared: its letters and digits, lower-cased, so that
// punctuation and case, which OCR and text layers render differently, do
// not count. Words of fewer than two letters or digits give "" and are not
// compared: single characters match by chance.
func matchKey(w string) string {
	var b strings.Builder
	n := 0
	for _, r := range w {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
			n++
		}
	}
	if n < 2 {
		return ""
	}
	return b.String()
}

// compare measures how well the layer matches a recognition of the page.
// agreement is the share of the layer's distinct words that the
// recognition also read, at any confidence; coverage is the share of the
// recognition's distinct credible words that the layer holds, 1 when it
// has none. Words match when their keys are equal or nearly so (see
// nearKey), because two readings of one scan differ by a character here
// and there.
func (l textLayer) compare(words []Word) (agreement, coverage float64) {
	if len(l.keys) == 0 {
		return 0, 0
	}
	read := map[string]bool{}
	credible := map[string]bool{}
	for _, w := range words {
		k := matchKey(w.Text)
		if k == "" {
			continue
		}
		read[k] = true
		if w.Conf >= credibleConf {
			credible[k] = true
		}
	}
	agreement = share(l.keys, read)
	if len(credible) == 0 {
		return agreement, 1
	}
	return agreement, share(credible, l.keys)
}

// share returns the share of the keys of a that b holds, or nearly holds.
func share(a, b map[string]bool) float64 {
	if len(a) == 0 {
		return 0
	}
	// Group b by length once: a near match differs in length by at most
	// the edits nearKey allows.
	byLen := map[int][]string{}
	for k := range b {
		byLen[len(k)] = append(byLen[len(k)], k)
	}
	found := 0
	for k := range a {
		if b[k] {
			found++
			continue
		}
		edits := maxEdits(len(k))
		if edits == 0 {
			continue
		}
	search:
		for n := len(k) - edits; n <= len(k)+edits; n++ {
			for _, c := range byLen[n] {
				if nearKey(k, c) {
					found++
					break search
				}
			}
		}
	}
	return float64(found) / float64(len(a))
}

// maxEdits is how many single-character edits two keys of about n
// characters may differ by and still match: none below 4 characters, where
// one edit makes another common word, then one per 4 characters.
func maxEdits(n int) int {
	if n < 4 {
		return 0
	}
	return n / 4
}

// nearKey reports whether keys a and b are within maxEdits of the shorter's
// length of each other (Levenshtein distance).
func nearKey(a, b string) bool {
	limit := maxEdits(min(len(a), len(b)))
	if limit == 0 {
		return a == b
	}
	if d := len(a) - len(b); d > limit || -d > limit {
		return false
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
			best = min(best, cur[j])
		}
		if best > limit {
			return false
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)] <= limit
}

// trustedBySample applies the layer rule against a reading q of a sample
// of the page holding the share sampled of its inked rows (see
// grayImage.sample). decided is false when the sample cannot decide: its
// reading is doubtful or holds fewer than minSampleWords distinct credible
// words. Otherwise ok says whether the layer is believed, and conf is the
// confidence its words then carry, 100 times the coverage.
func (l textLayer) trustedBySample(q recognition, sampled float64) (conf float64, ok, decided bool) {
	if q.doubtful() || sampled <= 0 {
		return 0, false, false
	}
	read := 0
	credible := map[string]bool{}
	for _, w := range q.words {
		k := matchKey(w.Text)
		if k == "" {
			continue
		}
		read++
		if w.Conf >= credibleConf {
			credible[k] = true
		}
	}
	if len(credible) < minSampleWords {
		return 0, false, false
	}
	coverage := share(credible, l.keys)
	// The layer should hold about as many words as the page shows, which
	// the sample estimates; a layer with a hidden page of text besides the
	// visible one holds twice as many.
	ratio := float64(l.counted) / (float64(read) / sampled)
	if coverage < minLayerCoverage || ratio < 1/maxLayerWordRatio || ratio > maxLayerWordRatio {
		return 0, false, true
	}
	return 100 * coverage, true, true
}

// trusted applies the layer rule against a reading q of the whole page:
// whether the layer is believed, and the confidence its words then carry,
// 100 times the lower of agreement and coverage, or of agreement alone
// when q is doubtful.
func (l textLayer) trusted(q recognition) (conf float64, ok bool) {
	agreement, coverage := l.compare(q.words)
	match := agreement
	if q.doubtful() {
		ok = agreement >= minDoubtfulLayerAgreement
	} else {
		ok = agreement >= minLayerAgreement && coverage >= minLayerCoverage
		match = min(agreement, coverage)
	}
	if !ok {
		return 0, false
	}
	return 100 * match, true
}

// result fills res with the layer's words, each with confidence conf and
// no box (MuPDF's plain text extraction gives none).
func (l textLayer) result(res *PageResult, conf float64) {
	res.Words = make([]Word, len(l.words))
	for i, w := range l.words {
		res.Words[i] = Word{Text: w, Conf: conf}
	}
	res.Text = l.text
	res.MeanConf = 0
	if len(l.words) > 0 {
		res.MeanConf = conf
	}
	res.TextSource = TextFromLayer
}
