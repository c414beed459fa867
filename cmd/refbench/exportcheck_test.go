package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch/export/pdfcheck"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr/result"
)

// TestCheckedPages: export-check expects a page's transcriptions after
// its text, as the searchable PDF sets them, and only those it can place.
func TestCheckedPages(t *testing.T) {
	t.Parallel()
	a := &layout.Artifact{
		Pages: []result.PageResult{{DPI: 150, Text: "Dear Dr"}, {DPI: 150}, {Text: "layer"}},
		Transcriptions: []layout.Transcription{
			{Page: 0, Box: [4]int{1, 1, 9, 9}, Text: " Seen  by\n\nDr Hand "},
			{Page: 1, Box: [4]int{1, 1, 9, 9}, Text: "signed"},
			{Page: 2, Box: [4]int{1, 1, 9, 9}, Text: "no resolution"},
			{Page: 0, Text: "no box"},
		},
	}
	got := checkedPages(a)
	for i, want := range []string{"Dear Dr\n\nSeen by\nDr Hand", "signed", "layer"} {
		if got[i].Text != want {
			t.Errorf("page %d: %q, want %q", i+1, got[i].Text, want)
		}
	}
	if a.Pages[0].Text != "Dear Dr" {
		t.Error("checkedPages changed the artifact's pages")
	}
}

// TestReaderProblems: a reader misses a document's line when it finds
// too few phrases on either kind of page or loses words in any order.
func TestReaderProblems(t *testing.T) {
	t.Parallel()
	fig := func(found, of, dist, n int) pdfcheck.Figures {
		return pdfcheck.Figures{Phrases: pdfcheck.Recall{Found: found, Of: of}, Sorted: pdfcheck.PageCER{Distance: dist, N: n}}
	}
	for _, c := range []struct {
		name string
		figs [2]pdfcheck.Figures
		want []string
	}{
		{"all found", [2]pdfcheck.Figures{fig(100, 100, 0, 500), fig(95, 100, 0, 500)}, nil},
		{"no pages of a kind", [2]pdfcheck.Figures{fig(0, 0, 0, 0), fig(100, 100, 5, 500)}, nil},
		{"upright under 0.99", [2]pdfcheck.Figures{fig(98, 100, 0, 500), {}}, []string{"r finds 0.9800 of the phrases on upright pages, want at least 0.99"}},
		{"turned under 0.95", [2]pdfcheck.Figures{{}, fig(94, 100, 0, 500)}, []string{"r finds 0.9400 of the phrases on turned or skewed pages, want at least 0.95"}},
		{"words lost over both kinds", [2]pdfcheck.Figures{fig(1, 1, 3, 100), fig(1, 1, 8, 900)}, []string{"r CER over sorted words 0.0110, want at most 0.01"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := readerProblems("r", c.figs); !slices.Equal(got, c.want) {
				t.Errorf("readerProblems = %q, want %q", got, c.want)
			}
		})
	}
}

// TestWriteReaderSummary: the summary gives each reader's least and
// median phrase recall over documents and how many miss each line.
func TestWriteReaderSummary(t *testing.T) {
	t.Parallel()
	doc := func(up, turned, dist int) *docCheck {
		return &docCheck{Readers: map[string][2]pdfcheck.Figures{pdfcheck.ReaderMutool: {
			{Phrases: pdfcheck.Recall{Found: up, Of: 100}, Sorted: pdfcheck.PageCER{Distance: dist, N: 100}},
			{Phrases: pdfcheck.Recall{Found: turned, Of: 100}},
		}}}
	}
	var b strings.Builder
	writeReaderSummary(&b, []*docCheck{doc(100, 90, 0), doc(98, 96, 2), doc(99, 100, 0)})
	want := "mutool          0.9800 / 0.9900 (1 of 3) | 0.9000 / 0.9600 (1 of 3); 0.0200 (1)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary:\n%s\nwant a line %q", b.String(), want)
	}
	if !strings.Contains(b.String(), "pdfbox          n/a\n") {
		t.Errorf("summary:\n%s\nwant pdfbox n/a", b.String())
	}
}
