package ocr

import (
	"slices"

	"github.com/otiai10/gosseract/v2"
)

// handBlock numbers the blocks of words read in handwritten regions,
// after recovery's.
const handBlock = 1 << 24

// readHandwriting finds the handwritten regions of the prepared page p,
// whose reading is r, and reads each line of them not yet read credibly
// again alone, its contrast stretched. Words read at handConf or more join
// the reading; the words under it in the region, junk read into a hand,
// leave it. It returns the reading and the regions, each read when
// credible words cover every line of it.
func (e *engine) readHandwriting(p *prepared, r recognition) (recognition, []HandwritingRegion, error) {
	look := handsIn(p.inkLook(&e.inks))
	regions := look.findHandwriting(credibleWords(r.words, handConf))
	if len(regions) == 0 {
		return r, nil, nil
	}
	read := credibleWords(r.words, handConf)
	var found []gosseract.BoundingBox
	for k, reg := range regions {
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
				if AlnumCount(box.Word) == 0 || box.Confidence < handConf {
					continue
				}
				box.Box = box.Box.Add(origin)
				wb := [4]int{box.Box.Min.X, box.Box.Min.Y, box.Box.Max.X, box.Box.Max.Y}
				if len(samePlace(wb, read)) > 0 {
					continue
				}
				box.BlockNum += handBlock + 1000*k
				found = append(found, box)
				read = append(read, Word{Text: box.Word, Conf: box.Confidence, Box: wb})
			}
		}
	}
	// Junk read into the regions leaves the reading.
	inside := func(b gosseract.BoundingBox) bool {
		cx, cy := (b.Box.Min.X+b.Box.Max.X)/2, (b.Box.Min.Y+b.Box.Max.Y)/2
		for _, reg := range regions {
			if cx >= reg.box[0] && cx < reg.box[2] && cy >= reg.box[1] && cy < reg.box[3] {
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

// verdicts returns the regions as recorded: each read when credible
// words cover handReadLine of every line's ink.
func (look *handLook) verdicts(regions []handRegion, credible []Word) []HandwritingRegion {
	cover := credibleCover(credible, look.f, look.small.w, look.small.h, look.buf.blank(look.small.w*look.small.h))
	out := make([]HandwritingRegion, 0, len(regions))
	for _, reg := range regions {
		hr := HandwritingRegion{Box: reg.box, Read: true}
		for _, l := range reg.lines {
			ink, covered := 0, 0
			for k, b := range l.comps {
				ink += l.inks[k]
				covered += look.coveredInk(b, cover)
			}
			if float64(covered) < handReadLine*float64(ink) {
				hr.Read = false
			}
		}
		for _, w := range credible {
			cx, cy := (w.Box[0]+w.Box[2])/2, (w.Box[1]+w.Box[3])/2
			if cx >= reg.box[0] && cx < reg.box[2] && cy >= reg.box[1] && cy < reg.box[3] {
				hr.Words++
			}
		}
		out = append(out, hr)
	}
	return out
}
