package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
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
	"sub":        func(a, b int) int { return a - b },
	"phaseColour": func(name string) template.CSS {
		return template.CSS("background:" + phaseColour(name)) // from a fixed palette
	},
}).Parse(pageSource))

// htmlRowCap is the most rows each listing of report.html shows: the table
// of every row, each review reason's rows, each rejection reason's rows,
// the done and the duplicate rows. A listing that has more says how many more and points to
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
	// NRejected counts the rejected rows, NeedPerson the rows still open
	// (Row.Open) among them and the review
	// rows.
	NRejected  int
	NeedPerson int
	Review     []reviewGroup
	NReview    int
	Rejected   []rejectedGroup
	// Done and Duplicate are the compact lists of the rows that need
	// nothing, at the end of the page.
	Done      stateList
	Duplicate stateList
	Withdrawn stateList
	Dismissed stateList
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

// stateCount is a state's card: its rows and pages, and the id of its
// list on the page ("" for a state without one).
type stateCount struct {
	State  outcome.State
	N      int
	Pages  int
	Anchor string
}

type timing struct {
	Name string
	Q    Quantiles
}

type phaseRow struct {
	Phase
	Share float64
}

// WriteHTML writes r as one self-contained HTML page that leads with the
// work to do. In order: the headline (rows and pages per state, each state
// card a link to its list; throughput, wall and CPU time, the SLO share);
// the rows a person must review, grouped by reason, most urgent first, each
// group with what to look at and the `refbatch review` commands that decide
// it; the rejected rows grouped by reason, each with how to fix it before
// the rerun; then the charts (confidence, OCR time per page, where the
// engines' time went, the batch over time) and the runs; compact lists of
// the done and duplicate rows, the table of every row, and the settings and
// versions last. Each listing of rows shows at most htmlRowCap of them and
// says how many more report.csv holds. The page has inline CSS (with print
// rules for A4) and inline SVG, no scripts and no links but to its own
// sections, so it opens offline and can be mailed. Every value from the
// report is escaped by html/template.
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
		v.Counts = append(v.Counts, stateCount{st, n.Summary.States[st], n.Summary.StatePages[st], stateAnchor(st)})
	}
	v.Review = pr.reviewLane()
	for _, g := range v.Review {
		v.NReview += g.N
	}
	v.Rejected = pr.rejectedGroups()
	v.NeedPerson = n.Summary.NeedPerson
	v.Done = pr.stateList(outcome.Done, "Done", "Searchable text published and verified: nothing to do.")
	v.Duplicate = pr.stateList(outcome.Duplicate, "Duplicates", "The same source ID and bytes as an earlier row, whose document and text they share: nothing to do.")
	v.Withdrawn = stateList{Anchor: "withdrawn", Title: "Withdrawn", Rows: pr.withdrawn.rows, N: pr.withdrawn.n,
		More: pr.withdrawn.n - len(pr.withdrawn.rows),
		Note: "No longer in the manifest: deleted from it since a run read them. Each keeps its verdict, its document and its artifact, needs no one, and export leaves it out unless asked (--withdrawn); put the row back to take it up again."}
	v.Dismissed = stateList{Anchor: "dismissed", Title: "Rejected, dismissed", Rows: pr.dismissed.rows, N: pr.dismissed.n,
		More: pr.dismissed.n - len(pr.dismissed.rows),
		Note: "Rejected rows a person acknowledged (refbatch review dismiss): they stay rejected, with their reason, and need nothing more."}
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

// stateAnchor is the id of the list of st's rows on the page: the state's
// name for a final state, which has one, "" for any other. The template's
// section ids are the same names.
func stateAnchor(st outcome.State) string {
	if st.Final() {
		return string(st)
	}
	return ""
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
