package ocr

import (
	"slices"
	"testing"

	"github.com/otiai10/gosseract/v2"
)

// TestDropLoneShort: a recovered word of one or two letters alone on its
// line goes, with the replacement it made; short words among longer ones
// on their line stay, and the replacements follow the words kept.
func TestDropLoneShort(t *testing.T) {
	t.Parallel()
	w := func(word string, block, line int) gosseract.BoundingBox {
		return gosseract.BoundingBox{Word: word, BlockNum: block, LineNum: line, Confidence: 90}
	}
	found := []gosseract.BoundingBox{
		w("A", recoveredBlock, 1),             // alone: junk read into a hand
		w("of", recoveredBlock+1000, 1),       // among longer words: kept
		w("referral", recoveredBlock+1000, 1), // long
		w("be", recoveredBlock+1000, 2),       // alone on its line
	}
	replaced := []replacement{{box: [4]int{1, 1, 2, 2}, by: 0}, {box: [4]int{3, 3, 4, 4}, by: 2}}
	kept, still, dropped := dropLoneShort(found, replaced)
	var words []string
	for _, b := range kept {
		words = append(words, b.Word)
	}
	if !slices.Equal(words, []string{"of", "referral"}) || dropped != 2 {
		t.Errorf("kept %q, dropped %d; want [of referral], 2", words, dropped)
	}
	if len(still) != 1 || still[0].box != [4]int{3, 3, 4, 4} || kept[still[0].by].Word != "referral" {
		t.Errorf("replacements %+v; want the one made by referral", still)
	}
}
