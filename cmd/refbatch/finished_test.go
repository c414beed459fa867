package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
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
	// runArgs's fastFlags, so that a later run of the binary with them
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
