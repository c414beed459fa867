// Package batch runs a refbatch import: it streams the manifest, admits each
// row, records everything in the journal, drives a pool of OCR engines over
// the admitted documents with leases, validates what they read, hands the
// artifacts off to the store and builds the report.
//
// The journal is the only source of truth for progress, so a Run can be
// stopped at any moment (Ctrl-C, SIGKILL, a full disk) and started again with
// the same options: finished rows are skipped without being re-read, work that
// was in flight is claimed again once its lease is free, and nothing done is
// done twice.
//
// A Run never holds the manifest or the batch in memory: rows are streamed,
// the queue between admission and the engines is bounded, and each engine
// holds one document's bytes at a time.
//
// # Settings
//
// A run's settings are one typed value, [layout.Settings], which embeds
// the page policy (page.Policy: resolution, pixel cap, language, page
// steps) and which [Options] embeds in turn, so o.DPI and o.Workers read
// alike. Zero fields are the defaults; [layout.Settings.Validate] refuses
// the rest of what no run could use, naming the setting
// ([layout.SettingError]). The same value starts the OCR workers, bounds
// admission, is stored in the journal and shown in the report, and its
// policy version is in every artifact.
//
// # The read side
//
// What reads a batch lives beside this package and never imports it:
// batch/audit (verify, custody, show), batch/standing (status, health,
// history, the report), batch/review (a person's decisions, transcriptions,
// the desk's data) and batch/handover (export). What they share with the
// write path is batch/layout's.
package batch

import (
	"context"
	"log/slog"
	"time"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/page"
)

// Options configure a Run: the recorded Settings, and what is not
// recorded because it does not change what a run produces (where the
// files are, the keys, the child processes, the log).
type Options struct {
	Manifest string // the manifest CSV; manifest.Stdin for the bytes manifest.ReadStdin kept
	// StdinSHA256 is the SHA-256 of the manifest read from the standard
	// input, which the run records in its settings.
	StdinSHA256 string
	// StdinRows is its rows, recorded beside it.
	StdinRows int
	Out       string // output folder; default: DefaultOut
	// Journal, when set, is the batch's PostgreSQL journal (a
	// postgres:// URL) that processes on several machines share; Out is
	// then the one the journal recorded when it is empty (see layout.Place).
	Journal string

	layout.Settings

	// Recipients encrypt the artifacts with age; with none, Plaintext must
	// be set explicitly. They must be the batch's recorded recipients,
	// unless AddRecipients extends those deliberately: the run then
	// encrypts to the recorded ones and the added ones (see
	// journal.PinRecipients).
	Recipients    []age.Recipient
	AddRecipients []age.Recipient
	Plaintext     bool
	// Identities decrypt the artifacts of documents a rerun validates
	// again (revalidate.go); without them an encrypted batch's are left
	// as they are, and counted (Revalidated.NeedIdentity).
	Identities []age.Identity
	// User names who runs the run, for the amended events (default:
	// "unknown").
	User string

	// Worker and Admission say how Run starts its child processes: the
	// OCR workers, which it starts under the page policy and
	// WorkerMemory, and admission's PDF checks, which it runs under
	// AdmitMemory and AdmitTimeout. Neither the run nor the OCR renders or
	// parses a PDF in its own process.
	Worker    layout.Process
	Admission layout.Process

	// RootLog, when set, is a file outside Out to which the run appends
	// its final batch root (layout.AppendRootLog).
	RootLog string

	// Notify says where the batch's events (webhooks, a local command) go
	// and when a stall is one; the events are written to the journal's
	// outbox whether or not there are targets.
	Notify NotifyOptions

	Logger   *slog.Logger
	Progress Progress

	// batchID is the batch's ID, which every artifact's provenance
	// carries; Run and Join set it from the journal.
	batchID string
}

// withDefaults fills zero values. It keeps values Validate refuses, so
// that they are refused rather than replaced.
func (o Options) withDefaults() Options {
	o.Settings = o.Settings.WithDefaults()
	o.Encrypted = len(o.Recipients)+len(o.AddRecipients) > 0
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = NopProgress{}
	}
	return o
}

// inspector returns admission's PDF checks in children started as
// o.Admission says, under o's memory and time limits. Close it.
func (o Options) inspector() *admit.Pool {
	return admit.NewPool(admit.PoolConfig{Command: o.Admission,
		Budget: child.Budget{Memory: o.AdmitMemory, Timeout: o.AdmitTimeout}})
}

// engine is one OCR engine: a supervised worker child process (an
// ocr.Worker).
type engine interface {
	Open(ctx context.Context, pdf []byte) (pages int, err error)
	// Page recognises page index at dpi; 0 lets the engine fit the page
	// to the policy itself.
	Page(ctx context.Context, index, dpi int, timeout time.Duration) (ocr.PageResult, error)
	Versions() ocr.Versions
	Memory() ocr.MemoryUsage
	Alive() bool
	Close() error
}

// engineFactory starts an engine under a page policy: the run's, or the
// one a retry decision set for a document. Run calls it once per worker,
// again to replace an engine that died, and again when a document needs
// another policy than the engine's.
type engineFactory func(ctx context.Context, p page.Policy) (engine, error)

// newEngineFactory returns the factory of o's OCR workers: children started
// as o.Worker says, under the page policy given and o's worker memory
// limit. It is the one place a worker's configuration is made from the
// options.
func newEngineFactory(o Options) engineFactory {
	return func(ctx context.Context, p page.Policy) (engine, error) {
		cfg := ocr.WorkerConfig{
			Command:     o.Worker,
			Policy:      p,
			MemoryLimit: o.WorkerMemory,
		}
		w, err := ocr.StartWorker(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}
