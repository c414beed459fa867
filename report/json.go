package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/refbatch/refbatch/report/outcome"
)

// File names of the report in the output folder.
const (
	JSONFile = "report.json"
	CSVFile  = "report.csv"
	HTMLFile = "report.html"
)

// normalized returns a copy of r ready to render: rows in manifest order,
// no nil maps or slices (they would read as null), every final state
// counted, and the schema version set.
func (r *Report) normalized() *Report {
	n := *r
	if n.SchemaVersion == 0 {
		n.SchemaVersion = SchemaVersion
	}
	n.Rows = sortedRows(r.Rows)
	n.Run.Settings = cloneMap(r.Run.Settings)
	n.Run.Versions = cloneMap(r.Run.Versions)
	n.Run.Manifests = nonNil(r.Run.Manifests)
	n.Run.Recipients = nonNil(r.Run.Recipients)
	n.Runs = nonNil(r.Runs)
	n.Summary.States = cloneMap(r.Summary.States)
	n.Summary.Reasons = cloneMap(r.Summary.Reasons)
	n.Summary.NeedPersonReasons = cloneMap(r.Summary.NeedPersonReasons)
	n.Summary.StatePages = cloneMap(r.Summary.StatePages)
	for _, st := range finalStates() {
		n.Summary.States[st] += 0
	}
	n.Summary.StatePages[outcome.Done] += 0
	n.Summary.StatePages[outcome.Review] += 0
	n.Summary.OCRPageHistogram = nonNil(r.Summary.OCRPageHistogram)
	n.Summary.TimeBreakdown = nonNil(r.Summary.TimeBreakdown)
	n.Timeline.Points = nonNil(r.Timeline.Points)
	return &n
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return slices.Clone(s)
}

func cloneMap[K ~string, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return maps.Clone(m)
}

// WriteJSON writes r as indented JSON with a stable order: rows in manifest
// order, map keys sorted. It fails on NaN or infinite numbers, which JSON
// cannot carry. The rows are written one at a time, never all in memory,
// so an error may leave part of the report in w: batch.WriteReport writes
// to temp files for that reason.
func (r *Report) WriteJSON(w io.Writer) error {
	n := r.normalized()
	jw, err := newJSONWriter(w, n)
	if err != nil {
		return err
	}
	if err := n.eachRow(jw.row); err != nil {
		return err
	}
	return jw.close()
}

// jsonWriter writes report.json a row at a time. Everything but the rows
// is encoded as one value around an empty rows array, exactly as
// json.Encoder would indent the whole report, and the rows are spliced
// into that array: the file is the same bytes as encoding the report at
// once.
type jsonWriter struct {
	w    io.Writer
	tail []byte
	rows int
}

// rowsKey is the rows array as it is indented at the top level of an
// encoded report; a string value cannot hold the raw newline, so it
// matches nothing else.
var rowsKey = []byte("\n  \"rows\": []")

// newJSONWriter writes the part of n before its rows.
func newJSONWriter(w io.Writer, n *Report) (*jsonWriter, error) {
	frame := *n
	frame.Rows = []Row{}
	b, err := json.MarshalIndent(&frame, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding report: %w", err)
	}
	i := bytes.Index(b, rowsKey)
	if i < 0 || bytes.Count(b, rowsKey) != 1 {
		return nil, errors.New("encoding report: rows array not found") // a change of Report's shape
	}
	head := i + len(rowsKey) - len("[]")
	jw := &jsonWriter{w: w, tail: append(b[head+len("[]"):], '\n')}
	if _, err := w.Write(b[:head]); err != nil {
		return nil, fmt.Errorf("writing report: %w", err)
	}
	return jw, nil
}

// row writes one row of the rows array.
func (jw *jsonWriter) row(r Row) error {
	b, err := json.MarshalIndent(r, "    ", "  ")
	if err != nil {
		return fmt.Errorf("encoding report row %d: %w", r.ManifestLine, err)
	}
	sep := ",\n    "
	if jw.rows == 0 {
		sep = "[\n    "
	}
	jw.rows++
	if _, err := io.WriteString(jw.w, sep); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if _, err := jw.w.Write(b); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

// close ends the rows array and writes the rest of the report.
func (jw *jsonWriter) close() error {
	end := "\n  ]"
	if jw.rows == 0 {
		end = "[]"
	}
	if _, err := io.WriteString(jw.w, end); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if _, err := jw.w.Write(jw.tail); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

// ReadJSON reads a report.json written by WriteJSON. It refuses a file of a
// newer schema version than this package knows.
func ReadJSON(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decoding report %s: %w", path, err)
	}
	switch {
	case r.SchemaVersion == 0:
		return nil, fmt.Errorf("decoding report %s: no schema_version, not a refbatch report", path)
	case r.SchemaVersion > SchemaVersion:
		return nil, fmt.Errorf("decoding report %s: schema_version %d is newer than this refbatch reads (%d)", path, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}

// Render writes the report as report.json to js, report.csv to table and
// report.html to page. A rendering error may leave any of them partly
// written; the caller writes them to temp files and renames them into
// place only on success (batch.WriteReport does).
//
// The rows are read once, in one pass that writes them to report.json and
// report.csv as they come and keeps for report.html only what its capped
// listings show, so memory does not grow with the batch.
func Render(r *Report, js, table, page io.Writer) error {
	n := r.normalized()
	jw, err := newJSONWriter(js, n)
	if err != nil {
		return err
	}
	cw := newCSVWriter(table, n)
	pr := newPageRows(n)
	err = n.eachRow(func(row Row) error {
		if err := jw.row(row); err != nil {
			return err
		}
		if err := cw.row(row); err != nil {
			return err
		}
		pr.add(row)
		return nil
	})
	if err != nil {
		return err
	}
	if err := jw.close(); err != nil {
		return err
	}
	if err := cw.close(); err != nil {
		return err
	}
	return renderHTML(page, n, pr)
}
