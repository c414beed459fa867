package ocr

import (
	"slices"

	"github.com/otiai10/gosseract/v2"
)

// handBlock numbers the blocks of words read in handwritten regions,
// after recovery's.
const handBlock = 1 << 24

// handReadWords is the least share of a note's words, read at any
// confidence, that must be read right, as far as their confidences
// tell, for the note to be read: a note of which four words in five are
// read is read, as a person searching it would find.
const handReadWords = 0.8

// handReadInk is the least share of a region's ink its credible words
// must cover for it to be read when some line of it is not covered
// (a flourish, a crossing stroke, a loop under the line).
const handReadInk = 0.75

// handSureConf is the confidence from which a word read in a hand is
// taken as right; a credible word under it counts as handMaybe of one.
// Tesseract's confidence means less on a hand than on print: on the
// notes measured (capitals in three hands, the eval and holdout
// corpora's cursive notes), 94–98% of the words read at 90 or more
// were right, and 57–79% of those read at 75 to 89. Counted as right,
// those sent notes read at two words in three to nobody.
const (
	handSureConf = 90
	handMaybe    = 0.6
)

// readHandwriting finds the handwritten regions of the prepared page p,
// whose reading is r, and reads each line of its notes not yet read
// credibly again alone, its contrast stretched. Words read at handConf or
// more join the reading; the words under it in a note or a signature,
// junk read into a hand, leave it. It returns the reading and every
// region with its kind, each read or not (see verdicts).
func (e *engine) readHandwriting(p *prepared, r recognition) (recognition, []HandwritingRegion, error) {
	look := handsIn(p.inkLook(&e.inks), p.colour(&e.hue))
	regions := look.findHandwriting(r.words)
	if len(regions) == 0 {
		return r, nil, nil
	}
	read := credibleWords(r.words, handConf)
	var found []gosseract.BoundingBox
	for k, reg := range regions {
		if reg.kind != KindNote {
			continue
		}
		for i, l := range reg.lines {
			if reg.feats[i].covered >= handReadLine {
				continue
			}
			f := look.f
			b := [4]int{l.box[0] * f, l.box[1] * f, l.box[2] * f, l.box[3] * f}
			crop, origin, ok := recoveryCrop(p.img, unreadBlock{box: b}, read, p.paper)
			if !ok {
				continue
			}
			q, err := e.recognise(crop, p.dpi)
			if err != nil {
				return r, nil, err
			}
			for _, box := range q.boxes {
				if AlnumCount(box.Word) == 0 {
					continue
				}
				box.Box = box.Box.Add(origin)
				wb := [4]int{box.Box.Min.X, box.Box.Min.Y, box.Box.Max.X, box.Box.Max.Y}
				if len(samePlace(wb, read)) > 0 {
					continue
				}
				if box.Confidence < handConf {
					regions[k].junk = append(regions[k].junk, wb)
					continue
				}
				box.BlockNum += handBlock + 1000*k
				found = append(found, box)
				read = append(read, Word{Text: box.Word, Conf: box.Confidence, Box: wb})
			}
		}
	}
	if len(found) > 0 {
		look.lookAgain(regions, r.words, read)
	}
	// Junk read into a note or a signature leaves the reading; what was
	// read under a stamp or a mark may be print, and stays.
	inside := func(b gosseract.BoundingBox) bool {
		cx, cy := (b.Box.Min.X+b.Box.Max.X)/2, (b.Box.Min.Y+b.Box.Max.Y)/2
		for k, reg := range regions {
			if (reg.kind == KindNote || reg.kind == KindSignature) && cx >= reg.box[0] && cx < reg.box[2] && cy >= reg.box[1] && cy < reg.box[3] {
				if AlnumCount(b.Word) > 0 {
					regions[k].junk = append(regions[k].junk, [4]int{b.Box.Min.X, b.Box.Min.Y, b.Box.Max.X, b.Box.Max.Y})
				}
				return true
			}
		}
		return false
	}
	page := slices.DeleteFunc(slices.Clone(r.boxes), func(b gosseract.BoundingBox) bool {
		return b.Confidence < handConf && inside(b)
	})
	if len(found) > 0 || len(page) < len(r.boxes) {
		slices.SortStableFunc(found, func(a, b gosseract.BoundingBox) int { return a.BlockNum - b.BlockNum })
		merged := mergeReading(page, found)
		out := recognition{boxes: merged, confirmed: r.confirmed}
		out.words, out.text, out.mean = assemble(merged)
		r = out
	}
	return r, look.verdicts(regions, credibleWords(r.words, handConf)), nil
}

// verdicts returns the regions as recorded, each with its kind, and read
// when its words are read: those read credibly count as read, each as
// one or as handMaybe by its confidence (see handSureConf), and must be
// handReadWords or more of the words read in it at any confidence (its
// junk not read again credibly counted once a place); and they cover
// handReadLine of every line's ink, or handReadInk of all of it.
func (look *handLook) verdicts(regions []handRegion, credible []Word) []HandwritingRegion {
	cover := credibleCover(credible, look.f, look.small.w, look.small.h, look.buf.blank(look.small.w*look.small.h))
	out := make([]HandwritingRegion, 0, len(regions))
	for _, reg := range regions {
		hr := HandwritingRegion{Box: reg.box, Kind: reg.kind}
		all, under, lines := 0, 0, true
		for _, l := range reg.lines {
			ink, covered := look.lineInk(l, cover)
			all, under = all+ink, under+covered
			lines = lines && float64(covered) >= handReadLine*float64(ink)
		}
		right := 0.0
		for _, w := range credible {
			cx, cy := (w.Box[0]+w.Box[2])/2, (w.Box[1]+w.Box[3])/2
			if cx >= reg.box[0] && cx < reg.box[2] && cy >= reg.box[1] && cy < reg.box[3] {
				hr.Words++
				right += handMaybe
				if w.Conf >= handSureConf {
					right += 1 - handMaybe
				}
			}
		}
		// Junk not read again credibly, each place once: the page's
		// reading and the line's again often both leave junk there.
		var junk []Word
		for _, jb := range reg.junk {
			if len(samePlace(jb, credible)) == 0 && len(samePlace(jb, junk)) == 0 {
				junk = append(junk, Word{Box: jb})
			}
		}
		inked := lines || float64(under) >= handReadInk*float64(all)
		hr.Read = hr.Words >= 1 && inked && right >= handReadWords*float64(hr.Words+len(junk))
		out = append(out, hr)
	}
	return out
}

// lookAgain looks at the notes of regions again with the words their
// lines read again (read: the page's credible words, those included)
// added to the page's words: a "Signed:" label, a valediction or a
// printed name a signature ran into is read once the line is read alone,
// and tells a signature. Nothing else changes a note's kind: what was read of it is
// for verdicts to judge.
func (look *handLook) lookAgain(regions []handRegion, words, read []Word) {
	all := slices.Concat(words, read[len(credibleWords(words, handConf)):])
	cover := credibleCover(credibleWords(all, handConf), look.f, look.small.w, look.small.h, look.buf.blank(look.small.w*look.small.h))
	look.printed = nil
	defer func() { look.printed = nil }()
	for k, r := range regions {
		if r.kind != KindNote {
			continue
		}
		var others [][4]int
		for i, o := range regions {
			if i != k && !o.stamp {
				others = append(others, o.box)
			}
		}
		// The words read again cover the note too: only the sign-off's
		// print it was read with, or the printed name under it, can change
		// what the region is.
		lines := look.printLines(all)
		if r.rows > 1 {
			// One row only once its other rows were read: they are a
			// note, and print under it no signer's name.
			lines = slices.DeleteFunc(slices.Clone(lines), func(l printLine) bool { signOff, _, _ := l.signs(); return !signOff })
		}
		if rows, _ := look.rows(r, cover); rows <= 1 && signedOff(r.box, others, lines, look.wdpi*float64(look.f), look.small.h*look.f, true) {
			regions[k].kind = KindSignature
		}
	}
}
