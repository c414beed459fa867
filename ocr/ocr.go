package ocr

import (
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"
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

// Word is one recognised word: its text, Tesseract's confidence (0–100) and
// its bounding box in pixels of the rendered page (x0, y0, x1, y1).
type Word struct {
	Text string  `json:"text"`
	Conf float64 `json:"conf"`
	Box  [4]int  `json:"box"`
}

// Chars is what the word weighs in a confidence per character (a
// document's, a first reading's): its characters, at least 1.
func (w Word) Chars() int { return max(1, utf8.RuneCountInString(w.Text)) }

// Credible reports whether the word counts as read: confidence
// CredibleConf or more and two or more letters or digits.
func (w Word) Credible() bool { return w.Conf >= CredibleConf && AlnumCount(w.Text) >= 2 }

// PageResult is the outcome of rendering and recognising one page.
// Width and Height are the size in pixels of the image that was
// recognised: the render at DPI, which may be lower than the configured DPI
// when the page was over the pixel cap, after any turn by Rotation
// (which swaps them for 90 and 270) and any deskew (which enlarges the
// canvas so no pixel is lost). Word boxes are in that image's pixels.
// Text is rebuilt from Words: words joined by spaces, lines by a newline,
// paragraphs and blocks separated by a blank line. MeanConf is the mean of
// the words' confidences, 0 when there are none.
//
// Rotation, SkewDegrees and Inverted say what was done to the rendered
// page before recognition (see the package documentation): Rotation is the
// clockwise turn in degrees (0, 90, 180 or 270) that made the text upright,
// on top of the page's own /Rotate, which MuPDF applies when rendering;
// SkewDegrees is the angle by which the page was turned to straighten its
// lines, clockwise positive, 0 when it was not deskewed; Inverted is true
// when the page was white on black and was inverted; Despeckled counts the
// pixels of specks painted over with the paper. Blank is true when
// the page held nothing the size of text and was therefore not recognised
// (Text and Words are empty). TextSource is [TextFromOCR] or
// [TextFromLayer].
type PageResult struct {
	Index       int     `json:"index"`
	DPI         int     `json:"dpi"`
	Width       int     `json:"width"`
	Height      int     `json:"height"`
	Text        string  `json:"text"`
	Words       []Word  `json:"words"`
	MeanConf    float64 `json:"mean_confidence"`
	Rotation    int     `json:"rotation"`
	SkewDegrees float64 `json:"skew_degrees"`
	Inverted    bool    `json:"inverted"`
	Despeckled  int     `json:"despeckled_pixels"`
	// UncoveredShare is the share of the page's print (its text-like ink,
	// counted in characters) that no recognised word covers, after
	// RecoveredWords were read again from it; UncoveredFirst is the same
	// before that; UncoveredRegions are the lines still a third unread or
	// more, as boxes in pixels like the words'. A page whose text came
	// from its layer, or that was blank, is not measured.
	UncoveredShare   float64  `json:"uncovered_share"`
	UncoveredFirst   float64  `json:"uncovered_share_first"`
	RecoveredWords   int      `json:"recovered_words"`
	UncoveredRegions [][4]int `json:"uncovered_regions,omitempty"`
	// Recovery is what the reading again of the unread lines found: the
	// words it added (RecoveredWords) and those it dropped; nil when the
	// page was not read again.
	Recovery *Recovery `json:"recovery,omitempty"`
	// HandwritingRegions are the page's regions written by hand (see
	// HandwritingRegion); a page not measured has none.
	HandwritingRegions []HandwritingRegion `json:"handwriting_regions,omitempty"`
	// Columns counts the two-column sections read column by column.
	Columns int `json:"columns,omitempty"`
	// ColumnsReread counts those of them read again, each column alone
	// (see readColumns).
	ColumnsReread int           `json:"columns_reread,omitempty"`
	Blank         bool          `json:"blank,omitempty"`
	TextSource    string        `json:"text_source"`
	RenderTime    time.Duration `json:"render_ns"`
	RecogniseTime time.Duration `json:"recognise_ns"`
	// CoverageTime is the part of RecogniseTime the coverage step took:
	// the measurement, and the readings again of columns and unread lines.
	CoverageTime time.Duration `json:"coverage_ns,omitempty"`
	// FirstDPI is the resolution of the page's first reading when the
	// cascade read it first under its DPI (0 when the page was read once,
	// at DPI); SecondPass is true when that reading asked for the full
	// resolution, for the reason CascadeReason (AskCharConf, ...), and the
	// page was read again. DPI is the resolution of the reading kept, the
	// better of the two (see the package documentation); the times count
	// both readings.
	FirstDPI      int    `json:"first_dpi,omitempty"`
	SecondPass    bool   `json:"second_pass,omitempty"`
	CascadeReason string `json:"cascade_reason,omitempty"`
	// Signals are what the kept reading says of itself, when Tesseract
	// read the page: what the cascade decides on.
	Signals *Signals `json:"signals,omitempty"`
	// Canvas maps the render onto the recognised image, so that word boxes
	// can be taken back to the page. Artifacts written before it existed
	// lack it (nil).
	Canvas *Canvas `json:"canvas,omitempty"`
}

// Recovery counts the words the reading again of a page's unread lines
// found: those it added to the page's reading, and those it dropped
// because they repeat a word already read at the same place, or because
// their confidence is under the policy's cover confidence (a word of no
// letter or digit is no word, and is not counted); Replaced counts the
// tall words read under the cover confidence (junk read into a stamp)
// that added words replaced.
type Recovery struct {
	Added                int `json:"added"`
	DroppedRepeat        int `json:"dropped_repeat"`
	DroppedLowConfidence int `json:"dropped_low_confidence"`
	Replaced             int `json:"replaced"`
}

// Canvas is how the recognised image was made from MuPDF's render of the
// page: the render's size in pixels (the page's /Rotate applied, its top
// left corner the displayed page's) and the affine map of the page steps'
// turns and deskew rotations. Matrix [a b c d e f] takes the point (x, y)
// of the render to (a·x + c·y + e, b·x + d·y + f) on the recognised image,
// in PDF's order of the six numbers. Coordinates are continuous: pixel i
// spans [i, i+1), so a word box's ends map as they are.
type Canvas struct {
	RenderWidth  int        `json:"render_width"`
	RenderHeight int        `json:"render_height"`
	Matrix       [6]float64 `json:"matrix"`
}

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

// CredibleConf is the confidence from which Tesseract's reading of a word
// is credible. The page steps count words of two or more letters or
// digits at it to tell a page read the right way up, and the batch's
// validation words of three or more to tell a page with text.
const CredibleConf = 60

// AlnumCount counts the letters and digits in s.
func AlnumCount(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			n++
		}
	}
	return n
}

// The sources of a page's text, for PageResult.TextSource.
const (
	// TextFromOCR: Tesseract recognised the rendered page.
	TextFromOCR = "ocr"
	// TextFromLayer: the page's own text layer, extracted by MuPDF, was
	// used because a quick recognition of the page confirmed it.
	TextFromLayer = "layer"
)

// Versions names the engine versions a worker runs, for provenance.
type Versions struct {
	Tesseract string `json:"tesseract"`
	MuPDF     string `json:"mupdf"`
	Leptonica string `json:"leptonica,omitempty"`
}

// Cause is the stable reason an engine operation failed.
type Cause string

// The causes of an [EngineError].
const (
	// CauseCrash: the child died of a signal or exited unexpectedly.
	CauseCrash Cause = "crash"
	// CauseOOM: the child ran out of memory (its address-space limit or the
	// kernel's OOM killer).
	CauseOOM Cause = "oom"
	// CauseTimeout: the page overran its deadline and the child was killed.
	CauseTimeout Cause = "timeout"
	// CauseTooLarge: even at the minimum DPI the page is over the pixel cap.
	CauseTooLarge Cause = "page_too_large"
	// CauseOpen: the document cannot be opened, needs a password or has no
	// pages.
	CauseOpen Cause = "open"
	// CauseRender: MuPDF could not render the page.
	CauseRender Cause = "render"
	// CauseTransient: a failure expected to go away on a retry.
	CauseTransient Cause = "transient"
)

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
