package ocr

import (
	"errors"
	"fmt"

	"github.com/refbatch/refbatch/ocr/result"
)

// DefaultMemoryLimit is the address-space limit (RLIMIT_AS) a worker child
// should run under. RLIMIT_AS counts reserved address space, not memory
// used, and an idle child already has about 1.35 GiB of it (VmPeak), almost
// all PROT_NONE reservations of the Go runtime (about 1 GiB) and glibc;
// its resident size is about 75 MiB, half of it the orientation model.
// Measured peaks (VmPeak / VmHWM):
//
//	idle, Tesseract and orientation initialised   1.35 GiB / 0.07 GiB
//	300 dpi US Letter text page (8.4 Mpx)         1.47 GiB / 0.17 GiB
//	45.8 Mpx text page                            1.95 GiB / 0.65 GiB
//	50 Mpx text page                              1.97 GiB / 0.68 GiB
//	50 Mpx page turned and skewed (55 Mpx after)  2.05 GiB / 0.70 GiB
//	enormous.pdf at 235 dpi (49.7 Mpx RGB)        2.15 GiB / 0.86 GiB
//	ten 50 Mpx pages in a row (plateau)           2.5–2.7 GiB / 1.1 GiB
//
// The plateau comes from the Go heap: go-fitz copies every render twice
// into Go memory (8 bytes a pixel), and the freed space fragments. 50 Mpx
// is the default pixel cap, so 4 GiB leaves over 1 GiB of margin above the
// worst plateau, while a render bomb still dies in its own child. TestMeasure
// (OCR_MEASURE=1) reproduces the figures.
const DefaultMemoryLimit int64 = 4 << 30

// The page results and what they hold are the pure-Go package result's,
// so that the packages that only read them need not link the engines;
// ocr names them too, for the engine and the write path.
type (
	Word              = result.Word
	PageResult        = result.PageResult
	Recovery          = result.Recovery
	Canvas            = result.Canvas
	Signals           = result.Signals
	HandwritingRegion = result.HandwritingRegion
	Versions          = result.Versions
	MemoryUsage       = result.MemoryUsage
	Cause             = result.Cause
)

// CredibleConf is [result.CredibleConf].
const CredibleConf = result.CredibleConf

// AlnumCount counts the letters and digits in s ([result.AlnumCount]).
func AlnumCount(s string) int { return result.AlnumCount(s) }

// The sources of a page's text ([result.TextFromOCR]).
const (
	TextFromOCR   = result.TextFromOCR
	TextFromLayer = result.TextFromLayer
)

// The causes of an [EngineError] ([result.CauseCrash]).
const (
	CauseCrash     = result.CauseCrash
	CauseOOM       = result.CauseOOM
	CauseTimeout   = result.CauseTimeout
	CauseTooLarge  = result.CauseTooLarge
	CauseOpen      = result.CauseOpen
	CauseRender    = result.CauseRender
	CauseTransient = result.CauseTransient
)

// identityMatrix maps every point to itself.
var identityMatrix = [6]float64{1, 0, 0, 1, 0, 0}

// thenMatrix returns the map that applies m and then n.
func thenMatrix(m, n [6]float64) [6]float64 {
	return [6]float64{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// ErrNotAlive is returned by a [Worker] whose child has died or been killed.
var ErrNotAlive = errors.New("ocr: worker is not alive")

// EngineError is a failure of the engine boundary. Page is the page index,
// or -1 when the failure concerns the whole document or the worker.
type EngineError struct {
	Cause Cause
	Page  int
	Err   error
}

// Error describes the failure without any document content.
func (e *EngineError) Error() string {
	if e.Page >= 0 {
		return fmt.Sprintf("ocr: %s on page %d: %v", e.Cause, e.Page, e.Err)
	}
	return fmt.Sprintf("ocr: %s: %v", e.Cause, e.Err)
}

// Unwrap returns the underlying error.
func (e *EngineError) Unwrap() error { return e.Err }

// Transient reports whether a retry in a fresh worker may succeed: true for
// crash, oom and transient, false for timeout, page_too_large, open and
// render, which the same document would hit again.
func (e *EngineError) Transient() bool {
	switch e.Cause {
	case CauseCrash, CauseOOM, CauseTransient:
		return true
	}
	return false
}
