package ocr

import "github.com/otiai10/gosseract/v2"

// replacement is a word read under the cut, at box, that the recovered
// word found[by] replaces.
type replacement struct {
	box [4]int
	by  int
}

// dropLoneShort drops the recovered words of fewer than shortRecovered
// letters and digits alone on their line, with no longer word recovered
// beside them: a stretched crop of noise or of a hand reads as a lone "A"
// or "be" at 80–90, which only made pages read worse (eval R-0062,
// R-0086), while faint print comes back as lines whose short words stand
// among longer ones. It returns the words kept, the replacements they
// make, and how many it dropped.
func dropLoneShort(found []gosseract.BoundingBox, replaced []replacement) ([]gosseract.BoundingBox, []replacement, int) {
	type line struct{ block, par, line int }
	long := map[line]bool{}
	for _, b := range found {
		if AlnumCount(b.Word) >= shortRecovered {
			long[line{b.BlockNum, b.ParNum, b.LineNum}] = true
		}
	}
	var kept []gosseract.BoundingBox
	index := make([]int, len(found)) // found's index to kept's, -1 when dropped
	for i, b := range found {
		index[i] = -1
		if AlnumCount(b.Word) >= shortRecovered || long[line{b.BlockNum, b.ParNum, b.LineNum}] {
			index[i] = len(kept)
			kept = append(kept, b)
		}
	}
	var still []replacement
	for _, r := range replaced {
		if index[r.by] >= 0 {
			still = append(still, replacement{box: r.box, by: index[r.by]})
		}
	}
	return kept, still, len(found) - len(kept)
}
