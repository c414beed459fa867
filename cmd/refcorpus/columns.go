package main

import (
	"errors"
	"image"
	"math/rand/v2"
	"strings"

	"golang.org/x/image/font"
)

// colBlock is one block of a page laid out in columns, as the truth
// records it under "column_blocks", in reading order: the page's text is
// the blocks' text in this order (the page number last).
type colBlock struct {
	Kind  string `json:"kind"` // full (full width), column or table
	Box   [4]int `json:"box"`  // x0, y0, x1, y1 in the scan's pixels, before the skew
	Lines int    `json:"lines"`
}

// Column geometry of --columns: the left column's share of the width and
// the gutter in hundredths of an inch, dealt from the document's stream.
var (
	columnShares  = []float64{0.34, 0.4, 0.6, 0.66}
	columnGutters = []int{15, 25, 40, 60}
	medicines     = [][]string{
		{"Metformin", "500 mg", "twice daily"}, {"Ramipril", "5 mg", "once daily"}, {"Atorvastatin", "20 mg", "at night"},
		{"Omeprazole", "20 mg", "once daily"}, {"Levothyroxine", "50 mcg", "mornings"}, {"Amlodipine", "10 mg", "once daily"},
		{"Sertraline", "50 mg", "once daily"}, {"Paracetamol", "1 g", "as needed"},
	}
)

// drawColumns draws a section in two columns of unequal width below the
// page's text: a full-width heading, the columns, and for above_full a
// full-width paragraph or for above_table a table under them. It returns
// the section's lines in reading order and the page's blocks.
func drawColumns(r *rand.Rand, ink *image.Gray, pl pageLayout, fc faces, layout string, dpi, left, right int) ([]string, []colBlock, error) {
	gap := lineHeight(fc.body) / 2
	share := pick(r, columnShares)
	gutter := pick(r, columnGutters) * dpi / 100
	wA := int(float64(right-left-gutter) * share)
	xB := left + wA + gutter
	wB := right - xB
	lh, hh := lineHeight(fc.body), lineHeight(fc.heading)
	var rows [][]string
	if layout == "above_table" {
		rows = [][]string{{"Medicine", "Dose", "Frequency"}}
		for _, k := range r.Perm(len(medicines))[:3+r.IntN(2)] {
			rows = append(rows, medicines[k])
		}
	}
	first, second := r.Perm(len(histories)), r.Perm(len(plans))
	for n := 4; n >= 1; n-- {
		a := wrap(fc.body, joinFrom(histories, first[:n]), wA)
		b := wrap(fc.body, joinFrom(plans, second[:n]), wB)
		var after []string
		switch layout {
		case "above_full":
			after = wrap(fc.body, "Follow up: "+pick(r, requests), right-left)
		case "above_table":
			after = make([]string, len(rows))
		}
		colH := lh + max(len(a), len(b))*lh
		height := hh + colH
		if len(after) > 0 {
			height += gap + hh + len(after)*lh
		}
		if pl.End+gap+height > pl.Foot-gap {
			continue
		}
		blocks := []colBlock{{Kind: "full", Box: [4]int{left, int(margin * float64(dpi)), right, pl.End}}}
		y := pl.End + gap
		drawLines(ink, fc.heading, left, y, []string{"Clinical summary"})
		blocks = append(blocks, colBlock{Kind: "full", Box: [4]int{left, y, right, y + hh}, Lines: 1})
		y += hh
		drawLines(ink, fc.label, left, y, []string{"Background"})
		drawLines(ink, fc.body, left, y+lh, a)
		drawLines(ink, fc.label, xB, y, []string{"Current plan"})
		drawLines(ink, fc.body, xB, y+lh, b)
		blocks = append(blocks,
			colBlock{Kind: "column", Box: [4]int{left, y, left + wA, y + lh*(1+len(a))}, Lines: 1 + len(a)},
			colBlock{Kind: "column", Box: [4]int{xB, y, right, y + lh*(1+len(b))}, Lines: 1 + len(b)})
		out := append(append([]string{"Clinical summary", "Background"}, a...), "Current plan")
		out = append(out, b...)
		y += colH + gap
		switch layout {
		case "above_full":
			drawLines(ink, fc.heading, left, y, []string{"Next steps"})
			drawLines(ink, fc.body, left, y+hh, after)
			blocks = append(blocks, colBlock{Kind: "full", Box: [4]int{left, y, right, y + hh + lh*len(after)}, Lines: 1 + len(after)})
			out = append(append(out, "Next steps"), after...)
		case "above_table":
			drawLines(ink, fc.heading, left, y, []string{"Current medicines"})
			lines := drawTable(ink, fc, rows, left, y+hh)
			blocks = append(blocks, colBlock{Kind: "table", Box: [4]int{left, y, right, y + hh + lh*len(rows)}, Lines: 1 + len(rows)})
			out = append(append(out, "Current medicines"), lines...)
		}
		return out, blocks, nil
	}
	return nil, nil, errors.New("no room for the columns")
}

// drawTable draws rows as layoutPage draws a table, the header in the
// label face, and returns one line of text per row, cells separated by
// one space.
func drawTable(ink *image.Gray, fc faces, rows [][]string, left, top int) []string {
	gap := font.MeasureString(fc.body, "mmmm").Ceil()
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], font.MeasureString(fc.label, c).Ceil())
		}
	}
	var lines []string
	for ri, row := range rows {
		face := fc.body
		if ri == 0 {
			face = fc.label
		}
		x := left
		for i, c := range row {
			drawLines(ink, face, x, top+ri*lineHeight(fc.body), []string{c})
			x += widths[i] + gap
		}
		lines = append(lines, strings.Join(row, " "))
	}
	return lines
}
