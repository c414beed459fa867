package ocr

import "math"

// The pieces of telling inks apart that know nothing of colour: labelling
// a mask's components, bridging print across a coloured stroke.

// bridgeInch is the widest stroke of print that crosses a coloured
// stroke and is given to it (see bridge): a bold heading's stroke is
// about 0.03 inch.
const bridgeInch = 0.04

// bridge gives a run of uncoloured ink (class 1) of at most gap pixels
// along the lines of window win of the stride-wide classes cls (step 1:
// rows, else columns) to the coloured ink on both its ends when that is
// one ink: where print crosses a red frame or a blue stroke, the pixels
// are dark and the coloured stroke would be cut in two.
func bridge(cls []byte, stride int, win [4]int, step, gap int) {
	lines, length := win[3]-win[1], win[2]-win[0]
	if step != 1 {
		lines, length = length, lines
	}
	for l := range lines {
		at := func(i int) int {
			if step == 1 {
				return (win[1]+l)*stride + win[0] + i
			}
			return (win[1]+i)*stride + win[0] + l
		}
		for i := 1; i < length-1; i++ {
			if cls[at(i)] != 1 || cls[at(i-1)] < 2 {
				continue
			}
			j := i
			for j < length && j-i <= gap && cls[at(j)] == 1 {
				j++
			}
			if j < length && j-i <= gap && cls[at(j)] == cls[at(i-1)] {
				for k := i; k < j; k++ {
					cls[at(k)] = cls[at(i-1)]
				}
			}
			i = j
		}
	}
}

// labelBoxes labels the 8-connected components of window win of the
// stride-wide image v, a component being pixels of one non-zero value,
// into labels (win's size, -1 for zero, else 0 to count-1, numbered in
// the order of their first pixel row by row). It returns each
// component's box in the image's coordinates (ends exclusive), its
// value, and labels.
func labelBoxes(v []byte, stride int, win [4]int, labels []int32) (boxes [][4]int, values []byte, _ []int32) {
	w, h := win[2]-win[0], win[3]-win[1]
	labels = grow(labels, w*h)
	var parent []int32
	find := func(a int32) int32 {
		for parent[a] != a {
			parent[a] = parent[parent[a]]
			a = parent[a]
		}
		return a
	}
	for y := range h {
		row := v[(win[1]+y)*stride+win[0]:]
		for x := range w {
			i := y*w + x
			labels[i] = -1
			c := row[x]
			if c == 0 {
				continue
			}
			l := int32(-1)
			for _, d := range [4][2]int{{-1, 0}, {-1, -1}, {0, -1}, {1, -1}} {
				xx, yy := x+d[0], y+d[1]
				if xx < 0 || yy < 0 || xx >= w || v[(win[1]+yy)*stride+win[0]+xx] != c {
					continue
				}
				m := find(labels[yy*w+xx])
				switch {
				case l < 0:
					l = m
				case m < l:
					parent[l], l = m, m
				case m > l:
					parent[m] = l
				}
			}
			if l < 0 {
				l = int32(len(parent))
				parent = append(parent, l)
			}
			labels[i] = l
		}
	}
	ids := make([]int32, len(parent))
	for i := range parent {
		if r := find(int32(i)); r == int32(i) {
			ids[i] = int32(len(boxes))
			boxes = append(boxes, [4]int{math.MaxInt, math.MaxInt, 0, 0})
			values = append(values, 0)
		}
	}
	for y := range h {
		for x := range w {
			i := y*w + x
			if labels[i] < 0 {
				continue
			}
			k := ids[find(labels[i])]
			labels[i] = k
			gx, gy := win[0]+x, win[1]+y
			boxes[k] = union4(boxes[k], [4]int{gx, gy, gx + 1, gy + 1})
			values[k] = v[gy*stride+gx]
		}
	}
	return boxes, values, labels
}
