package ocr

import (
	"strings"
	"unicode"
)

// Credible words: only they account for ink.
//
// Tesseract reads something into nearly any ink: a hand it cannot read, a
// scribble, print under heavy noise. Those words come with low
// confidences, and counting the ink under them as read would pass a page
// whose note nobody read. So the coverage measurement counts ink as read
// only under words whose confidence is the policy's CoverConfidence or
// more (credibleWords), and recovery keeps a word it reads only when it
// meets the same cut and does not repeat a word already read where it
// lies (repeats). A credible repeat of a word read under the cut confirms
// it: the word stays as read, and its ink counts as read. Any other word
// at the place of a word already read is a repeat too, whatever it reads
// (replacing a word of the page's own reading would change the
// confidence the page is judged by), but for junk read under the cut into
// a stamp, several lines tall, over print: a credible word replaces it.

// credibleWords returns the words whose confidence is cut or more.
func credibleWords(words []Word, cut float64) []Word {
	out := make([]Word, 0, len(words))
	for _, w := range words {
		if w.Conf >= cut {
			out = append(out, w)
		}
	}
	return out
}

// minRepeatOverlap is, in percent of the smaller box, how much a
// recovered word's box must share with a word already read for the two
// to be at the same place.
const minRepeatOverlap = 30

// repeats returns the index of the word already read that the recovered
// word text, at box b in page pixels, repeats, or -1: the same letters and digits
// (case aside), or a part of them, at the same place (boxes overlapping
// by minRepeatOverlap of the smaller). Recovery reads a block with the
// words already read painted over, but a word's box can miss part of its
// ink, or a noisy crop give it back whole, and then it would be read
// twice.
func repeats(text string, b [4]int, read []Word) int {
	key := wordKey(text)
	if key == "" {
		return -1
	}
	area := (b[2] - b[0]) * (b[3] - b[1])
	for i, r := range read {
		rb := r.Box
		x0, y0, x1, y1 := max(b[0], rb[0]), max(b[1], rb[1]), min(b[2], rb[2]), min(b[3], rb[3])
		if x0 >= x1 || y0 >= y1 {
			continue
		}
		smaller := min(area, (rb[2]-rb[0])*(rb[3]-rb[1]))
		if 100*(x1-x0)*(y1-y0) < minRepeatOverlap*smaller {
			continue
		}
		if rk := wordKey(r.Text); rk != "" && strings.Contains(rk, key) {
			return i
		}
	}
	return -1
}

// samePlace returns the indexes of the words already read whose boxes
// share minRepeatOverlap of the smaller box with b.
func samePlace(b [4]int, read []Word) []int {
	var out []int
	area := (b[2] - b[0]) * (b[3] - b[1])
	for i, r := range read {
		rb := r.Box
		x0, y0, x1, y1 := max(b[0], rb[0]), max(b[1], rb[1]), min(b[2], rb[2]), min(b[3], rb[3])
		if x0 >= x1 || y0 >= y1 {
			continue
		}
		if 100*(x1-x0)*(y1-y0) >= minRepeatOverlap*min(area, (rb[2]-rb[0])*(rb[3]-rb[1])) {
			out = append(out, i)
		}
	}
	return out
}

// wordKey is a word's letters and digits, in lower case.
func wordKey(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			sb.WriteRune(unicode.ToLower(r))
		}
	}
	return sb.String()
}
