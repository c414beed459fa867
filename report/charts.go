package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// This file draws report.html's charts with the primitives of svg.go.

// confidenceChart is the histogram of confidence per document,
// bars coloured by band, with the band thresholds marked.
func confidenceChart(buckets []Bucket, bands Bands) template.HTML {
	const title = "Confidence per document"
	total := 0
	maxN := 0
	for _, b := range buckets {
		total += b.N
		maxN = max(maxN, b.N)
	}
	if total == 0 {
		return emptyChart(title, "No document was read yet.")
	}
	s := newSVG(640, 250, title)
	p := plot{x0: 44, y0: 28, x1: 624, y1: 206}
	// Headroom above the tallest bar keeps its count clear of the
	// threshold labels.
	top, step := countAxis(float64(maxN) * 1.15)
	s.yAxis(p, top, step, formatCount)
	xOf := func(v float64) float64 { return p.x0 + v/100*p.width() }
	// Shade the bands behind the bars so the thresholds read at a glance.
	if bands.Low > 0 && bands.High > bands.Low {
		s.rect(xOf(0), p.y0, xOf(bands.Low)-xOf(0), p.height(), colRejected, 0.05)
		s.rect(xOf(bands.Low), p.y0, xOf(bands.High)-xOf(bands.Low), p.height(), colReview, 0.06)
		s.rect(xOf(bands.High), p.y0, xOf(100)-xOf(bands.High), p.height(), colDone, 0.05)
	}
	for _, b := range buckets {
		if b.N == 0 {
			continue
		}
		mid := (b.Lo + b.Hi) / 2
		col := colDone
		switch {
		case mid < bands.Low:
			col = colRejected
		case mid < bands.High:
			col = colReview
		}
		x := xOf(b.Lo) + 1.5
		w := xOf(b.Hi) - xOf(b.Lo) - 3
		h := float64(b.N) / top * p.height()
		s.rect(x, p.y1-h, w, h, col, 0.85)
		s.text(x+w/2, p.y1-h-4, "middle", "tick", strconv.Itoa(b.N))
	}
	for v := 0.0; v <= 100; v += 10 {
		s.line(xOf(v), p.y1, xOf(v), p.y1+4, colAxis, 1, "")
		s.text(xOf(v), p.y1+16, "middle", "tick", formatCount(v))
	}
	for _, m := range []marker{
		{bands.Low, "low < " + formatCount(bands.Low), colRejected, "4 3"},
		{bands.High, "high ≥ " + formatCount(bands.High), colDone, "4 3"},
	} {
		if m.x <= 0 || m.x >= 100 {
			continue
		}
		s.line(xOf(m.x), p.y0-6, xOf(m.x), p.y1, m.color, 1.5, m.dash)
		s.text(xOf(m.x), p.y0-10, "middle", "mark", m.label)
	}
	s.text(p.x0+p.width()/2, p.y1+36, "middle", "axis", "confidence per character (%), documents per 5-point bin")
	return s.html()
}

// ocrTimeChart is the distribution of render+recognise time per page on a
// log scale, with p50, p95 and the maximum marked.
func ocrTimeChart(buckets []Bucket, q Quantiles) template.HTML {
	const title = "OCR time per page"
	maxN := 0
	for _, b := range buckets {
		maxN = max(maxN, b.N)
	}
	if len(buckets) == 0 || maxN == 0 {
		return emptyChart(title, "No page was recognised yet.")
	}
	s := newSVG(640, 250, title)
	p := plot{x0: 44, y0: 28, x1: 624, y1: 206}
	top, step := countAxis(float64(maxN))
	s.yAxis(p, top, step, formatCount)
	// Show at least a decade so a batch of near-equal pages still has an
	// axis worth reading.
	lo := math.Log10(buckets[0].Lo)
	hi := math.Log10(buckets[len(buckets)-1].Hi)
	if hi-lo < 1 {
		mid := (hi + lo) / 2
		lo, hi = mid-0.5, mid+0.5
	}
	xOf := func(v float64) float64 { return p.x0 + (math.Log10(max(v, 1e-6))-lo)/(hi-lo)*p.width() }
	for _, b := range buckets {
		if b.N == 0 {
			continue
		}
		x := xOf(b.Lo) + 1
		w := xOf(b.Hi) - xOf(b.Lo) - 2
		h := float64(b.N) / top * p.height()
		s.rect(x, p.y1-h, w, h, colRunning, 0.75)
	}
	for _, t := range logTicks(math.Pow(10, lo), math.Pow(10, hi)) {
		s.line(xOf(t), p.y1, xOf(t), p.y1+4, colAxis, 1, "")
		s.text(xOf(t), p.y1+16, "middle", "tick", formatTick(t))
	}
	for i, m := range quantileMarkers(q) {
		x := xOf(m.x)
		// Labels alternate height so that close markers (p95 beside max)
		// do not print over each other.
		y := p.y0 - 10 + float64(i%2)*12
		s.line(x, y+2, x, p.y1, m.color, 1.5, m.dash)
		anchor := "middle"
		switch {
		case x > p.x1-40:
			anchor = "end"
		case x < p.x0+40:
			anchor = "start"
		}
		s.text(x, y, anchor, "mark", m.label)
	}
	s.text(p.x0+p.width()/2, p.y1+36, "middle", "axis", "seconds per page (render + recognise, log scale), pages per bin")
	return s.html()
}

// quantileMarkers marks p50, p95 and the maximum; quantiles that print
// the same share one marker ("p95, max 3s"), as they do in a small batch.
func quantileMarkers(q Quantiles) []marker {
	all := []struct {
		name, color string
		v           float64
	}{{"p50", colDone, q.P50}, {"p95", colReview, q.P95}, {"max", colRejected, q.Max}}
	var out []marker
	for _, m := range all {
		label := formatLatency(m.v)
		if n := len(out); n > 0 && formatLatency(out[n-1].x) == label {
			out[n-1].label = strings.TrimSuffix(out[n-1].label, " "+label) + ", " + m.name + " " + label
			out[n-1].color = m.color
			continue
		}
		out = append(out, marker{m.v, m.name + " " + label, m.color, "4 3"})
	}
	return out
}

// logTicks returns 1-2-5 ticks between lo and hi, thinned to at most 8.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			t := m * math.Pow(10, e)
			if t >= lo*0.999 && t <= hi*1.001 {
				out = append(out, roundSig(t, 3))
			}
		}
	}
	if len(out) > 8 {
		var thin []float64
		for _, t := range out {
			if m := t / math.Pow(10, math.Floor(math.Log10(t)+1e-9)); math.Abs(m-1) < 1e-6 {
				thin = append(thin, t)
			}
		}
		out = thin
	}
	return out
}

// breakdownBar draws where the documents' time went as two bars: the
// wall-clock phases from claim to verdict, and the engines' time split into
// render and recognise. Each segment is labelled with its share when it is
// wide enough.
func breakdownBar(phases []Phase) template.HTML {
	const title = "Where the documents' time went"
	var wall, engine []Phase
	for _, ph := range phases {
		if ph.Clock == ClockEngine {
			engine = append(engine, ph)
		} else {
			wall = append(wall, ph)
		}
	}
	if sumSeconds(wall)+sumSeconds(engine) <= 0 {
		return emptyChart(title, "No document reached a verdict yet.")
	}
	s := newSVG(640, 124, title)
	bar := func(y float64, label string, phases []Phase) {
		s.text(0, y-6, "start", "panel", label)
		total := sumSeconds(phases)
		if total <= 0 {
			return
		}
		x := 0.0
		for _, ph := range phases {
			w := ph.Seconds / total * 640
			s.rect(x, y, w, 26, phaseColour(ph.Name), 0.9)
			if w > 64 {
				s.text(x+w/2, y+17, "middle", "onbar", fmt.Sprintf("%s %.0f%%", phaseLabel(ph.Name), 100*ph.Seconds/total))
			}
			x += w
		}
	}
	bar(18, "wall clock, claim to verdict", wall)
	bar(80, "engine time", engine)
	return s.html()
}

func sumSeconds(phases []Phase) float64 {
	total := 0.0
	for _, ph := range phases {
		total += ph.Seconds
	}
	return total
}

// phaseColour gives each phase its colour; the two engine phases are blues
// like the OCR time chart, the waiting ones neutral or warm.
func phaseColour(name string) string {
	switch name {
	case PhaseStart:
		return "#8c959f"
	case PhasePages:
		return "#0969da"
	case PhaseHandoff:
		return "#8250df"
	case PhaseRender:
		return "#54aeff"
	case PhaseRecognise:
		return "#0550ae"
	}
	return "#d4a72c"
}

// phaseLabel is a phase's name for people.
func phaseLabel(name string) string {
	switch name {
	case PhaseStart:
		return "to first page"
	case PhasePages:
		return "pages"
	case PhaseHandoff:
		return "handoff"
	case PhaseRender:
		return "render"
	case PhaseRecognise:
		return "recognise"
	}
	return name
}

// timelineChart draws the batch over time in three panels sharing the time
// axis: documents finished, documents queued and running, and the age of
// the oldest queued document. A stall reads as finished going flat while
// the queue age climbs.
func timelineChart(tl Timeline) template.HTML {
	const title = "The batch over time"
	if len(tl.Points) < 2 {
		return emptyChart(title, "Not enough history to draw yet.")
	}
	span := tl.Points[len(tl.Points)-1].Seconds
	if span <= 0 {
		return emptyChart(title, "Not enough history to draw yet.")
	}
	const (
		w      = 960.0
		left   = 56.0
		right  = 924.0
		panelH = 92.0
		gap    = 30.0
		top0   = 22.0
	)
	s := newSVG(w, top0+3*panelH+2*gap+46, title)
	xOf := func(t float64) float64 { return left + t/span*(right-left) }

	type series struct {
		label string
		color string
		value func(TimelinePoint) float64
		fill  bool
	}
	panels := []struct {
		title  string
		format func(float64) string
		series []series
	}{
		{"documents finished", formatCount, []series{
			{"finished", colDone, func(p TimelinePoint) float64 { return float64(p.Finished) }, true},
		}},
		{"documents queued and running", formatCount, []series{
			{string(outcome.Queued), colQueued, func(p TimelinePoint) float64 { return float64(p.Queued) }, true},
			{"running", colRunning, func(p TimelinePoint) float64 { return float64(p.Running) }, false},
		}},
		{"age of the oldest queued document", formatTick, []series{
			{"queue age", colAge, func(p TimelinePoint) float64 { return p.OldestQueuedSeconds }, true},
		}},
	}
	for i, pn := range panels {
		p := plot{x0: left, y0: top0 + float64(i)*(panelH+gap), x1: right}
		p.y1 = p.y0 + panelH
		maxV := 0.0
		for _, sr := range pn.series {
			for _, pt := range tl.Points {
				maxV = max(maxV, sr.value(pt))
			}
		}
		top, step := countAxis(maxV)
		if i == 2 {
			top, step = durationAxis(maxV)
		}
		s.yAxis(p, top, step, pn.format)
		s.text(p.x0, p.y0-8, "start", "panel", pn.title)
		lx := p.x1
		for j := len(pn.series) - 1; j >= 0; j-- {
			sr := pn.series[j]
			pts := make([][2]float64, len(tl.Points))
			for k, pt := range tl.Points {
				pts[k] = [2]float64{xOf(pt.Seconds), p.y1 - sr.value(pt)/top*p.height()}
			}
			if sr.fill {
				s.area(pts, p.y1, sr.color, 0.18)
			}
			s.polyline(pts, sr.color, 1.8)
			if len(pn.series) > 1 {
				// A legend at the panel's top right: a swatch and a name.
				s.text(lx, p.y0-8, "end", "legend", sr.label)
				lx -= 7*float64(len(sr.label)) + 4
				s.rect(lx-10, p.y0-16, 10, 10, sr.color, 0.85)
				lx -= 22
			}
		}
	}
	bottom := top0 + 3*panelH + 2*gap
	tstep := timeStep(span)
	for t := 0.0; t <= span+tstep/1e6; t += tstep {
		s.line(xOf(t), bottom, xOf(t), bottom+4, colAxis, 1, "")
		anchor := "middle"
		if xOf(t) > right-20 {
			anchor = "end"
		}
		s.text(xOf(t), bottom+16, anchor, "tick", formatTick(t))
	}
	s.text((left+right)/2, bottom+36, "middle", "axis", "time since the batch began ("+formatTime(tl.Start)+")")
	return s.html()
}

// Bucket is one bar of a histogram: N samples in [Lo, Hi).
type Bucket struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	N  int     `json:"n"`
}

// Timeline samples the batch's queue over time, from the journal's
// timestamps, so that a stall shows as a shape: finished flat, running
// stuck, the oldest queued document ageing.
type Timeline struct {
	Start  time.Time       `json:"start,omitzero"`
	End    time.Time       `json:"end,omitzero"`
	Points []TimelinePoint `json:"points"`
}

// TimelinePoint is the batch at Seconds after the timeline's start.
type TimelinePoint struct {
	Seconds float64 `json:"t"`
	// Queued documents are admitted and waiting for an engine, Running
	// ones held by one, Finished ones final.
	Queued   int `json:"queued"`
	Running  int `json:"running"`
	Finished int `json:"finished"`
	// OldestQueuedSeconds is the age since admission of the
	// longest-waiting queued document, 0 when none waits.
	OldestQueuedSeconds float64 `json:"oldest_queued_seconds"`
	// InflightBytes are the source bytes of the documents running, an
	// upper bound of what the engines held (a claimed document may still
	// wait for byte budget).
	InflightBytes int64 `json:"inflight_bytes"`
}
