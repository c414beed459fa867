package eval

import (
	"strings"
	"unicode/utf8"

	"github.com/refbatch/refbatch/report"
)

// PageWords is what an artifact page holds of its words for the cover
// confidence's calibration: each word's text and confidence.
type PageWords struct {
	Words []WordRead `json:"words"`
}

// WordRead is one recognised word of an artifact page.
type WordRead struct {
	Text string  `json:"text"`
	Conf float64 `json:"conf"`
}

// CoverCut is the cover confidence a corpus calibrates (SuggestCover):
// the least confidence of a word whose ink counts as read.
type CoverCut struct {
	Conf float64 `json:"conf"`
	// RightChars and WrongChars are the characters of the read words
	// that are (are not) words of their page's truth; RightUnder is the
	// share of the right ones under Conf, WrongAbove the share of the
	// wrong ones at or above it.
	RightChars int     `json:"right_chars"`
	WrongChars int     `json:"wrong_chars"`
	RightUnder float64 `json:"right_under"`
	WrongAbove float64 `json:"wrong_above"`
}

// scoredWord is a read word, its weight in characters and whether its
// page's truth has it.
type scoredWord struct {
	conf  float64
	chars int
	right bool
}

// pageWords sorts the words read on a page into right (a word of the
// page's truth, each truth word matched once) and wrong.
func pageWords(read []WordRead, truth string) []scoredWord {
	want := map[string]int{}
	for _, w := range strings.Fields(truth) {
		want[w]++
	}
	out := make([]scoredWord, 0, len(read))
	for _, w := range read {
		t := strings.TrimSpace(w.Text)
		if t == "" {
			continue
		}
		right := want[t] > 0
		if right {
			want[t]--
		}
		out = append(out, scoredWord{conf: w.Conf, chars: utf8.RuneCountInString(t), right: right})
	}
	return out
}

// SuggestCover derives the cover confidence from the words read on the
// corpus's pages: the whole confidence that best separates the words
// misread (under it) from the words read right (at or above it), counted
// in characters, as a document's confidence is: the fewest characters on
// the wrong side, and of equals the lowest, since every right word under
// it leaves read ink unread. ok is false without words.
func SuggestCover(words []scoredWord) (c CoverCut, ok bool) {
	for _, w := range words {
		if w.right {
			c.RightChars += w.chars
		} else {
			c.WrongChars += w.chars
		}
	}
	if c.RightChars+c.WrongChars == 0 {
		return c, false
	}
	best, under, above := -1, 0, 0
	for t := 0.0; t <= 100; t++ {
		ru, wa := 0, 0
		for _, w := range words {
			switch {
			case w.right && w.conf < t:
				ru += w.chars
			case !w.right && w.conf >= t:
				wa += w.chars
			}
		}
		if best < 0 || ru+wa < best {
			best, c.Conf, under, above = ru+wa, t, ru, wa
		}
	}
	if c.RightChars > 0 {
		c.RightUnder = float64(under) / float64(c.RightChars)
	}
	if c.WrongChars > 0 {
		c.WrongAbove = float64(above) / float64(c.WrongChars)
	}
	return c, true
}

// coverWords scores against their truth the words of the pages of every
// document read that has truth, once per source ID.
func coverWords(in Input, rows []report.Row) []scoredWord {
	var out []scoredWord
	seen := map[string]bool{}
	for i, e := range in.Expected {
		if i >= len(rows) || rows[i].SourceID != e.SourceID || rows[i].Artifact == "" || seen[e.SourceID] {
			continue
		}
		truth := in.Truth[e.SourceID]
		if truth == nil {
			continue
		}
		seen[e.SourceID] = true
		for p, pw := range in.Words[rows[i].Artifact] {
			if p < len(truth.Pages) {
				out = append(out, pageWords(pw.Words, truth.Pages[p].Text)...)
			}
		}
	}
	return out
}
