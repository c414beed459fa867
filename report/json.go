package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	for _, st := range finalStates {
		n.Summary.States[st] += 0
	}
	n.Summary.StatePages[stateDone] += 0
	n.Summary.StatePages[stateReview] += 0
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

func cloneMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return maps.Clone(m)
}

// WriteJSON writes r as indented JSON with a stable order: rows in manifest
// order, map keys sorted. It fails on NaN or infinite numbers, which JSON
// cannot carry.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.normalized()); err != nil {
		return fmt.Errorf("encoding report: %w", err)
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
// (created 0700 if missing), each atomically: rendered in memory, written
// to a temp file in dir with mode 0600, fsynced, renamed into place, and
// the folder fsynced. A rendering error writes nothing.
func WriteFiles(dir string, r *Report) error {
	var js, table, page bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		return err
	}
	if err := r.WriteCSV(&table); err != nil {
		return err
	}
	if err := r.WriteHTML(&page); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating report folder: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{JSONFile, js.Bytes()}, {CSVFile, table.Bytes()}, {HTMLFile, page.Bytes()}} {
		if err := writeAtomic(dir, f.name, f.data); err != nil {
			return err
		}
	}
	return nil
}

func writeAtomic(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", name, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("renaming %s into place: %w", name, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing folder for %s: %w", name, err)
	}
	return errors.Join(wrapErr("syncing folder for "+name, d.Sync()), d.Close())
}

func wrapErr(context string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", context, err)
}
