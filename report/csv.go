package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// csvHeader names report.csv's columns, the JSON rows' field names plus
// the manifest each row came from, then the decision's fields, then a
// rejection's (or a review verdict's) detail and a rejection's advice,
// then whether the row was withdrawn from its manifest ("yes" or empty)
// (columns are only ever added at the end).
var csvHeader = []string{"manifest", "manifest_line", "source_id", "state", "reason", "sha256", "pages",
	"mean_confidence", "band", "attempts", "artifact", "trace_id",
	"decision", "decided_by", "decided_at", "decision_note", "detail", "advice", "withdrawn"}

// WriteCSV writes one line per row, in manifest order, under a header
// (RFC 4180, UTF-8, CRLF line ends as spreadsheets expect). A text cell
// that a spreadsheet would run as a formula (starting with =, +, -, @, a
// tab or a carriage return; a source_id comes from whoever wrote the
// manifest) is written with a leading apostrophe, which spreadsheets show
// as text. Numbers are written as numbers; mean_confidence and attempts are
// empty for rows that had no OCR.
func (r *Report) WriteCSV(w io.Writer) error {
	n := r.normalized()
	cw := newCSVWriter(w, n)
	if err := n.eachRow(cw.row); err != nil {
		return err
	}
	return cw.close()
}

// csvWriter writes report.csv a row at a time.
type csvWriter struct {
	cw       *csv.Writer
	manifest string // for rows that do not name their own
}

// newCSVWriter starts report.csv with its header.
func newCSVWriter(w io.Writer, n *Report) *csvWriter {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	cw.Write(csvHeader) // buffered: an error shows at close
	return &csvWriter{cw: cw, manifest: n.Run.Manifest}
}

func (c *csvWriter) row(row Row) error {
	manifest := row.Manifest
	if manifest == "" {
		manifest = c.manifest
	}
	conf, attempts, pages := "", "", ""
	if row.Band != "" {
		conf = strconv.FormatFloat(row.MeanConfidence, 'f', -1, 64)
	}
	if row.Attempts > 0 {
		attempts = strconv.Itoa(row.Attempts)
	}
	if row.Pages > 0 {
		pages = strconv.Itoa(row.Pages)
	}
	var decision, by, at, note string
	if d := row.Decision; d != nil {
		decision, by, at, note = d.Action, d.User+"@"+d.Host, d.At.UTC().Format(time.RFC3339), d.Note
	}
	err := c.cw.Write([]string{cell(manifest), strconv.Itoa(row.ManifestLine), cell(row.SourceID), cell(string(row.State)), cell(string(row.Reason)),
		cell(row.SHA256), pages, conf, cell(string(row.Band)), attempts, cell(row.Artifact), cell(row.TraceID),
		cell(decision), cell(by), at, cell(note), cell(row.Detail), cell(row.Advice), map[bool]string{true: "yes"}[row.Withdrawn]})
	if err != nil {
		return fmt.Errorf("writing report rows: %w", err)
	}
	return nil
}

// close flushes what the csv.Writer still buffers.
func (c *csvWriter) close() error {
	c.cw.Flush()
	if err := c.cw.Error(); err != nil {
		return fmt.Errorf("writing report rows: %w", err)
	}
	return nil
}

// cell defuses a text value a spreadsheet would evaluate as a formula.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
