// Package result is what the engine makes of a page: the page results
// and their words, the engines' versions and the causes of their failures,
// as a worker child sends them to its parent, artifacts store them (as
// JSON, under the field names below) and the read side reads them.
//
// The package is pure Go: the packages that only read results (the
// artifact format, review, the export checks, the tests' finished
// batches) import it rather than ocr, which links MuPDF and Tesseract.
// ocr names the same types and constants, so the engine and the write
// path use either.
package result

import (
	"time"
	"unicode"
	"unicode/utf8"
)

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
// page before recognition (see the ocr package): Rotation is the
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
	// (see the ocr package).
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
	// resolution, for the reason CascadeReason (ocr.AskCharConf, ...), and the
	// page was read again. DPI is the resolution of the reading kept, the
	// better of the two (see the ocr package); the times count
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

// Signals are what a reading by Tesseract says of itself, measured on every
// page it read: CharConf, the words' mean confidence per character (as the
// document's confidence is counted); CredibleInk, the characters of its
// credible words over the characters of print the coverage measurement
// finds on the page (-1 when coverage is off or found no print);
// WordHeight, the median height in pixels of its words of two letters or
// digits or more (0 when there are none), at the reading's DPI.
type Signals struct {
	CharConf    float64 `json:"char_conf"`
	CredibleInk float64 `json:"credible_ink"`
	WordHeight  int     `json:"word_height"`
}

// HandwritingRegion is a region of a page written by hand: its box in
// the recognised image's pixels (as the words'), and whether it was read
// credibly (the words read in it, at the handwriting step's confidence
// or more, cover most of its ink; see the ocr package).
type HandwritingRegion struct {
	Box  [4]int `json:"box"`
	Read bool   `json:"read"`
	// Kind is what the region is: KindNote, KindSignature, KindStamp or
	// KindMark. Only a note not read needs a person. Empty in artifacts
	// written before kinds were told apart, when every region recorded
	// was a note.
	Kind string `json:"kind,omitempty"`
	// Words counts the credible words of the page's reading in the region.
	Words int `json:"words"`
}

// The kinds of handwritten region.
const (
	KindNote      = "note"      // writing to be read
	KindSignature = "signature" // a signature, initials or a flourish
	KindStamp     = "stamp"     // a rubber stamp's lettering
	KindMark      = "mark"      // a tick, a ring, an underline, a stroke through print
)

// IsNote reports whether region r is a note: one of kind note, or
// recorded before kinds were told apart.
func (r HandwritingRegion) IsNote() bool { return r.Kind == "" || r.Kind == KindNote }

// Versions names the engine versions a worker runs, for provenance.
type Versions struct {
	Tesseract string `json:"tesseract"`
	MuPDF     string `json:"mupdf"`
	Leptonica string `json:"leptonica,omitempty"`
}

// Cause is the stable reason an engine operation failed.
type Cause string

// The causes of an engine failure (ocr.EngineError).
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

// MemoryUsage is the worker child's memory high-water marks, read from
// /proc/self/status after each request: VmPeak is the peak virtual size
// (what RLIMIT_AS limits), VmHWM the peak resident size. Both are bytes,
// 0 where unavailable.
type MemoryUsage struct {
	VmPeak int64 `json:"vm_peak"`
	VmHWM  int64 `json:"vm_hwm"`
}
