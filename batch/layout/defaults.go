package layout

import (
	"fmt"
	"runtime"
	"time"

	"github.com/refbatch/refbatch/batch/admit"
)

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

// WithDefaults fills zero values. It keeps values a run's validation
// refuses, so that they are refused rather than replaced.
func (s Settings) WithDefaults() Settings {
	s.Policy = s.Policy.WithDefaults()
	if s.Workers == 0 {
		s.Workers = runtime.NumCPU()
	}
	lim := s.Limits().WithDefaults()
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

// Limits are the caps admission enforces under these settings.
func (s Settings) Limits() admit.Limits {
	return admit.Limits{MaxBytes: s.MaxBytes, MaxPages: s.MaxPages, Page: s.Policy}
}

// Validate reports the first setting no run could use, with its defaults
// filled in, as a *SettingError. A run calls it (as Options.Validate)
// before it creates anything; a retry checks its validation settings so.
func (s Settings) Validate() error {
	s = s.WithDefaults()
	bad := func(setting string, value any, want string) error {
		return &SettingError{Setting: setting, Value: value, Want: want}
	}
	if err := s.Limits().Validate(); err != nil {
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
