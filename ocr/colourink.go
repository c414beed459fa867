package ocr

// The pieces of telling inks apart that know nothing of colour: labelling
// a mask's components, bridging print across a coloured stroke.

// labelInk labels the 8-connected components of the w×h mask's non-zero
// pixels into labels (-1 off the mask, else 0 to count-1), in two passes
// with a union-find of provisional labels.
func labelInk(mask []byte, w, h int, labels []int32) ([]int32, int) {
	var parent []int32
	find := func(a int32) int32 {
		for parent[a] != a {
			parent[a] = parent[parent[a]]
			a = parent[a]
		}
		return a
	}
	union := func(a, b int32) int32 {
		a, b = find(a), find(b)
		if a < b {
			parent[b] = a
			return a
		}
		parent[a] = b
		return b
	}
	for y := range h {
		for x := range w {
			i := y*w + x
			labels[i] = -1
			if mask[i] == 0 {
				continue
			}
			l := int32(-1)
			for _, d := range [4][2]int{{-1, 0}, {-1, -1}, {0, -1}, {1, -1}} {
				xx, yy := x+d[0], y+d[1]
				if xx < 0 || yy < 0 || xx >= w {
					continue
				}
				if m := labels[yy*w+xx]; m >= 0 {
					if l < 0 {
						l = find(m)
					} else {
						l = union(l, m)
					}
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
	count := 0
	for i := range parent {
		if find(int32(i)) == int32(i) {
			ids[i] = int32(count)
			count++
		}
	}
	for i, l := range labels {
		if l >= 0 {
			labels[i] = ids[find(l)]
		}
	}
	return labels, count
}

// bridgeInch is the widest stroke of print that crosses a coloured
// stroke and is given to it (see bridge): a bold heading's stroke is
// about 0.03 inch.
const bridgeInch = 0.04

// bridge gives a run of uncoloured ink (class 1) of at most gap pixels
// along the lines of the w×h classes cls (step 1: rows, step w:
// columns) to the coloured ink on both its ends when that is one ink:
// where print crosses a red frame or a blue stroke, the pixels are dark
// and the coloured stroke would be cut in two.
func bridge(cls []byte, w, h, step, gap int) {
	lines, length := h, w
	if step != 1 {
		lines, length = w, h
	}
	for l := range lines {
		at := func(i int) int {
			if step == 1 {
				return l*w + i
			}
			return i*w + l
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
