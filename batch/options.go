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
package batch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/page"
)

// Engine is one OCR engine: in production a supervised worker child process
// (ocr.Worker), in tests possibly one with injected faults.
type Engine interface {
	Open(ctx context.Context, pdf []byte) (pages int, err error)
	// Page recognises page index at dpi; 0 lets the engine fit the page
	// to the policy itself.
	Page(ctx context.Context, index, dpi int, timeout time.Duration) (ocr.PageResult, error)
	Versions() ocr.Versions
	Alive() bool
	Close() error
}

// EngineFactory starts an engine. Run calls it once per worker, and again to
// replace an engine that died.
type EngineFactory func(ctx context.Context) (Engine, error)

// Options configure a Run. Zero values take the defaults (the constants
// below).
type Options struct {
	Manifest string // the manifest CSV
	Root     string // folder manifest paths are relative to; default: the manifest's folder
	Out      string // output folder; default: refbatch-out beside the manifest

	Workers       int
	DPI           int
	MinDPI        int
	MaxBytes      int64
	MaxPages      int
	MaxPagePixels int64
	PageTimeout   time.Duration
	DocTimeout    time.Duration // 0: none
	Attempts      int
	Lang          string
	// MaxInflightBytes bounds the source bytes held by the engines at once
	// (a document's bytes are held from read until its last page); an
	// engine waits for room rather than grow memory. One document larger
	// than the budget still runs, alone.
	MaxInflightBytes int64
	SLO              time.Duration // admission to done; for the report's within_slo share

	// ForceOCR recognises every page even when it has a text layer;
	// NoOrientation, NoDeskew and NoDespeckle switch those page steps off
	// (they are on by default). The engine factory applies them; they are
	// here to be recorded in the policy and the settings.
	ForceOCR      bool
	NoOrientation bool
	NoDeskew      bool
	NoDespeckle   bool
	// NoCoverage switches off the measurement of the ink no recognised
	// word covers, the reading again of what was left unread, and the
	// column reading; with it no document goes to review incomplete_text.
	NoCoverage bool
	// CoverageThreshold is the unread share of a page's text-like ink
	// (after recovery) above which the document goes to review
	// incomplete_text.
	CoverageThreshold float64

	// NoIDCheck skips the participant ID check, for corpora that carry no
	// participant IDs (a test corpus); it is recorded in the settings.
	NoIDCheck bool

	// Recipients encrypt the artifacts with age; with none, Plaintext must
	// be set explicitly.
	Recipients []age.Recipient
	Plaintext  bool

	// Confidence bands: a document's mean word confidence at or above High
	// is high, at or above Low medium, and below Low it goes to review as
	// low_confidence.
	HighConfidence float64
	LowConfidence  float64

	// Engine starts the OCR engines; Inspector runs admission's PDF
	// checks (an admit.Pool of supervised children in refbatch: the run
	// itself never parses a PDF).
	Engine    EngineFactory
	Inspector admit.Inspector
	Logger    *slog.Logger
	Progress  Progress
}

// The defaults of a Run.
const (
	DefaultDPI           = 300
	DefaultMinDPI        = 150
	DefaultMaxBytes      = 64 << 20
	DefaultMaxPages      = 200
	DefaultMaxPagePixels = 50_000_000
	DefaultPageTimeout   = 120 * time.Second
	DefaultAttempts      = 3
	DefaultLang          = "eng"
	DefaultMaxInflight   = 256 << 20
	DefaultSLO           = 24 * time.Hour

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

// withDefaults fills zero values.
func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.DPI <= 0 {
		o.DPI = DefaultDPI
	}
	if o.MinDPI <= 0 {
		o.MinDPI = min(DefaultMinDPI, o.DPI)
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxPagePixels <= 0 {
		o.MaxPagePixels = DefaultMaxPagePixels
	}
	if o.PageTimeout <= 0 {
		o.PageTimeout = DefaultPageTimeout
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Lang == "" {
		o.Lang = DefaultLang
	}
	if o.MaxInflightBytes <= 0 {
		o.MaxInflightBytes = DefaultMaxInflight
	}
	if o.SLO <= 0 {
		o.SLO = DefaultSLO
	}
	if o.HighConfidence == 0 {
		o.HighConfidence = DefaultHighConfidence
	}
	if o.LowConfidence == 0 {
		o.LowConfidence = DefaultLowConfidence
	}
	if o.CoverageThreshold == 0 {
		o.CoverageThreshold = DefaultCoverageThreshold
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = NopProgress{}
	}
	return o
}

func (o Options) limits() admit.Limits {
	return admit.Limits{
		MaxBytes: o.MaxBytes,
		MaxPages: o.MaxPages,
		Page:     page.Policy{DPI: o.DPI, MinDPI: o.MinDPI, MaxPagePixels: o.MaxPagePixels},
	}
}

// PolicyVersion is a short hash of every setting that changes what an
// artifact says, so two artifacts made under different policies can be told
// apart.
func (o Options) PolicyVersion() string {
	b, _ := json.Marshal(o.policySettings())
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func (o Options) policySettings() map[string]any {
	return map[string]any{
		"dpi":                o.DPI,
		"min_dpi":            o.MinDPI,
		"max_page_pixels":    o.MaxPagePixels,
		"lang":               o.Lang,
		"high_confidence":    o.HighConfidence,
		"low_confidence":     o.LowConfidence,
		"validation":         o.validation(),
		"force_ocr":          o.ForceOCR,
		"orientation":        !o.NoOrientation,
		"deskew":             !o.NoDeskew,
		"despeckle":          !o.NoDespeckle,
		"coverage":           !o.NoCoverage,
		"coverage_threshold": o.CoverageThreshold,
	}
}

func (o Options) validation() string {
	switch {
	case o.NoIDCheck && o.NoCoverage:
		return "empty_text,low_confidence/2"
	case o.NoIDCheck:
		return "empty_text,low_confidence,incomplete_text/4"
	case o.NoCoverage:
		return "empty_text,low_confidence,id_not_found/3"
	}
	return "empty_text,low_confidence,incomplete_text,id_not_found/4"
}

// Settings are the options as recorded in the journal and the report.
func (o Options) Settings() map[string]string {
	s := map[string]string{
		"workers":         fmt.Sprint(o.Workers),
		"dpi":             fmt.Sprint(o.DPI),
		"min_dpi":         fmt.Sprint(o.MinDPI),
		"max_bytes":       fmt.Sprint(o.MaxBytes),
		"max_pages":       fmt.Sprint(o.MaxPages),
		"max_page_pixels": fmt.Sprint(o.MaxPagePixels),
		"page_timeout":    o.PageTimeout.String(),
		"attempts":        fmt.Sprint(o.Attempts),
		"max_inflight":    fmt.Sprint(o.MaxInflightBytes),
		"lang":            o.Lang,
		"slo":             o.SLO.String(),
		"high_confidence": fmt.Sprint(o.HighConfidence),
		"low_confidence":  fmt.Sprint(o.LowConfidence),
		"encrypted":       fmt.Sprint(len(o.Recipients) > 0),
		"root":            o.Root,
		"policy_version":  o.PolicyVersion(),
	}
	if o.DocTimeout > 0 {
		s["doc_timeout"] = o.DocTimeout.String()
	}
	if o.NoIDCheck {
		s["id_check"] = "off"
	}
	s["force_ocr"] = fmt.Sprint(o.ForceOCR)
	s["orientation"] = fmt.Sprint(!o.NoOrientation)
	s["deskew"] = fmt.Sprint(!o.NoDeskew)
	s["despeckle"] = fmt.Sprint(!o.NoDespeckle)
	s["coverage"] = fmt.Sprint(!o.NoCoverage)
	s["coverage_threshold"] = fmt.Sprint(o.CoverageThreshold)
	return s
}
