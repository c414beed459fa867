package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

//go:embed report.html.tmpl
var pageSource string

// page is parsed once; a template that does not parse is a programming error
// caught by any test of this package.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"short":      shortHash,
	"seconds":    formatSeconds,
	"latency":    formatLatency,
	"percent":    func(share float64) string { return strconv.FormatFloat(100*share, 'f', 1, 64) + "%" },
	"fixed1":     func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"fixed2":     func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) },
	"bytes":      formatBytes,
	"stateClass": stateClass,
	"when":       formatTime,
	"phase":      phaseLabel,
	"phaseColour": func(name string) template.CSS {
		return template.CSS("background:" + phaseColour(name)) // from a fixed palette
	},
}).Parse(pageSource))

// htmlRowCap is the most rows each listing of report.html shows: the table
// of every row, each review reason's rows, each rejection reason's manifest
// lines. A listing that has more says how many more and points to
// report.csv, which holds every row. It keeps the page readable, and the
// page and the memory to make it bounded whatever the batch's size.
const htmlRowCap = 500

// htmlView is what the template reads; the grouping, sorting and drawing
// is done here so that the template stays a layout.
type htmlView struct {
	R      *Report
	Status string
	// StateCSS styles each state's class (stateClass).
	StateCSS []template.CSS
	Counts   []stateCount
	// NRejected counts the rejected rows.
	NRejected int
	Review    []reviewGroup
	NReview   int
	Rejected  []rejectedGroup
	Timings   []timing
	Phases    []phaseRow
	// Rows are the first rows in manifest order, NRows all of them and
	// MoreRows those not shown.
	Rows     []Row
	NRows    int
	MoreRows int
	// Decided are the first rows a person decided about (refbatch
	// review), NDecided all of them and MoreDecided those not shown.
	Decided     []Row
	NDecided    int
	MoreDecided int

	ConfidenceChart template.HTML
	OCRTimeChart    template.HTML
	BreakdownBar    template.HTML
	TimelineChart   template.HTML
}

type stateCount struct {
	State outcome.State
	N     int
	Pages int
}

// reviewGroup is the review rows of one reason, with what a person should
// do about them: N rows, of which Rows are shown and More are not.
type reviewGroup struct {
	Reason string
	Action string
	Rows   []Row
	N      int
	More   int
}

// rejectedGroup is one rejection reason with the manifest lines that got
// it: N lines, of which Lines are shown and More are not.
type rejectedGroup struct {
	Reason  string
	Meaning string
	Lines   []string
	N       int
	More    int
}

type timing struct {
	Name string
	Q    Quantiles
}

type phaseRow struct {
	Phase
	Share float64
}

// WriteHTML writes r as one self-contained HTML page: the headline (rows
// and pages per state, throughput, wall and CPU time, the SLO share),
// charts of confidence, OCR time per page, where the engines' time went and
// the batch over time, the rows a person must review (most actionable
// first), rejected rows grouped by reason, the runs, settings and versions,
// and the rows themselves. Each listing of rows shows at most htmlRowCap of
// them and says how many more report.csv holds. The page has inline CSS
// (with print rules for A4) and inline SVG, no scripts and no links, so it
// opens offline and can be mailed. Every value from the report is escaped
// by html/template.
func (r *Report) WriteHTML(w io.Writer) error {
	n := r.normalized()
	pr := newPageRows(n)
	if err := n.eachRow(func(row Row) error { pr.add(row); return nil }); err != nil {
		return err
	}
	// Render to memory first so that a template error leaves no half page.
	var buf bytes.Buffer
	if err := renderHTML(&buf, n, pr); err != nil {
		return err
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing report page: %w", err)
	}
	return nil
}

// renderHTML executes the page template for n, whose rows pr has seen.
func renderHTML(w io.Writer, n *Report, pr *pageRows) error {
	v := htmlView{R: n, Status: n.Status(), StateCSS: stateCSS(), Rows: pr.first, NRows: pr.n, MoreRows: pr.n - len(pr.first),
		NRejected: n.Summary.States[outcome.Rejected], Decided: pr.decided, NDecided: pr.nDecided, MoreDecided: pr.nDecided - len(pr.decided)}
	if v.Rows == nil {
		v.Rows = []Row{}
	}
	for _, st := range orderedStates(n.Summary.States) {
		v.Counts = append(v.Counts, stateCount{st, n.Summary.States[st], n.Summary.StatePages[st]})
	}
	v.Review = pr.reviewLane()
	for _, g := range v.Review {
		v.NReview += g.N
	}
	v.Rejected = pr.rejectedGroups()
	v.Timings = []timing{
		{"OCR time per page", n.Summary.OCRPageSeconds},
		{"Queue age at claim", n.Summary.QueueAgeSeconds},
		{"Admission to start", n.Summary.AdmissionToStartSeconds},
	}
	// Shares are within a clock: wall phases of the wall time, engine
	// phases of the engine time.
	totals := map[string]float64{}
	for _, ph := range n.Summary.TimeBreakdown {
		totals[ph.Clock] += ph.Seconds
	}
	for _, ph := range n.Summary.TimeBreakdown {
		row := phaseRow{Phase: ph}
		if t := totals[ph.Clock]; t > 0 {
			row.Share = ph.Seconds / t
		}
		v.Phases = append(v.Phases, row)
	}
	v.ConfidenceChart = confidenceChart(pr.confidence.buckets(), n.Summary.ConfidenceBands)
	v.OCRTimeChart = ocrTimeChart(n.Summary.OCRPageHistogram, n.Summary.OCRPageSeconds)
	v.BreakdownBar = breakdownBar(n.Summary.TimeBreakdown)
	v.TimelineChart = timelineChart(n.Timeline)
	if err := page.Execute(w, v); err != nil {
		return fmt.Errorf("rendering report page: %w", err)
	}
	return nil
}

// pageRows keeps, from rows seen one at a time in manifest order, what
// report.html shows of them: counts, the confidence histogram, and at most
// htmlRowCap rows per listing.
type pageRows struct {
	bands      Bands
	many       bool // a report over several manifests: lines name theirs
	n          int
	first      []Row
	confidence confidenceBins
	review     map[outcome.Reason]*reviewRows
	rejected   map[outcome.Reason]*rejectedLines
	decided    []Row
	nDecided   int
}

// reviewRows are the review rows of one reason: n in all, and the most
// confident of them (the lane's order within a reason).
type reviewRows struct {
	n    int
	rows []Row
}

// rejectedLines are the rows of one rejection reason: n in all, and the
// manifest lines of the first of them.
type rejectedLines struct {
	n     int
	lines []string
}

func newPageRows(n *Report) *pageRows {
	return &pageRows{bands: n.Summary.ConfidenceBands, many: n.Run.Manifest == "",
		review: map[outcome.Reason]*reviewRows{}, rejected: map[outcome.Reason]*rejectedLines{}}
}

func (p *pageRows) add(r Row) {
	p.n++
	if len(p.first) < htmlRowCap {
		p.first = append(p.first, r)
	}
	p.confidence.add(r)
	if r.Decision != nil {
		p.nDecided++
		if len(p.decided) < htmlRowCap {
			p.decided = append(p.decided, r)
		}
	}
	switch r.State {
	case outcome.Review:
		g := p.review[r.Reason]
		if g == nil {
			g = &reviewRows{}
			p.review[r.Reason] = g
		}
		g.n++
		g.rows = append(g.rows, r)
		// Trim only now and then: sorting at every row would cost more
		// than the memory saved.
		if len(g.rows) >= 2*htmlRowCap {
			g.trim()
		}
	case outcome.Rejected:
		g := p.rejected[r.Reason]
		if g == nil {
			g = &rejectedLines{}
			p.rejected[r.Reason] = g
		}
		g.n++
		if len(g.lines) < htmlRowCap {
			l := strconv.Itoa(r.ManifestLine)
			if p.many && r.Manifest != "" {
				l = baseName(r.Manifest) + ":" + l
			}
			g.lines = append(g.lines, l)
		}
	}
}

// trim sorts the rows in the lane's order, most confident first (their
// text is the most trustworthy, so a look settles them fastest), then
// manifest order, and keeps the first htmlRowCap.
func (g *reviewRows) trim() {
	slices.SortStableFunc(g.rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.MeanConfidence, a.MeanConfidence), compareRows(a, b))
	})
	if len(g.rows) > htmlRowCap {
		clear(g.rows[htmlRowCap:])
		g.rows = g.rows[:htmlRowCap]
	}
}

// reviewLane groups the review rows by reason in the lane's order (see
// explanations); within a reason the most confident come first, then
// manifest order.
func (p *pageRows) reviewLane() []reviewGroup {
	reasons := slices.SortedFunc(maps.Keys(p.review), compareReview)
	var out []reviewGroup
	for _, reason := range reasons {
		g := p.review[reason]
		g.trim()
		label := string(reason)
		if reason == "" {
			label = "(no reason)" // a bug upstream; show it anyway
		}
		out = append(out, reviewGroup{Reason: label, Action: reviewAction(reason, p.bands.Low), Rows: g.rows, N: g.n, More: g.n - len(g.rows)})
	}
	return out
}

// rejectedGroups groups rejected rows by reason, most frequent first (ties
// by name), with their manifest lines (prefixed by the manifest's name when
// the report covers several).
func (p *pageRows) rejectedGroups() []rejectedGroup {
	counts := make([]reasonCount, 0, len(p.rejected))
	for reason, g := range p.rejected {
		if reason != "" {
			counts = append(counts, reasonCount{reason, g.n})
		}
	}
	sortReasonCounts(counts)
	var out []rejectedGroup
	group := func(reason outcome.Reason, label, meaning string) {
		g := p.rejected[reason]
		out = append(out, rejectedGroup{label, meaning, g.lines, g.n, g.n - len(g.lines)})
	}
	for _, rc := range counts {
		group(rc.Reason, string(rc.Reason), explanations[rc.Reason].meaning)
	}
	if _, ok := p.rejected[""]; ok { // a rejected row without a reason is a bug upstream; show it anyway
		group("", "(no reason)", "")
	}
	return out
}

func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}

// shortHash keeps enough of a SHA-256 to find it, short enough for a table.
func shortHash(h string) string {
	const n = 12
	if len(h) <= n {
		return h
	}
	return h[:n]
}

// stateClass maps a state to a CSS class; the final states have one each
// (stateCSS), every other shares st-other, so that a state string never
// becomes markup.
func stateClass(state outcome.State) string {
	if state.Final() {
		return "st-" + string(state)
	}
	return "st-other"
}

// stateColours are the border colours of the final states' cards and
// badges; stateOther is that of any other state.
var stateColours = map[outcome.State]string{
	outcome.Done:      colDone,
	outcome.Review:    colReview,
	outcome.Rejected:  colRejected,
	outcome.Duplicate: colAxis,
}

const stateOther = colRunning

// stateCSS returns a rule per class stateClass gives: the final states in
// display order, then st-other.
func stateCSS() []template.CSS {
	var out []template.CSS
	rule := func(class, colour string) {
		// Both come from this file, never from a report.
		out = append(out, template.CSS("."+class+" { border-color: "+colour+"; }"))
	}
	for _, st := range outcome.States() {
		if st.Final() {
			rule(stateClass(st), stateColours[st])
		}
	}
	rule(stateClass(""), stateOther)
	return out
}

// formatTime shows a time to the second with its offset; zero is unknown.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
