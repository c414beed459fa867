package main

import "image"

// boxBlur blurs img in place with a box of the given radius, rows then
// columns; a few passes approach a Gaussian. Beyond the edges the edge
// pixel repeats. Each output is the box's sum divided by its size, rounded
// to nearest.
func boxBlur(img *image.Gray, radius int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w == 0 || h == 0 {
		return
	}
	n := 2*radius + 1
	// The sums run up to 255n: a table of their rounded quotients saves a
	// division per pixel.
	quot := make([]uint8, 255*n+1)
	for s := range quot {
		quot[s] = uint8((s + n/2) / n)
	}
	blurRows(img, w, h, radius, quot)
	blurColumns(img, w, h, radius, quot)
}

// blurRows is boxBlur's pass along each row. The row is copied with its
// edge pixels repeated radius times on the left and radius+1 times on the
// right, so the sliding sum needs no clamping.
func blurRows(img *image.Gray, w, h, radius int, quot []uint8) {
	line := make([]int, w+2*radius+1)
	for y := range h {
		row := img.Pix[y*img.Stride : y*img.Stride+w]
		for j := range radius {
			line[j] = int(row[0])
		}
		for x, v := range row {
			line[radius+x] = int(v)
		}
		for j := radius + w; j < len(line); j++ {
			line[j] = int(row[w-1])
		}
		sum := 0
		for _, v := range line[:2*radius+1] {
			sum += v
		}
		// line[x+2radius+1] is row[x+radius+1], line[x] is row[x-radius].
		ahead, behind := line[2*radius+1:2*radius+1+w], line[:w]
		for x := range row {
			row[x] = quot[sum]
			sum += ahead[x] - behind[x]
		}
	}
}

// blurColumns is boxBlur's pass along each column, done a row at a time
// so that it reads memory in order: sums holds every column's sliding
// sum. The pass is in place, so the last radius+1 rows are kept as they
// were before being overwritten, for when the window leaves them.
func blurColumns(img *image.Gray, w, h, radius int, quot []uint8) {
	rowAt := func(y int) []uint8 { return img.Pix[y*img.Stride : y*img.Stride+w] }
	sums := make([]int, w)
	for j := -radius; j <= radius; j++ {
		for x, v := range rowAt(max(0, min(h-1, j))) {
			sums[x] += int(v)
		}
	}
	kept := make([][]uint8, radius+1)
	for i := range kept {
		kept[i] = make([]uint8, w)
	}
	for y := range h {
		row := rowAt(y)
		copy(kept[y%(radius+1)], row)
		// The window drops row y-radius (row 0 above the top edge) and
		// takes row y+radius+1 (the last row below the bottom edge). The
		// last row's update is never used.
		behind := kept[max(0, y-radius)%(radius+1)]
		ahead := rowAt(min(h-1, y+radius+1))
		for x := range row {
			row[x] = quot[sums[x]]
			sums[x] += int(ahead[x]) - int(behind[x])
		}
	}
}
