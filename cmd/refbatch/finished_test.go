package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/batchtest/finished"
)

// finishedBatch writes rows (finished.Write) into dir and leaves in out
// the batch `refbatch run` with runArgs's settings leaves of them,
// encrypted to recipients or, with none, in plaintext, without OCR: the
// real write path with a stand-in engine that reads each page's drawn
// lines (finished.Run). It is for tests of what reads a finished batch
// (status, report, verify, show, export, review); a test of recognition
// runs the binary on real documents. It returns the manifest's path and
// the run's log, at the level and in the format `refbatch run` logs on
// stderr.
func finishedBatch(t *testing.T, dir, out string, rows []finished.Row, recipients ...string) (manifest, log string) {
	t.Helper()
	return finishedBatchWith(t, dir, out, rows, nil, recipients...)
}

// inReview leaves in out, in dir (a new temporary folder), a finished
// batch of one document in review: R-1, whose letter prints P-000101 and
// whose row says P-000000 (id_not_found).
func inReview(t *testing.T) (dir, out string) {
	t.Helper()
	dir = t.TempDir()
	out = filepath.Join(dir, "out")
	row := finished.Good("R-1", "P-000101", "2024-01-02")
	row.ParticipantID = "P-000000"
	finishedBatch(t, dir, out, []finished.Row{row})
	return dir, out
}

// finishedBatchWith is finishedBatch with the run's options changed by
// set, as a test's own flags change them (set may be nil).
func finishedBatchWith(t *testing.T, dir, out string, rows []finished.Row, set func(*batch.Options), recipients ...string) (manifest, log string) {
	t.Helper()
	manifest, err := finished.Write(dir, rows)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	o := batch.Options{Manifest: manifest, Out: out, Plaintext: len(recipients) == 0,
		Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	// sampleArgs's fastFlags, so that a later run of the binary with them
	// finds the settings it records.
	o.DPI, o.PageTimeout = 150, 60*time.Second
	for _, r := range recipients {
		rec, err := age.ParseX25519Recipient(strings.TrimSpace(r))
		if err != nil {
			t.Fatal(err)
		}
		o.Recipients = append(o.Recipients, rec)
	}
	if set != nil {
		set(&o)
	}
	if _, err := finished.Run(context.Background(), o); err != nil {
		t.Fatalf("building the finished batch in %s: %v", filepath.Base(out), err)
	}
	return manifest, logged.String()
}

// sampleRows are the sample manifest's rows of the given source_ids
// (every row of each, duplicates included, in the manifest's order) for
// finishedBatch: each document of the sample becomes a referral that
// holds the row's ID and date (finished.Good's lines; a second file of
// the same source_id, a rescan, says so in its first line), and the
// sample's files that are not documents (empty, not a PDF) are copied
// into dir as they are; a missing file stays missing. Admission then
// rejects the rows it rejects in the sample, and the documents read as
// done.
func sampleRows(t *testing.T, dir string, ids ...string) []finished.Row {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	var rows []finished.Row
	for _, row := range readCSV(t, filepath.Join(sampleDir(t), "manifest.csv")) {
		if !slices.Contains(ids, row["source_id"]) {
			continue
		}
		r := finished.Good(row["source_id"], row["participant_id"], row["referral_date"])
		r.Consent, r.Path, r.Lines = row["consent"], row["path"], nil
		src := filepath.Join(sampleDir(t), row["path"])
		switch info, err := os.Stat(src); {
		case err != nil || !strings.HasPrefix(row["path"], "docs/"):
		case info.Size() < 1024:
			copyFile(t, src, filepath.Join(dir, row["path"]))
		default:
			r.Lines = finished.Good(r.SourceID, r.ParticipantID, r.Date).Lines
			if strings.Contains(r.Path, "rescan") {
				r.Lines[0] = "A rescan of the referral " + r.SourceID
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// withConf is row read with its words at confidence conf by the stand-in
// engine; a row with no document to write is left as it is.
func withConf(row finished.Row, conf string) finished.Row {
	if row.Lines == nil {
		return row
	}
	row.Lines = append(slices.Clip(row.Lines), "batchtest:conf="+conf)
	return row
}
