package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"time"
)

//go:embed report.html.tmpl
var pageSource string

// page is parsed once; a template that does not parse is a programming error
// caught by any test of this package.
var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"short":      shortHash,
	"seconds":    formatSeconds,
	"percent":    func(share float64) string { return strconv.FormatFloat(100*share, 'f', 1, 64) + "%" },
	"fixed1":     func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) },
	"fixed2":     func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) },
	"bytes":      formatBytes,
	"stateClass": stateClass,
	"when":       formatTime,
}).Parse(pageSource))

// htmlView is what the template reads; the grouping is done here so that the
// template stays a layout.
type htmlView struct {
	R        *Report
	Status   string
	Counts   []stateCount
	Review   []Row
	Rejected []rejectedGroup
	Timings  []timing
}

type stateCount struct {
	State string
	N     int
}

// rejectedGroup is one rejection reason with the manifest lines that got it.
type rejectedGroup struct {
	Reason string
	Lines  []int
}

type timing struct {
	Name string
	Q    Quantiles
}

// WriteHTML writes r as one self-contained HTML page: headline counts, the
// rows a person must review, rejected rows grouped by reason, every row, and
// the run's settings and versions. The page has inline CSS (with print rules
// for A4), no scripts and no links, so it opens offline and can be mailed.
// Every value from the report is escaped by html/template.
func (r *Report) WriteHTML(w io.Writer) error {
	n := r.normalized()
	v := htmlView{R: n, Status: "complete"}
	if !n.Complete {
		v.Status = "incomplete"
	}
	for _, st := range orderedStates(n.Summary.States) {
		v.Counts = append(v.Counts, stateCount{st, n.Summary.States[st]})
	}
	groups := map[string][]int{}
	for _, row := range n.Rows {
		switch row.State {
		case stateReview:
			v.Review = append(v.Review, row)
		case stateRejected:
			groups[row.Reason] = append(groups[row.Reason], row.ManifestLine)
		}
	}
	for _, rc := range reasonsByState(n.Rows)[stateRejected] {
		v.Rejected = append(v.Rejected, rejectedGroup{rc.Reason, groups[rc.Reason]})
	}
	if lines, ok := groups[""]; ok { // a rejected row without a reason is a bug upstream; show it anyway
		v.Rejected = append(v.Rejected, rejectedGroup{"(no reason)", lines})
	}
	v.Timings = []timing{
		{"OCR time per page", n.Summary.OCRPageSeconds},
		{"Queue age", n.Summary.QueueAgeSeconds},
		{"Admission to start", n.Summary.AdmissionToStartSeconds},
	}

	// Render to memory first so that a template error leaves no half page.
	var buf bytes.Buffer
	if err := page.Execute(&buf, v); err != nil {
		return fmt.Errorf("rendering report page: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing report page: %w", err)
	}
	return nil
}

// shortHash keeps enough of a SHA-256 to find it, short enough for a table.
func shortHash(h string) string {
	const n = 12
	if len(h) <= n {
		return h
	}
	return h[:n]
}

// stateClass maps a state to a CSS class; unknown states share one so that
// a state string never becomes markup.
func stateClass(state string) string {
	if slices.Contains(finalStates, state) {
		return "st-" + state
	}
	return "st-other"
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
