package main

import (
	"errors"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
)

// coverPage is one drawn page of a coverage document.
type coverPage struct {
	planes coverPlanes
	truth  truthPage
	stamp  string // the stamps' words, which are not part of the page's text
}

// drawCoverPage lays out one page of a coverage document and, on the
// page that has it (on), its note, footer, columns or stamps. The truth
// holds the page's text in reading order, the faint text and whether the
// page has columns; meta records what was drawn.
func drawCoverPage(r *rand.Rand, blocks []block, ds docStyle, fc faces, cf coverFaces, c coverDoc, on bool, date string, meta *coverMeta) (coverPage, error) {
	ink, pl, err := layoutPage(blocks, ds, fc)
	if err != nil {
		return coverPage{}, err
	}
	p := coverPage{planes: coverPlanes{ink: ink}, truth: truthPage{Text: pl.Text}}
	if !on {
		return p, nil
	}
	// The footer ("Page i of n") is the last block, so its line is the
	// text's last; the extra text goes before it.
	i := strings.LastIndex(pl.Text, "\n")
	body, pageNo := pl.Text[:i], pl.Text[i+1:]
	dpi := ds.DPI
	left, right := int(margin*float64(dpi)), ink.Bounds().Dx()-int(margin*float64(dpi))
	gap := lineHeight(fc.body) / 2
	layout := c.Kind
	switch c.Kind {
	case covControl, covColoured:
		layout = c.Layout
	case covColourFaint:
		layout = covFaintNote
	}
	// plane is where the note or the footer is drawn: with the dark print,
	// or on a plane of its own when it is faint.
	plane := ink
	if c.faint() {
		p.planes.faint = blankLike(ink)
		plane = p.planes.faint
		meta.Faint = c.Faint
	}
	var extra []string
	switch layout {
	case covFaintNote:
		face := fc.body
		if c.faint() {
			face = cf.faint
		}
		// Three to five sentences, fewer when the page has no room.
		n := 3 + r.IntN(3)
		order := r.Perm(len(officeNotes))
		for ; n >= 1; n-- {
			extra = wrap(face, noteOpening+" "+joinFrom(officeNotes, order[:n]), right-left)
			if pl.End+gap+len(extra)*lineHeight(face) <= pl.Foot-gap {
				break
			}
		}
		if n < 1 {
			return p, errors.New("no room for the office note")
		}
		drawLines(plane, face, left, pl.End+gap, extra)
	case covSmallPrint:
		face := cf.footer
		// Whole sentences until the footer has 3 to 5 lines.
		want := 3 + r.IntN(3)
		order := r.Perm(len(smallPrint))
		for k := 1; k <= len(order) && len(extra) < want; k++ {
			next := wrap(face, joinFrom(smallPrint, order[:k]), right-left)
			if len(next) > 5 && len(extra) >= 3 {
				break
			}
			extra = next
		}
		top := pl.Foot - gap/2 - len(extra)*lineHeight(face)
		if top < pl.End+gap {
			return p, fmt.Errorf("no room for the small print: %d px short", pl.End+gap-top)
		}
		drawLines(plane, face, left, top, extra)
	case covColumns:
		var gutter float64
		if extra, gutter, err = drawSummaryColumns(r, ink, fc, pl, left, right, gap, dpi); err != nil {
			return p, err
		}
		p.truth.Columns, meta.GutterIn = true, gutter
	case covStamps:
		p.planes.stamp = blankLike(ink)
		words, crossed, err := stampParagraphs(r, p.planes.stamp, blocks, pl, ds, fc, cf, c.Stamps, left, right, date)
		if err != nil {
			return p, err
		}
		p.stamp = words
		meta.Stamps, meta.StampPt, meta.CrossedLines = c.Stamps, cf.stampPt, crossed
		return p, nil
	}
	if c.faint() {
		p.truth.FaintText = strings.Join(extra, "\n")
	}
	p.truth.Text = body + "\n" + strings.Join(append(extra, pageNo), "\n")
	return p, nil
}

// joinFrom joins the sentences of list at the indices idx, in that order.
func joinFrom(list []string, idx []int) string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = list[j]
	}
	return strings.Join(out, " ")
}

// blankLike returns a white plane the size of img.
func blankLike(img *image.Gray) *image.Gray {
	out := image.NewGray(img.Bounds())
	fill(out, 255)
	return out
}

// drawLines draws lines of face in black onto dst, the first line's top
// at top, one lineHeight apart, as layoutPage draws a paragraph.
func drawLines(dst *image.Gray, face font.Face, x, top int, lines []string) {
	asc := face.Metrics().Ascent.Ceil()
	for i, l := range lines {
		d := &font.Drawer{Dst: dst, Src: image.Black, Face: face, Dot: fixed.P(x, top+i*lineHeight(face)+asc)}
		drawText(d, l)
	}
}

// paraSpan is where a paragraph's lines were drawn: the pixel rows from
// the first line's top to the last line's bottom.
type paraSpan struct{ top, bottom, lines int }

// paragraphs finds the drawn paragraphs of a page among its text runs,
// longest first.
func paragraphs(blocks []block, pl pageLayout, fc faces, width int) []paraSpan {
	m := fc.body.Metrics()
	var out []paraSpan
	for _, b := range blocks {
		if b.Kind != blockPara {
			continue
		}
		lines := wrap(fc.body, b.Text, width)
		for k := 0; k+len(lines) <= len(pl.Runs); k++ {
			if pl.Runs[k].Text != lines[0] || pl.Runs[k+len(lines)-1].Text != lines[len(lines)-1] {
				continue
			}
			out = append(out, paraSpan{
				top:    pl.Runs[k].Baseline - m.Ascent.Ceil(),
				bottom: pl.Runs[k+len(lines)-1].Baseline + m.Descent.Ceil(),
				lines:  len(lines),
			})
			break
		}
	}
	slices.SortStableFunc(out, func(a, b paraSpan) int { return b.lines - a.lines })
	return out
}

// bigStampWords are what the large stamps say.
var bigStampWords = []string{"RECEIVED", "URGENT", "SCANNED", "CONFIDENTIAL", "ENTERED"}

// stampParagraphs stamps n large stamps onto plane over the page's
// longest paragraphs: the second over the next paragraph or, on a page
// of one, beside the first. It returns the stamps' words and how many
// drawn lines of text their ink crosses.
func stampParagraphs(r *rand.Rand, plane *image.Gray, blocks []block, pl pageLayout, ds docStyle, fc faces, cf coverFaces, n, left, right int, date string) (string, int, error) {
	paras := paragraphs(blocks, pl, fc, right-left)
	if len(paras) == 0 {
		return "", 0, errors.New("no paragraph to stamp")
	}
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return "", 0, err
	}
	w := right - left
	lh := lineHeight(fc.body)
	var words []string
	for k := range n {
		p := paras[min(k, len(paras)-1)]
		// Centred on the paragraph, across its middle lines.
		cx := left + w*(30+r.IntN(41))/100
		if n == 2 && len(paras) == 1 {
			cx = left + w*(15+r.IntN(15)+50*k)/100 // side by side
		}
		st := stamp{
			Lines:  []string{pick(r, bigStampWords), strings.ToUpper(day.AddDate(0, 0, 1+r.IntN(20)).Format("2 Jan 2006"))},
			CX:     cx,
			CY:     (p.top+p.bottom)/2 - lh/2 + r.IntN(lh+1),
			Angle:  float64(2+r.IntN(9)) * float64(1-2*r.IntN(2)),
			Misses: 0.03 + r.Float64()*0.1,
		}
		one := blankLike(plane)
		drawStamp(r, one, cf.stamp, st, ds.DPI)
		for i, v := range one.Pix {
			plane.Pix[i] = min(plane.Pix[i], v)
		}
		words = append(words, strings.Join(st.Lines, " "))
	}
	// A line is crossed when stamp ink falls in the box of its glyphs.
	crossed := map[int]bool{}
	scale := float64(ds.DPI) / 72
	for _, run := range pl.Runs {
		width := float64(font.MeasureString(fc.body, run.Text).Ceil()) * run.Pt / ds.BodyPt
		box := image.Rect(run.X, run.Baseline-int(0.75*run.Pt*scale), run.X+int(width), run.Baseline+int(0.22*run.Pt*scale))
		if !crossed[run.Baseline] && inked(plane, box) {
			crossed[run.Baseline] = true
		}
	}
	return strings.Join(words, " "), len(crossed), nil
}

// inked reports whether plane has ink (darker than mid-grey) inside box.
func inked(plane *image.Gray, box image.Rectangle) bool {
	box = box.Intersect(plane.Bounds())
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for _, v := range plane.Pix[y*plane.Stride+box.Min.X : y*plane.Stride+box.Max.X] {
			if v < 128 {
				return true
			}
		}
	}
	return false
}

// drawSummaryColumns draws a clinical summary in two columns under the page's
// text, as many sentences as fit (three or four), and returns its text in
// reading order (the first column, then the second) and the gutter.
func drawSummaryColumns(r *rand.Rand, ink *image.Gray, fc faces, pl pageLayout, left, right, gap, dpi int) ([]string, float64, error) {
	gutter := 0.25 + 0.05*float64(r.IntN(6))
	gutterPx := int(math.Round(gutter * float64(dpi)))
	colW := (right - left - gutterPx) / 2
	x2 := left + colW + gutterPx
	n := 3 + r.IntN(2)
	first, second := r.Perm(len(histories)), r.Perm(len(plans))
	for ; n >= 1; n-- {
		a := wrap(fc.body, joinFrom(histories, first[:n]), colW)
		b := wrap(fc.body, joinFrom(plans, second[:n]), colW)
		height := lineHeight(fc.heading) + lineHeight(fc.label) + max(len(a), len(b))*lineHeight(fc.body)
		if pl.End+gap+height > pl.Foot-gap {
			continue
		}
		y := pl.End + gap
		drawLines(ink, fc.heading, left, y, []string{"Clinical summary"})
		y += lineHeight(fc.heading)
		drawLines(ink, fc.label, left, y, []string{"Background"})
		drawLines(ink, fc.label, x2, y, []string{"Current plan"})
		y += lineHeight(fc.label)
		drawLines(ink, fc.body, left, y, a)
		drawLines(ink, fc.body, x2, y, b)
		extra := append([]string{"Clinical summary", "Background"}, a...)
		return append(append(extra, "Current plan"), b...), gutter, nil
	}
	return nil, 0, errors.New("no room for the columns")
}
