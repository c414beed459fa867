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
// A run's settings are one typed value, [Settings], which embeds the page
// policy (page.Policy: resolution, pixel cap, language, page steps) and
// which [Options] embeds in turn, so o.DPI and o.Workers read alike. Zero
// fields are the defaults; [Options.Validate] refuses the rest of what no
// run could use, naming the setting ([SettingError]). The same value starts
// the OCR workers, bounds admission, is stored in the journal and shown in
// the report, and its policy version is in every artifact.
package batch

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/admit"
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
	// then the one the journal recorded when it is empty (see Place).
	Journal string

	Settings

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
	Worker    Process
	Admission Process

	// RootLog, when set, is a file outside Out to which the run appends
	// its final batch root (AppendRootLog).
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

// Process is how to start a child process: the refbatch binary re-executed
// in one of its hidden modes. It is the supervisor's command, under the
// name the options have always used.
type Process = child.Command

// The defaults of a Run's settings. The page policy's are page's
// (page.DefaultDPI, ...), the admission caps' admit's (admit.DefaultMaxBytes,
// admit.DefaultMaxPages, admit.DefaultInspectMemory, ...).
const (
	DefaultPageTimeout = 120 * time.Second
	DefaultAttempts    = 3
	DefaultMaxInflight = 256 << 20
	DefaultSLO         = 24 * time.Hour

	// The confidence bands' thresholds, on a document's mean confidence
	// per character, calibrated on the evaluation corpus (testdata/eval)
	// by `refbatch eval` (its "suggested" line, eval.Suggest): from 94.3
	// the documents misread 1.4% of their characters on average (23 of
	// 43 documents; 4.2% from 77 to 94.3), and under 77 every document
	// misread 10% or more (24.8% on average) while none above it did.
	DefaultHighConfidence = 94.3
	DefaultLowConfidence  = 77

	// DefaultCoverageThreshold is the unread share of a page's print
	// (after it was read again) from which its document goes to review
	// incomplete_text, calibrated on the evaluation corpus by `refbatch
	// eval` (its suggested line, eval.SuggestCoverage): pages without faint
	// print keep up to 0.107 unread (print under a rubber stamp), pages
	// whose faint print went unread 0.219 and more before recovery read
	// it; 0.16 is the middle of that gap.
	DefaultCoverageThreshold = 0.16
)

// withDefaults fills zero values. It keeps values Validate refuses, so
// that they are refused rather than replaced.
func (o Options) withDefaults() Options {
	o.Settings = o.Settings.withDefaults()
	o.Encrypted = len(o.Recipients)+len(o.AddRecipients) > 0
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = NopProgress{}
	}
	return o
}

func (s Settings) withDefaults() Settings {
	s.Policy = s.Policy.WithDefaults()
	if s.Workers == 0 {
		s.Workers = runtime.NumCPU()
	}
	lim := s.limits().WithDefaults()
	s.MaxBytes, s.MaxPages = lim.MaxBytes, lim.MaxPages
	if s.PageTimeout == 0 {
		s.PageTimeout = DefaultPageTimeout
	}
	if s.Attempts == 0 {
		s.Attempts = DefaultAttempts
	}
	if s.MaxInflightBytes == 0 {
		s.MaxInflightBytes = DefaultMaxInflight
	}
	if s.SLO == 0 {
		s.SLO = DefaultSLO
	}
	if s.HighConfidence == 0 {
		s.HighConfidence = DefaultHighConfidence
	}
	if s.LowConfidence == 0 {
		s.LowConfidence = DefaultLowConfidence
	}
	if s.CoverageThreshold == 0 {
		s.CoverageThreshold = DefaultCoverageThreshold
	}
	if s.AdmitMemory == 0 {
		s.AdmitMemory = admit.DefaultInspectMemory
	}
	if s.AdmitTimeout == 0 {
		s.AdmitTimeout = admit.DefaultInspectTimeout
	}
	return s
}

// Validate reports the first setting no run could use, with its defaults
// filled in, as a *SettingError. Run calls it before it creates anything.
func (o Options) Validate() error {
	s := o.Settings.withDefaults()
	bad := func(setting string, value any, want string) error {
		return &SettingError{Setting: setting, Value: value, Want: want}
	}
	if err := s.limits().Validate(); err != nil {
		return err
	}
	switch {
	case s.Workers < 1:
		return bad("workers", s.Workers, "1 or more")
	case s.PageTimeout <= 0:
		return bad("page_timeout", s.PageTimeout, "a duration above 0")
	case s.DocTimeout < 0:
		return bad("doc_timeout", s.DocTimeout, "a duration above 0, or 0 for the budget the page count gives")
	case s.DocTimeout > 0 && s.NoDocTimeout:
		return bad("doc_timeout", s.DocTimeout, "a duration, or none, not both")
	case s.Attempts < 1:
		return bad("attempts", s.Attempts, "1 or more")
	case s.MaxInflightBytes < 1:
		return bad("max_inflight", s.MaxInflightBytes, "1 or more")
	case s.SLO <= 0:
		return bad("slo", s.SLO, "a duration above 0")
	case s.HighConfidence <= 0 || s.HighConfidence > 100:
		return bad("high_confidence", s.HighConfidence, "above 0 and at most 100")
	case s.LowConfidence <= 0 || s.LowConfidence > s.HighConfidence:
		return bad("low_confidence", s.LowConfidence, "above 0 and not above the high confidence, "+fmt.Sprint(s.HighConfidence))
	case s.CoverageThreshold <= 0 || s.CoverageThreshold > 1:
		return bad("coverage_threshold", s.CoverageThreshold, "above 0 and at most 1")
	case s.WorkerMemory < 0:
		return bad("worker_memory", s.WorkerMemory, "bytes, or 0 for no limit")
	case s.AdmitMemory < 1:
		return bad("admit_memory", s.AdmitMemory, "1 or more bytes")
	case s.AdmitTimeout <= 0:
		return bad("admit_timeout", s.AdmitTimeout, "a duration above 0")
	}
	return nil
}

// limits are the caps admission enforces under these settings.
func (s Settings) limits() admit.Limits {
	return admit.Limits{MaxBytes: s.MaxBytes, MaxPages: s.MaxPages, Page: s.Policy}
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
