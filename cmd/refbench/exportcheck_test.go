package main

import (
	"testing"

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
