package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/refbatch/refbatch/report/outcome"
)

// File names WriteFiles writes in the output folder.
const (
	JSONFile = "report.json"
	CSVFile  = "report.csv"
	HTMLFile = "report.html"
)

// tempPrefix matches the artifacts store's, so one sweep rule covers both.
const tempPrefix = ".tmp-"

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
	n.Runs = nonNil(r.Runs)
	n.Summary.States = cloneMap(r.Summary.States)
	n.Summary.Reasons = cloneMap(r.Summary.Reasons)
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
// so an error may leave part of the report in w: WriteFiles writes to a
// temp file for that reason.
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

// WriteFiles writes report.json, report.csv and report.html into dir
// (created 0700 if missing), each atomically: written to a temp file in dir
// with mode 0600 and fsynced, then, once all three are complete, renamed
// into place and the folder fsynced. A rendering error writes nothing.
//
// The rows are read once, in one pass that writes them to report.json and
// report.csv as they come and keeps for report.html only what its capped
// listings show, so memory does not grow with the batch.
func WriteFiles(dir string, r *Report) (err error) {
	n := r.normalized()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating report folder: %w", err)
	}
	var files []*tempFile
	defer func() {
		if err != nil {
			for _, f := range files {
				f.discard()
			}
		}
	}()
	for _, name := range []string{JSONFile, CSVFile, HTMLFile} {
		f, err := createTemp(dir, name)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	js, table, page := files[0], files[1], files[2]

	jw, err := newJSONWriter(js.w, n)
	if err != nil {
		return err
	}
	cw := newCSVWriter(table.w, n)
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
	if err := renderHTML(page.w, n, pr); err != nil {
		return err
	}
	for _, f := range files {
		if err := f.commit(); err != nil {
			return err
		}
	}
	// Every file is complete and on disk: only now replace the old ones.
	for _, f := range files {
		if err := os.Rename(f.path, filepath.Join(dir, f.name)); err != nil {
			return fmt.Errorf("renaming %s into place: %w", f.name, err)
		}
		f.renamed = true
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing report folder: %w", err)
	}
	return errors.Join(wrapErr("syncing report folder", d.Sync()), d.Close())
}

// tempFile is one report file being written: a temp file in the folder it
// will be renamed into, behind a buffer.
type tempFile struct {
	name, path string
	f          *os.File
	w          *bufio.Writer
	closed     bool
	renamed    bool
}

func createTemp(dir, name string) (*tempFile, error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", name, err)
	}
	t := &tempFile{name: name, path: f.Name(), f: f, w: bufio.NewWriterSize(f, 64<<10)}
	if err := f.Chmod(0o600); err != nil {
		t.discard()
		return nil, fmt.Errorf("writing %s: %w", name, err)
	}
	return t, nil
}

// commit flushes, fsyncs and closes the temp file.
func (t *tempFile) commit() error {
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", t.name, err)
	}
	if err := t.f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", t.name, err)
	}
	t.closed = true
	if err := t.f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", t.name, err)
	}
	return nil
}

// discard removes the temp file unless it was renamed into place.
func (t *tempFile) discard() {
	if !t.closed {
		t.f.Close()
	}
	if !t.renamed {
		os.Remove(t.path)
	}
}

func wrapErr(context string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", context, err)
}
