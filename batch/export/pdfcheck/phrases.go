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
// next line's first word may be that word's end.
func PhraseRecall(got, want string) Recall {
	text := " " + joinHyphens(got) + " "
	var r Recall
	for _, line := range strings.Split(want, "\n") {
		ws := strings.Fields(line)
		for k := 0; k+3 <= len(ws); k++ {
			r.Of++
			phrase := strings.Join(ws[k:k+3], " ")
			if strings.Contains(text, " "+phrase+" ") ||
				(k == 0 && strings.Contains(text, "-"+phrase+" ")) ||
				(k+3 == len(ws) && strings.HasSuffix(phrase, "-") && strings.Contains(text, " "+phrase)) {
				r.Found++
			}
		}
	}
	return r
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
