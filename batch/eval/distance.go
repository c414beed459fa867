package eval

import "strings"

// Distance returns the Levenshtein distance between a and b: the fewest
// insertions, deletions and substitutions of one element that turn a into
// b. It takes O(len(a)·len(b)) time and O(min(len(a), len(b))) memory: it
// keeps one row of the table, as long as the shorter sequence.
func Distance[T comparable](a, b []T) int {
	// A common prefix and suffix cost nothing; OCR of a good page shares
	// long runs with its truth, so trimming them first is cheap and often
	// large.
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	if len(a) < len(b) {
		a, b = b, a // the distance is symmetric; the row spans the shorter
	}
	if len(b) == 0 {
		return len(a)
	}
	// row[j] holds the distance between a[:i] and b[:j] for the current i.
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0] // the distance between a[:i-1] and b[:j-1]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			up := row[j]
			sub := diag
			if a[i-1] != b[j-1] {
				sub++
			}
			row[j] = min(up+1, row[j-1]+1, sub)
			diag = up
		}
	}
	return row[len(b)]
}

// Normalize collapses every run of white space (Unicode's, form feeds and
// line breaks included) to one space and trims both ends: OCR's line
// breaks and spacing are layout, not text.
func Normalize(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// ErrorRate is an edit distance against a reference of N units (code points
// for a character error rate, words for a word error rate).
type ErrorRate struct {
	Distance int     `json:"distance"`
	N        int     `json:"n"`
	Rate     float64 `json:"rate"`
}

// rate is Distance/N, defined for an empty reference too: 0 when the
// hypothesis is empty as well (a blank page read as blank), else 1. A rate
// can exceed 1 when the hypothesis is much longer than the reference.
func rate(distance, n, hypothesis int) ErrorRate {
	r := ErrorRate{Distance: distance, N: n}
	switch {
	case n > 0:
		r.Rate = float64(distance) / float64(n)
	case hypothesis > 0:
		r.Rate = 1
	}
	return r
}

// CER is the character error rate of the OCR text ocr against the truth:
// the Levenshtein distance over Unicode code points, after Normalize, over
// the truth's length in code points. No other normalisation is done: a
// precomposed "é" and "e" with a combining accent differ, as they would
// in a search.
func CER(ocr, truth string) ErrorRate {
	h, r := []rune(Normalize(ocr)), []rune(Normalize(truth))
	return rate(Distance(h, r), len(r), len(h))
}

// WER is the word error rate of ocr against truth: the Levenshtein distance
// over words (runs of non-space), over the truth's word count.
func WER(ocr, truth string) ErrorRate {
	h, r := strings.Fields(ocr), strings.Fields(truth)
	return rate(Distance(h, r), len(r), len(h))
}
