package pdfcheck

// Phrase recall (issue 50's measure): whether a search for what was read
// finds it in a reader's text. A person searching an archive types a few
// words of a line; whether the reader put the page's lines in the
// artifact's order matters less than whether it kept each line's words
// together. So each reader is measured three ways on the same text:
// the share of the artifact's word trigrams it holds, the character
// error over the words sorted (every word there, whatever the order) and
// the character error in reading order.

import (
	"slices"
	"strings"

	"github.com/refbatch/refbatch/batch/eval"
	"github.com/refbatch/refbatch/ocr/result"
)

// The lines a reader must meet on every document.
const (
	// MinPhrases is the share of the artifact's trigrams a reader must
	// hold on upright pages; MinPhrasesTurned on turned or skewed ones.
	MinPhrases       = 0.99
	MinPhrasesTurned = 0.95
	// MaxSortedCER is the most character error over the words sorted.
	MaxSortedCER = 0.01
)

// Recall is how many of a set of phrases were found.
type Recall struct {
	Found int `json:"found"`
	Of    int `json:"of"`
}

// Rate is Found over Of, 1 with no phrase.
func (r Recall) Rate() float64 {
	if r.Of == 0 {
		return 1
	}
	return float64(r.Found) / float64(r.Of)
}

// Add adds o's counts to r.
func (r *Recall) Add(o Recall) { r.Found, r.Of = r.Found+o.Found, r.Of+o.Of }

// Figures are one reader's measures on a set of pages: the character
// error in reading order (CER), over the words sorted (Sorted), and the
// share of the artifact's phrases found (Phrases).
type Figures struct {
	CER     PageCER `json:"cer"`
	Sorted  PageCER `json:"sorted_cer"`
	Phrases Recall  `json:"phrases"`
}

// Add adds o's counts to f.
func (f *Figures) Add(o Figures) {
	f.CER.Add(o.CER)
	f.Sorted.Add(o.Sorted)
	f.Phrases.Add(o.Phrases)
}

// Measure is TextCER, the same over sorted words, and PhraseRecall on the
// texts a reader gave, one a page, against the OCR'd pages keep says yes
// to (nil: all).
func Measure(texts []string, pages []result.PageResult, keep func(int) bool) Figures {
	var f Figures
	eachOCRPage(texts, pages, keep, func(got, want string, given bool) {
		f.CER.count(eval.CER(got, want), given)
		f.Sorted.count(eval.CER(SortedWords(got), SortedWords(want)), given)
		f.Phrases.Add(PhraseRecall(got, want))
	})
	return f
}

// SortedWords is s's words sorted, a space apart: the text with its
// order taken out.
func SortedWords(s string) string {
	w := strings.Fields(s)
	slices.Sort(w)
	return strings.Join(w, " ")
}

// PhraseRecall counts the word trigrams of each line of want (three
// words in a row within a line) and those found in got, a reader's text
// of the page: as whole words in a row, with any white space between
// them, a line break after a hyphen taken as no break ("multi-\ntrack"
// is "multi-track"). A line of want that ends in a hyphen (a word
// broken over two lines) may run on into the next word in got, and its
// next line's first word may be that word's end; or the two halves may
// be one word without the hyphen, as poppler's default mode joins them
// ("wa-" and "ter" read "water").
func PhraseRecall(got, want string) Recall {
	text := " " + joinHyphens(got) + " "
	var r Recall
	lines := strings.Split(want, "\n")
	for i, line := range lines {
		ws := strings.Fields(line)
		// joined is the word this line's broken end makes with the next
		// line's start, and joinedFirst the one this line's start makes
		// with the previous line's end ("" where none is broken).
		joined, joinedFirst := brokenWord(lines, i), ""
		if i > 0 {
			joinedFirst = brokenWord(lines, i-1)
		}
		for k := 0; k+3 <= len(ws); k++ {
			r.Of++
			phrase := strings.Join(ws[k:k+3], " ")
			if strings.Contains(text, " "+phrase+" ") ||
				(k == 0 && strings.Contains(text, "-"+phrase+" ")) ||
				(k == 0 && joinedFirst != "" && strings.Contains(text, " "+joinedFirst+" "+strings.Join(ws[1:3], " ")+" ")) ||
				(k+3 == len(ws) && strings.HasSuffix(phrase, "-") && strings.Contains(text, " "+phrase)) ||
				(k+3 == len(ws) && joined != "" && strings.Contains(text, " "+strings.Join(ws[k:k+2], " ")+" "+joined+" ")) {
				r.Found++
			}
		}
	}
	return r
}

// brokenWord is the word line i of lines ends in a hyphen and the next
// line goes on with, the hyphen left out; "" when line i does not end in
// a hyphen or no line follows.
func brokenWord(lines []string, i int) string {
	ws := strings.Fields(lines[i])
	if len(ws) == 0 || i+1 >= len(lines) {
		return ""
	}
	last := ws[len(ws)-1]
	next := strings.Fields(lines[i+1])
	if len(last) < 2 || !strings.HasSuffix(last, "-") || len(next) == 0 {
		return ""
	}
	return strings.TrimSuffix(last, "-") + next[0]
}

// joinHyphens is s with its white space collapsed to single spaces, as
// eval.Normalize collapses it for the CER, and none after a hyphen that
// ends a line.
func joinHyphens(s string) string {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		line = eval.Normalize(line)
		if line == "" {
			continue
		}
		if i > 0 && b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte(' ')
		}
		b.WriteString(line)
	}
	return b.String()
}
