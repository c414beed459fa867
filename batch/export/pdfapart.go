package export

// Words kept apart: Tesseract's word boxes sometimes touch or overlap
// (a mark read as a word over the next word's start, a word's box
// reaching over its neighbour's ink), and readers that rebuild words
// from glyph positions join two words whose glyphs touch or overlap,
// whatever space character lies between them: poppler's default mode
// puts no space between words under 0.03 sizes apart, its -raw mode none
// under 0.15 sizes apart (and a line break where the next starts over
// 0.2 sizes back), pdf.js and PDFBox likewise by gaps of their own.

// rawSpace is the narrowest gap between two words' boxes, as a share of
// the font size, that keeps them apart in every reader: pdftotext -raw
// puts a space between two words only where the gap is over 0.15 sizes
// (its minWordSpacing), whatever space characters the layer draws.
const rawSpace = 0.17

// minShare is the least share of its box's width a word keeps where
// keepApart cuts two overlapping words apart.
const minShare = 0.2

// keepApart moves the ends of the words of a line, at the font size
// size, so that every word ends at least rawSpace sizes before its
// successor starts, each word still on its own box (its ink):
//
//   - a word that ends nearer its successor than that, or over its start
//     but not past its first quarter, is narrowed from its end;
//   - where the successor starts in the word's first quarter or before
//     it and reaches past its end, the stretch both boxes cover is cut
//     in the middle: the word ends rawSpace/2 sizes before the cut, its
//     successor starts as far after it, each keeping at least minShare
//     of its width;
//   - a successor lying within the word, or two words too narrow to
//     cut, leave the word at half its width (the rule before), the only
//     words still touching.
//
// Tesseract sometimes gives a word a box reaching over the next word's
// ink ("brought" over "it", "Page" over "2"), or reads a mark over a
// word's start as a word of its own ("re" over "raised"). Narrowed only
// part of the way, such a word is worse than left over the next:
// pdftotext -raw puts a line break between words that overlap, but
// nothing between words under 0.15 sizes apart. Left at half its width
// over a successor that starts in its first quarter, a word still
// overlapped it, and every reader joined the two ("reraised").
func keepApart(ws []lineWord, size float64) {
	gap := rawSpace * size
	for k := 0; k+1 < len(ws); k++ {
		w, next := &ws[k], &ws[k+1]
		need := next.start - gap - w.start
		end, nextEnd := w.start+w.width, next.start+next.width
		switch {
		case need >= w.width:
		case need >= w.width/4:
			w.width = need
		case nextEnd > end && cutApart(w, next, gap):
		default:
			w.width /= 2
		}
	}
}

// cutApart cuts the words w and next, next reaching past w's end, apart
// at the middle of the stretch both cover, gap apart, each keeping at
// least minShare of its width; false, and neither changed, where they
// cannot be.
func cutApart(w, next *lineWord, gap float64) bool {
	end, nextEnd := w.start+w.width, next.start+next.width
	lo, hi := w.start+minShare*w.width+gap/2, nextEnd-minShare*next.width-gap/2
	if lo > hi {
		return false
	}
	cut := min(max((max(w.start, next.start)+end)/2, lo), hi)
	w.width = cut - gap/2 - w.start
	next.start, next.width = cut+gap/2, nextEnd-cut-gap/2
	return true
}
