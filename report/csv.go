package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// csvHeader names report.csv's columns, the JSON rows' field names plus
// the manifest each row came from.
var csvHeader = []string{"manifest", "manifest_line", "source_id", "state", "reason", "sha256", "pages",
	"mean_confidence", "band", "attempts", "artifact", "trace_id"}

// WriteCSV writes one line per row, in manifest order, under a header
// (RFC 4180, UTF-8, CRLF line ends as spreadsheets expect). A text cell
// that a spreadsheet would run as a formula (starting with =, +, -, @, a
// tab or a carriage return; a source_id comes from whoever wrote the
// manifest) is written with a leading apostrophe, which spreadsheets show
// as text. Numbers are written as numbers; mean_confidence and attempts are
// empty for rows that had no OCR.
func (r *Report) WriteCSV(w io.Writer) error {
	n := r.normalized()
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.UseCRLF = true
	cw.Write(csvHeader)
	for _, row := range n.Rows {
		manifest := row.Manifest
		if manifest == "" {
			manifest = n.Run.Manifest
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
		cw.Write([]string{cell(manifest), strconv.Itoa(row.ManifestLine), cell(row.SourceID), cell(row.State), cell(row.Reason),
			cell(row.SHA256), pages, conf, cell(row.Band), attempts, cell(row.Artifact), cell(row.TraceID)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("encoding report rows: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
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
