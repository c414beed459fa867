package ocr

import (
	"cmp"
	"math"
	"slices"
)

// A stamp's lettering: inside a frame, or capitals on straight, turned
// lines (see kindOf).

// stamped reports whether region r is a stamp's lettering: three
// quarters of its components a frame or inside one, or three quarters of
// its glyphs on lines of capitals of one size, straight and turned.
func (look *handLook) stamped(r handRegion) bool {
	inFrame, all := 0, 0
	for _, l := range r.lines {
		for _, c := range l.comps {
			all++
			if look.framed(c) {
				inFrame++
			}
		}
	}
	if 4*inFrame >= 3*all {
		return true
	}
	straight, glyphs := 0, 0
	for _, row := range stampRows(r) {
		if len(row) < stampGlyphs {
			continue
		}
		glyphs += len(row)
		if wander, even, angle := centreLine(row); wander <= stampWander && even && math.Abs(angle) >= stampTurn {
			straight += len(row)
		}
	}
	return glyphs > 0 && 4*straight >= 3*glyphs || turnedChains(r.lines)
}

// turnedChains reports whether lines, as chained, hold a stamp's rows
// turned over level print: two lines or more of stampGlyphs glyphs or
// more, each capitals of one size on a straight line turned stampTurn
// degrees or more, all within stampTurn degrees of one another (a
// stamp's rows are parallel), three quarters of the glyphs of the lines
// not level, and more glyphs than the level lines (the print the stamp
// was struck over, which stampRows, sorting every glyph along the
// stamp's angle, mixes into its rows).
func turnedChains(lines []handLine) bool {
	var straight, level, other int
	var angles []float64
	for _, l := range lines {
		if len(l.comps) < stampGlyphs {
			continue
		}
		wander, even, angle := centreLine(l.comps)
		switch {
		case wander <= stampWander && even && math.Abs(angle) >= stampTurn:
			straight += len(l.comps)
			angles = append(angles, angle)
		case math.Abs(angle) < stampTurn:
			level += len(l.comps)
		default:
			other += len(l.comps)
		}
	}
	if len(angles) < 2 || slices.Max(angles)-slices.Min(angles) >= stampTurn {
		return false
	}
	return level < straight && 4*straight >= 3*(straight+other)
}

// stampRows returns the rows of glyphs of region r. Its lines were
// chained as level lines are, and the lines of a stamp turned a few
// degrees chain one row's end to the next row's start; so the glyphs
// are sorted into rows again along the angle at which their centres
// fall into the fewest, fullest rows (a projection profile, as a page's
// skew is found, over ±stampMaxTurn degrees). A glyph is in the row of
// the one before it, across the rows, when their centres are less than
// half the median height apart; glyphs twice the median height or more
// (a frame's piece) or under half of it (a dot, a piece of a rule) are in
// no row.
func stampRows(r handRegion) [][][4]int {
	var all [][4]int
	var hs []float64
	for _, l := range r.lines {
		all = append(all, l.comps...)
		for _, c := range l.comps {
			hs = append(hs, float64(c[3]-c[1]))
		}
	}
	mh := median(hs)
	all = slices.DeleteFunc(all, func(c [4]int) bool { h := float64(c[3] - c[1]); return h >= 2*mh || 2*h < mh })
	if len(all) < stampGlyphs || mh == 0 {
		return nil
	}
	across := func(c [4]int, sin, cos float64) float64 {
		return -float64(c[0]+c[2])/2*sin + float64(c[1]+c[3])/2*cos
	}
	best, bestScore := 0.0, -1
	for deg := -stampMaxTurn; deg <= stampMaxTurn; deg++ {
		sin, cos := math.Sincos(float64(deg) * math.Pi / 180)
		bins := map[int]int{}
		for _, c := range all {
			bins[int(math.Floor(across(c, sin, cos)/(mh/2)))]++
		}
		score := 0
		for _, n := range bins {
			score += n * n
		}
		if score > bestScore {
			best, bestScore = float64(deg), score
		}
	}
	sin, cos := math.Sincos(best * math.Pi / 180)
	slices.SortFunc(all, func(a, b [4]int) int { return cmp.Compare(across(a, sin, cos), across(b, sin, cos)) })
	var rows [][][4]int
	for i, c := range all {
		if i == 0 || across(c, sin, cos)-across(all[i-1], sin, cos) >= mh/2 {
			rows = append(rows, nil)
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], c)
	}
	return rows
}

// framed reports whether component c (reduced page) is a stamp's frame
// or inside one.
func (look *handLook) framed(c [4]int) bool {
	if !look.framesDone {
		look.frames, look.framesDone = findFrames(look.ink, look.inks), true
	}
	for _, fr := range look.frames {
		if c[0] >= fr[0] && c[1] >= fr[1] && c[2] <= fr[2] && c[3] <= fr[3] {
			return true
		}
	}
	return false
}

// centreLine fits a straight line, at any angle, through the centres of
// boxes and returns their mean distance from it in the boxes' median
// height (their smaller side, for a line turned steeply), and whether
// they are glyphs of one size: the middle three fifths of their heights
// within a fifth of the median, as printed capitals are at any angle;
// and the line's angle in degrees.
func centreLine(boxes [][4]int) (wander float64, even bool, angle float64) {
	var n, sx, sy, sxx, sxy, syy float64
	hs := make([]float64, 0, len(boxes))
	for _, b := range boxes {
		x, y := float64(b[0]+b[2])/2, float64(b[1]+b[3])/2
		n++
		sx, sy, sxx, sxy, syy = sx+x, sy+y, sxx+x*x, sxy+x*y, syy+y*y
		hs = append(hs, float64(b[3]-b[1]))
	}
	mh := median(hs)
	if mh == 0 {
		return math.Inf(1), false, 0
	}
	// The direction of least spread (total least squares).
	vx, vy, cxy := sxx/n-(sx/n)*(sx/n), syy/n-(sy/n)*(sy/n), sxy/n-(sx/n)*(sy/n)
	theta := 0.5 * math.Atan2(2*cxy, vx-vy)
	nx, ny := -math.Sin(theta), math.Cos(theta)
	sum := 0.0
	for _, b := range boxes {
		x, y := float64(b[0]+b[2])/2-sx/n, float64(b[1]+b[3])/2-sy/n
		sum += math.Abs(x*nx + y*ny)
	}
	lo, hi := hs[len(hs)/5], hs[len(hs)-1-len(hs)/5]
	// A turned glyph's box grows with its width: allow for the angle.
	slack := 1.2 + math.Abs(math.Sin(theta))
	return sum / n / mh, hi <= slack*lo, theta * 180 / math.Pi
}

// findFrames returns the components of ink that may be a stamp's frame,
// on the reduced page: at least frameInch wide and tall, holding
// frameGlyphs components or more of its own ink wholly inside them (a
// stamp's letters), and closed: paper that cannot reach the box's edge
// without crossing their ink makes frameHollow percent of the box or
// more, as a box or a ring round letters does and a pen's loops, open or
// small, do not. On a page of several inks (inks not nil), each ink is
// looked at alone: print under a red frame is paper to it.
func findFrames(ink *inkLook, inks *pageInks) [][4]int {
	least := int(frameInch * ink.wdpi)
	comps, mask := ink.comps, ink.mask
	if inks != nil {
		comps, mask = inks.comps, inks.cls
	}
	class := func(k int) byte {
		if inks == nil {
			return 0
		}
		return byte(inks.classes[k])
	}
	var out [][4]int
	for k, b := range comps {
		w, h := b[2]-b[0], b[3]-b[1]
		if w < least || h < least || w > ink.small.w*3/4 || h > ink.small.h*3/4 {
			continue
		}
		held := 0
		for j, c := range comps {
			if c != b && class(j) == class(k) && c[0] > b[0] && c[1] > b[1] && c[2] < b[2] && c[3] < b[3] && c[3]-c[1] >= 3 {
				held++
			}
		}
		if held >= frameGlyphs && 100*enclosed(mask, class(k), ink.small.w, b) >= frameHollow*w*h {
			out = append(out, b)
		}
	}
	return out
}

// enclosed counts the pixels of box b of the w-wide mask that cannot
// reach the box's edge through paper (0, 4-connected): the paper, or with
// class not 0 the pixels of any value but class. Another ink is a wall
// but counts as enclosed: print crossing a red frame seals the gap it
// makes in the frame, and print inside it is inside.
func enclosed(mask []byte, class byte, w int, b [4]int) int {
	counted := func(v byte) bool { return v == 0 || (class != 0 && v != class) }
	bw, bh := b[2]-b[0], b[3]-b[1]
	seen := make([]bool, bw*bh)
	var stack []int
	// With a class, its ink is thickened by a pixel: a thin coloured
	// frame, scanned, breaks where its pixels pale below the colour's
	// cut.
	wall := func(x, y int) bool {
		if mask[y*w+x] != 0 {
			return true
		}
		if class == 0 {
			return false
		}
		for yy := max(y-1, b[1]); yy <= min(y+1, b[3]-1); yy++ {
			for xx := max(x-1, b[0]); xx <= min(x+1, b[2]-1); xx++ {
				if mask[yy*w+xx] == class {
					return true
				}
			}
		}
		return false
	}
	push := func(x, y int) {
		i := y*bw + x
		if !seen[i] && !wall(b[0]+x, b[1]+y) {
			seen[i] = true
			stack = append(stack, i)
		}
	}
	for x := range bw {
		push(x, 0)
		push(x, bh-1)
	}
	for y := range bh {
		push(0, y)
		push(bw-1, y)
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x, y := i%bw, i/bw
		if x > 0 {
			push(x-1, y)
		}
		if x < bw-1 {
			push(x+1, y)
		}
		if y > 0 {
			push(x, y-1)
		}
		if y < bh-1 {
			push(x, y+1)
		}
	}
	n := 0
	for y := range bh {
		row := mask[(b[1]+y)*w+b[0] : (b[1]+y)*w+b[2]]
		for x, v := range row {
			if counted(v) && !seen[y*bw+x] {
				n++
			}
		}
	}
	return n
}
