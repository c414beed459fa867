package ocr

import "math"

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
	for _, l := range r.lines {
		if len(l.comps) < stampGlyphs {
			continue
		}
		glyphs += len(l.comps)
		if wander, even, angle := centreLine(l.comps); wander <= stampWander && even && math.Abs(angle) >= stampTurn {
			straight += len(l.comps)
		}
	}
	return glyphs > 0 && 4*straight >= 3*glyphs
}

// framed reports whether component c (reduced page) is a stamp's frame
// or inside one.
func (look *handLook) framed(c [4]int) bool {
	if !look.framesDone {
		look.frames, look.framesDone = findFrames(look.ink), true
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
// frameGlyphs components or more wholly inside them (a stamp's letters),
// and closed: paper that cannot reach the box's edge without crossing
// their ink makes frameHollow percent of the box or more, as a box or a
// ring round letters does and a pen's loops, open or small, do not.
func findFrames(ink *inkLook) [][4]int {
	least := int(frameInch * ink.wdpi)
	var out [][4]int
	for _, b := range ink.comps {
		w, h := b[2]-b[0], b[3]-b[1]
		if w < least || h < least || w > ink.small.w*3/4 || h > ink.small.h*3/4 {
			continue
		}
		held := 0
		for _, c := range ink.comps {
			if c != b && c[0] > b[0] && c[1] > b[1] && c[2] < b[2] && c[3] < b[3] && c[3]-c[1] >= 3 {
				held++
			}
		}
		if held >= frameGlyphs && 100*enclosed(ink.mask, ink.small.w, b) >= frameHollow*w*h {
			out = append(out, b)
		}
	}
	return out
}

// enclosed counts the paper pixels of box b of the w-wide mask that
// cannot reach the box's edge through paper (4-connected).
func enclosed(mask []byte, w int, b [4]int) int {
	bw, bh := b[2]-b[0], b[3]-b[1]
	seen := make([]bool, bw*bh)
	var stack []int
	push := func(x, y int) {
		i := y*bw + x
		if !seen[i] && mask[(b[1]+y)*w+b[0]+x] == 0 {
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
			if v == 0 && !seen[y*bw+x] {
				n++
			}
		}
	}
	return n
}
