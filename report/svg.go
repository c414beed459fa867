package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// The charts of report.html are SVG, written as text from numbers only by
// the primitives here (the charts themselves are in charts.go): no script,
// no font, nothing fetched. Every label that could come from outside (none
// does today) goes through esc. Each chart has a viewBox and scales to its
// container, so the same markup fits a laptop and an A4 page.

// Colours shared with the page's CSS.
const (
	colDone     = "#1a7f37"
	colReview   = "#bf8700"
	colRejected = "#cf222e"
	colRunning  = "#0969da"
	colQueued   = "#bf8700"
	colAge      = "#8250df"
	colAxis     = "#8c959f"
	colGrid     = "#eaeef2"
	colInk      = "#1f2328"
	colMuted    = "#57606a"
)

func esc(s string) string { return template.HTMLEscapeString(s) }

// num formats a coordinate compactly: SVG needs no more than 0.1 unit.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// svg accumulates one chart.
type svg struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64, title string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<svg class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">`,
		num(w), num(h), esc(title))
	fmt.Fprintf(&s.b, `<title>%s</title>`, esc(title))
	return s
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	extra := ""
	if dash != "" {
		extra = ` stroke-dasharray="` + dash + `"`
	}
	fmt.Fprintf(&s.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>`,
		num(x1), num(y1), num(x2), num(y2), stroke, num(width), extra)
}

func (s *svg) rect(x, y, w, h float64, fill string, opacity float64) {
	fmt.Fprintf(&s.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"`, num(x), num(y), num(max(w, 0)), num(max(h, 0)), fill)
	if opacity < 1 {
		fmt.Fprintf(&s.b, ` fill-opacity="%s"`, strconv.FormatFloat(opacity, 'f', 2, 64))
	}
	s.b.WriteString(`/>`)
}

// text writes a label; anchor is start, middle or end.
func (s *svg) text(x, y float64, anchor, class, label string) {
	fmt.Fprintf(&s.b, `<text x="%s" y="%s" text-anchor="%s" class="%s">%s</text>`, num(x), num(y), anchor, class, esc(label))
}

func (s *svg) polyline(pts [][2]float64, stroke string, width float64) {
	if len(pts) == 0 {
		return
	}
	s.b.WriteString(`<polyline fill="none" stroke-linejoin="round" stroke="` + stroke + `" stroke-width="` + num(width) + `" points="`)
	for i, p := range pts {
		if i > 0 {
			s.b.WriteByte(' ')
		}
		s.b.WriteString(num(p[0]) + "," + num(p[1]))
	}
	s.b.WriteString(`"/>`)
}

// area fills between the points and the baseline y0.
func (s *svg) area(pts [][2]float64, y0 float64, fill string, opacity float64) {
	if len(pts) == 0 {
		return
	}
	s.b.WriteString(`<path fill="` + fill + `" fill-opacity="` + strconv.FormatFloat(opacity, 'f', 2, 64) + `" d="M` + num(pts[0][0]) + "," + num(y0))
	for _, p := range pts {
		s.b.WriteString(" L" + num(p[0]) + "," + num(p[1]))
	}
	s.b.WriteString(" L" + num(pts[len(pts)-1][0]) + "," + num(y0) + ` Z"/>`)
}

func (s *svg) html() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String()) // built from numbers and escaped labels only
}

// emptyChart is a chart-sized box saying there is nothing to draw.
func emptyChart(title, msg string) template.HTML {
	s := newSVG(640, 80, title)
	s.rect(0.5, 0.5, 639, 79, "#f6f8fa", 1)
	s.text(320, 45, "middle", "muted", msg)
	return s.html()
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts
// [0, span] into about n parts.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// countAxis returns the top of a count axis and its step: whole numbers,
// at least 1.
func countAxis(maxN float64) (top, step float64) {
	step = max(1, niceStep(maxN, 4))
	top = max(step, math.Ceil(maxN/step)*step)
	return top, step
}

// plot is the frame of a chart: the drawing area inside the margins.
type plot struct {
	x0, y0, x1, y1 float64 // left, top, right, bottom
}

func (p plot) width() float64  { return p.x1 - p.x0 }
func (p plot) height() float64 { return p.y1 - p.y0 }

// yAxis draws horizontal grid lines and labels for 0..top.
func (s *svg) yAxis(p plot, top, step float64, format func(float64) string) {
	for v := 0.0; v <= top+step/1e6; v += step {
		y := p.y1 - v/top*p.height()
		s.line(p.x0, y, p.x1, y, colGrid, 1, "")
		s.text(p.x0-6, y+4, "end", "tick", format(v))
	}
	s.line(p.x0, p.y1, p.x1, p.y1, colAxis, 1, "")
}

func formatCount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// marker is a vertical line on a chart with a label.
type marker struct {
	x     float64 // in data units
	label string
	color string
	dash  string
}

// durationAxis is countAxis for seconds, with steps people count in.
func durationAxis(maxS float64) (top, step float64) {
	if maxS <= 0 {
		return 1, 1
	}
	step = timeStep(maxS * 1.5)
	top = max(step, math.Ceil(maxS/step)*step)
	return top, step
}

// timeSteps are the steps of a time axis, in seconds.
var timeSteps = []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}

// timeStep picks a step cutting span seconds into four to eight parts.
func timeStep(span float64) float64 {
	for _, st := range timeSteps {
		if span/st <= 8 {
			return st
		}
	}
	return math.Ceil(span/8/86400) * 86400
}

// formatLatency renders a latency with two significant digits below ten
// seconds (0.43s, 2.4s) and like an axis tick above.
func formatLatency(s float64) string {
	if s < 10 {
		return strconv.FormatFloat(roundSig(s, 2), 'f', -1, 64) + "s"
	}
	return formatTick(s)
}

// formatTick renders seconds for an axis: as short as it can be and still
// exact, 0.5s, 30s, 1m30s, 2h, 1d6h.
func formatTick(s float64) string {
	if s < 60 {
		return strconv.FormatFloat(roundSig(s, 3), 'f', -1, 64) + "s"
	}
	d := time.Duration(math.Round(s)) * time.Second
	var b strings.Builder
	if days := d / (24 * time.Hour); days > 0 {
		fmt.Fprintf(&b, "%dd", days)
		d -= days * 24 * time.Hour
	}
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}
