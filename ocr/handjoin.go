package ocr

// Lines into regions: lines of one ink close together are one region,
// but a row of letters and a pen's strokes under it are two.

// join adds line l to the region it is less than a line's height from,
// or makes it a region of its own. A row of letters and a pen's strokes
// far taller than them, one above the other, are two regions: a note
// written above a signature in the same pen.
func (look *handLook) join(regions *[]handRegion, l handLine, ft handFeatures) {
	f := look.f
	b := [4]int{l.box[0] * f, l.box[1] * f, l.box[2] * f, l.box[3] * f}
	h := b[3] - b[1]
	for k, r := range *regions {
		a := r.box
		if r.lines[0].ink != l.ink {
			continue // another ink: another hand, a stamp
		}
		if r.apart(l, ft) {
			continue
		}
		if b[1]-a[3] <= h && a[1]-b[3] <= h && b[0]-a[2] <= 2*h && a[0]-b[2] <= 2*h {
			r.box = union4(a, b)
			r.lines, r.feats = append(r.lines, l), append(r.feats, ft)
			(*regions)[k] = r
			return
		}
	}
	*regions = append(*regions, handRegion{box: b, lines: []handLine{l}, feats: []handFeatures{ft}})
}

// apart reports whether line l, of features ft, is a row of letters and
// a line of r strokes apart from it, or the other way round (see
// rowAndStrokes).
func (r handRegion) apart(l handLine, ft handFeatures) bool {
	for i, m := range r.lines {
		if rowAndStrokes(l, ft, m, r.feats[i]) {
			return true
		}
	}
	return false
}

// rowAndStrokes reports whether lines a and b, of features fa and fb,
// are a row of letters and a pen's strokes apart from it: one of them
// eight separate glyphs or more, the other three pieces or fewer over
// twice their height, and neither reaching into the other's height.
func rowAndStrokes(a handLine, fa handFeatures, b handLine, fb handFeatures) bool {
	if a.box[3] > b.box[1] && b.box[3] > a.box[1] {
		return false
	}
	row := func(l handLine, ft handFeatures) bool { return len(l.comps) >= 8 && ft.joined < 0.2 }
	strokes := func(l handLine, ft handFeatures, other handFeatures) bool {
		return len(l.comps) <= 3 && ft.median >= 2*other.median
	}
	return row(a, fa) && strokes(b, fb, fa) || row(b, fb) && strokes(a, fa, fb)
}

// crossing returns the strokes of the regions of another ink than region
// k's, on the reduced page: a red stroke through a line of black print
// leaves the words under it unread, and they are print crossed out, not
// a hand's words (see note).
func crossing(regions []handRegion, k int) [][4]int {
	var out [][4]int
	for i, o := range regions {
		if i == k || o.lines[0].ink == regions[k].lines[0].ink {
			continue
		}
		for _, l := range o.lines {
			out = append(out, l.comps...)
		}
	}
	return out
}
