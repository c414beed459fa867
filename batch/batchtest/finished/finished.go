// Package finished builds finished batches for tests without OCR: the
// real write path (batch.Run: admission, the journal, validation, the
// artifact writer, the store, the report) over batchtest's documents, with
// a stand-in engine that reads each page's text from the PDF instead of
// rendering and recognising it. The output folder is the one a run of
// the same manifest leaves, rows in the states the documents' text and
// the manifest choose (done in a band, review for a reason, an engine
// that dies included, rejected at admission, duplicate), in a
// fraction of a second of CPU.
//
// The children run in the test binary: its TestMain calls ChildMain
// first.
package finished

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/batchtest"
	"github.com/refbatch/refbatch/batch/layout"
)

// childEnv names the child mode a test binary re-executed by Run serves.
const childEnv = "REFBATCH_BATCHTEST_CHILD"

// ChildMain serves the child mode Run started the test binary in, and
// reports whether it was one, with the exit code. Call it first in
// TestMain:
//
//	if code, ok := finished.ChildMain(); ok {
//		os.Exit(code)
//	}
func ChildMain() (code int, ok bool) {
	switch os.Getenv(childEnv) {
	case "worker":
		return serveWorker(), true
	case "admit":
		return admit.ServeMain(), true
	}
	return 0, false
}

// Run is batch.Run with the stand-in engine, and admission's checks in
// the test binary: o.Worker and o.Admission are replaced; the rest of o
// is the run's, as the CLI would set it.
func Run(ctx context.Context, o batch.Options) (*batch.Result, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the test binary: %w", err)
	}
	o.Worker = layout.Process{Path: exe, Env: []string{childEnv + "=worker"}}
	o.Admission = layout.Process{Path: exe, Env: []string{childEnv + "=admit"}}
	return batch.Run(ctx, o)
}

// Row is one manifest row of a batch Write lays out: its fields, and the
// document at Path (relative to the manifest's folder), which Write
// writes with Referral(Lines...) unless Lines is nil (a row whose file
// the test writes itself, or leaves missing).
type Row struct {
	SourceID, ParticipantID, Date, Consent string
	Path                                   string
	Lines                                  []string
}

// Good is a row that reads as done: a referral holding its participant
// ID and date, in docs/.
func Good(sourceID, participantID, date string) Row {
	return Row{SourceID: sourceID, ParticipantID: participantID, Date: date, Consent: "yes",
		Path:  "docs/" + sourceID + ".pdf",
		Lines: []string{"Referral to the clinic of " + sourceID, "Participant ID: " + participantID, "Referral date: " + date}}
}

// Write writes rows' documents under dir and their manifest,
// dir/manifest.csv, in the order given, and returns the manifest's path.
func Write(dir string, rows []Row) (string, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"source_id", "participant_id", "referral_date", "consent", "path"})
	for _, r := range rows {
		w.Write([]string{r.SourceID, r.ParticipantID, r.Date, r.Consent, r.Path})
		if r.Lines == nil {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(r.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, batchtest.Referral(r.Lines...), 0o600); err != nil {
			return "", err
		}
	}
	w.Flush()
	path := filepath.Join(dir, "manifest.csv")
	return path, os.WriteFile(path, b.Bytes(), 0o600)
}
