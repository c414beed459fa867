// Package page is refbatch's page policy: how every page of a run is
// rendered and which page steps it goes through. It is declared once, here,
// and travels as one value: admission sizes pages with it, the OCR worker
// children receive it over their pipe, and the batch records it in the
// journal, the report and every artifact's provenance.
//
// The zero Policy means the defaults, field by field: a zero DPI is
// DefaultDPI, an empty Lang is DefaultLang, and the page steps, switched
// off by the No* fields, are all on. [Policy.WithDefaults] fills the zero
// fields and [Policy.Validate] refuses a policy no page could be rendered
// under; both are the only place those rules are written.
//
// # Render resolution
//
// A page renders at DPI unless its image would then be larger than
// MaxPagePixels: it then renders at the highest integer DPI, down to
// MinDPI, at which it fits, and a page over the cap even at MinDPI is
// page_too_large ([Policy.FitDPI]). The pixel count is the one MuPDF
// renders: it rounds a page's box outwards ([Pixels]).
//
// # Two resolutions
//
// A page is read once, at its DPI, unless Cascade is set: then it is first
// read at FirstDPI (when that is under the DPI it renders at) and read
// again at its full DPI only when the first reading asks for it; the OCR
// worker decides, by thresholds calibrated on the evaluation corpus (see
// the ocr package). A FirstDPI at or above a page's DPI reads that page
// once. The cascade is off by default: on 11 pt letters nearly every page
// asks, and is read twice.
//
// The package is pure Go: admission, which must not link the native
// libraries, imports it as the OCR worker does.
package page

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// The defaults of a Policy.
const (
	DefaultLang = "eng"
	DefaultDPI  = 300
	// DefaultMinDPI is the lowest resolution a page over the pixel cap is
	// rendered at; text read below it loses too many characters.
	DefaultMinDPI = 150
	// DefaultMaxPagePixels caps a rendered page: a page of 50 Mpx peaks a
	// worker near 2 GiB of address space (see ocr.DefaultMemoryLimit).
	DefaultMaxPagePixels = 50_000_000
	// DefaultFirstDPI is the resolution of a page's first reading under
	// the cascade: 200 dpi reads a page at about 0.7 of the time of 300,
	// and as well when its print is large (see "Two resolutions" in
	// refbatch help reading).
	DefaultFirstDPI = 200
	// DefaultCoverConfidence is the least confidence of a word whose ink
	// counts as read, and of a word recovery adds. On the evaluation
	// corpus (refbatch eval's suggested line) 68 best separates the words
	// misread from the words read right, but at 68 a clean document goes
	// to review incomplete_text (its words at 40–68 leave its print
	// unread), and at 40 recovery drops faint words it read right at
	// 30–39: 30, the floor recovery always had, keeps every outcome of the
	// corpus and its holdout, and still takes junk read at 0–29 (Tesseract's
	// reading of noise, of a hand it cannot read) for unread ink.
	DefaultCoverConfidence = 30
)

// Policy is how pages are rendered and recognised. The JSON names are
// those the journal stores; see [Policy.Recorded] for the names the report
// and the artifacts show.
type Policy struct {
	// Lang is Tesseract's language; several are joined with "+", as in
	// eng+deu.
	Lang string `json:"lang"`
	// DPI is the render resolution. A page over MaxPagePixels at DPI is
	// rendered lower, down to MinDPI; see FitDPI. MinDPI defaults to
	// DefaultMinDPI, or to DPI when that is lower.
	DPI    int `json:"dpi"`
	MinDPI int `json:"min_dpi"`
	// MaxPagePixels caps a rendered page, and any image a page holds at
	// its decoded size.
	MaxPagePixels int64 `json:"max_page_pixels"`
	// ForceOCR recognises every page, even one whose own text layer a
	// quick recognition confirms.
	ForceOCR bool `json:"force_ocr"`
	// NoOrientation turns off the detection and correction of pages turned
	// by 90, 180 or 270 degrees; NoDeskew the straightening of slightly
	// skewed ones; NoDespeckle the painting over of specks (marks a few
	// pixels across) before recognition.
	NoOrientation bool `json:"no_orientation"`
	NoDeskew      bool `json:"no_deskew"`
	NoDespeckle   bool `json:"no_despeckle"`
	// NoCoverage turns off the measurement of the print no recognised
	// word covers, the reading again of what was left unread, and the
	// column reading; with it no document goes to review incomplete_text.
	NoCoverage bool `json:"no_coverage"`
	// FirstDPI is the resolution of a page's first reading under the
	// cascade, when under the DPI the page renders at; the page is read
	// again at that DPI only when the first reading asks for it. Cascade
	// turns the first reading on; without it every page is read once, at
	// its DPI. Builds before the cascade was off by default stored
	// no_cascade instead (see batch's settings).
	FirstDPI int  `json:"first_dpi"`
	Cascade  bool `json:"cascade"`
	// NoRecovery keeps the coverage measurement but turns off the reading
	// again of the lines it finds unread: to measure what recovery adds.
	NoRecovery bool `json:"no_recovery"`
	// CoverConfidence is the least confidence a recognised word needs for
	// the coverage measurement to count the ink under it as read, and a
	// word recovery reads to be kept: a line of words read under it is
	// unread ink.
	CoverConfidence int `json:"cover_confidence"`
}

// Default returns the default policy.
func Default() Policy { return Policy{}.WithDefaults() }

// WithDefaults returns p with its zero fields set to the defaults. Fields
// that are set, even to values Validate refuses, are kept.
func (p Policy) WithDefaults() Policy {
	if p.Lang == "" {
		p.Lang = DefaultLang
	}
	if p.DPI == 0 {
		p.DPI = DefaultDPI
	}
	if p.MinDPI == 0 {
		p.MinDPI = min(DefaultMinDPI, p.DPI)
	}
	if p.MaxPagePixels == 0 {
		p.MaxPagePixels = DefaultMaxPagePixels
	}
	if p.FirstDPI == 0 {
		p.FirstDPI = DefaultFirstDPI
	}
	if p.CoverConfidence == 0 {
		p.CoverConfidence = DefaultCoverConfidence
	}
	return p
}

// SettingError is a setting outside the values it may take. Setting is
// the setting's recorded name (dpi, min_dpi, ...).
type SettingError struct {
	Setting string
	Value   any
	Want    string // the values it may take
}

// Error returns "<setting> <value>: want <values>".
func (e *SettingError) Error() string {
	return fmt.Sprintf("%s %v: want %s", e.Setting, e.Value, e.Want)
}

// Validate refuses a policy under which no page could be rendered: a
// resolution under 1, a minimum above the resolution, a pixel cap under 1,
// no language or an empty one among several, a first resolution under 1, a
// cover confidence over 100 or under 0. It checks p as it is: call
// it on p.WithDefaults() to allow the zero fields.
func (p Policy) Validate() error {
	switch {
	case p.DPI < 1:
		return &SettingError{"dpi", p.DPI, "1 or more"}
	case p.MinDPI < 1 || p.MinDPI > p.DPI:
		return &SettingError{"min_dpi", p.MinDPI, fmt.Sprintf("from 1 to the dpi (%d)", p.DPI)}
	case p.MaxPagePixels < 1:
		return &SettingError{"max_page_pixels", p.MaxPagePixels, "1 or more"}
	case p.Lang == "" || strings.Contains("+"+p.Lang+"+", "++"):
		return &SettingError{"lang", fmt.Sprintf("%q", p.Lang), "one or more Tesseract languages joined with +"}
	case p.FirstDPI < 1:
		return &SettingError{"first_dpi", p.FirstDPI, "1 or more (at or above the dpi: one reading)"}
	case p.CoverConfidence < 0 || p.CoverConfidence > 100:
		return &SettingError{"cover_confidence", p.CoverConfidence, "from 1 to 100 (0: the default)"}
	}
	return nil
}

// FirstPassDPI returns the resolution a page rendered at dpi is first
// read at under p: FirstDPI when the cascade is on and FirstDPI is lower,
// otherwise dpi, which means one reading.
func (p Policy) FirstPassDPI(dpi int) int {
	if !p.Cascade || p.FirstDPI < 1 || p.FirstDPI >= dpi {
		return dpi
	}
	return p.FirstDPI
}

// FitDPI returns the resolution a wPt×hPt page renders at under p: DPI
// when the page is then at most MaxPagePixels pixels, otherwise the
// highest integer resolution from DPI down to MinDPI at which it is; ok is
// false when even MinDPI is over the cap. wPt and hPt are the page's size
// in points (1/72 in) as MuPDF renders it: its CropBox within its
// MediaBox, turned by /Rotate and scaled by /UserUnit. A size that is not
// a number or infinite fits at no resolution; a negative one counts as
// empty. FitDPI expects a valid policy: under one with MinDPI above DPI no
// page fits.
func (p Policy) FitDPI(wPt, hPt float64) (dpi int, ok bool) {
	for d := p.DPI; d >= p.MinDPI && d >= 1; d-- {
		if Pixels(wPt, hPt, d) <= float64(p.MaxPagePixels) {
			return d, true
		}
	}
	return 0, false
}

// Pixels is the number of pixels MuPDF renders for a wPt×hPt page at dpi:
// it rounds the scaled box outwards with a small tolerance
// (fz_round_rect), which this mirrors. It is a float64 so that no size
// overflows it; a size that is not a number, or is infinite, gives NaN,
// which is over any cap.
func Pixels(wPt, hPt float64, dpi int) float64 {
	return span(wPt, dpi) * span(hPt, dpi)
}

func span(pt float64, dpi int) float64 {
	const eps = 0.001 // FZ_EPSILON in fz_round_rect
	switch {
	case math.IsNaN(pt) || math.IsInf(pt, 0):
		return math.NaN()
	case pt <= 0:
		return 0
	}
	return math.Ceil(pt*float64(dpi)/72 - eps)
}

// Setting is one field of a policy as a run records it.
type Setting struct {
	Name  string
	Value any // bool, int, int64 or string
}

// Recorded returns the policy's fields, in declaration order, as the
// report, the artifacts' provenance and the policy version name them: a
// field by its JSON name, except a switch that turns a step off (no_deskew),
// which is recorded by the step's name with the value inverted (deskew:
// true when the step runs). It reads the fields from the struct, so a
// field added to Policy is recorded without more code.
func (p Policy) Recorded() []Setting {
	v := reflect.ValueOf(p)
	t := v.Type()
	out := make([]Setting, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		val := v.Field(i).Interface()
		if b, ok := val.(bool); ok {
			if step, ok := strings.CutPrefix(name, "no_"); ok {
				name, val = step, !b
			}
		}
		out = append(out, Setting{Name: name, Value: val})
	}
	return out
}

// Overlay returns p with the fields named, by their JSON names (dpi,
// lang, no_deskew, ...), taken from q: a retry's settings over a run's. A
// name Policy does not have is an error.
func (p Policy) Overlay(q Policy, names []string) (Policy, error) {
	pv, qv := reflect.ValueOf(&p).Elem(), reflect.ValueOf(q)
	t := pv.Type()
	for _, name := range names {
		found := false
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag == name {
				pv.Field(i).Set(qv.Field(i))
				found = true
			}
		}
		if !found {
			return p, fmt.Errorf("page policy has no setting %q", name)
		}
	}
	return p, nil
}
