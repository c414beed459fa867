package eval

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// Outcome is a row's final state and reason, as the report gives them.
type Outcome struct {
	State  outcome.State  `json:"state"`
	Reason outcome.Reason `json:"reason"`
}

// String is "state" or "state/reason".
func (o Outcome) String() string {
	if o.Reason == "" {
		return string(o.State)
	}
	return string(o.State) + "/" + string(o.Reason)
}

// Expected is one row of expected.csv: the outcomes a manifest row may
// reach. Most rows allow one; a corpus whose files may legitimately end two
// ways (a hard scan that is done or, at worst, review low_confidence)
// allows several.
type Expected struct {
	SourceID string    `json:"source_id"`
	Allowed  []Outcome `json:"allowed"`
}

// AnyReason as an expected reason accepts every reason of its state.
const AnyReason outcome.Reason = "*"

// Allows reports whether o is one of the allowed outcomes.
func (e Expected) Allows(o Outcome) bool {
	for _, a := range e.Allowed {
		if a == o || (a.State == o.State && a.Reason == AnyReason) {
			return true
		}
	}
	return false
}

// String lists the allowed outcomes, separated by " or ".
func (e Expected) String() string {
	s := make([]string, len(e.Allowed))
	for i, a := range e.Allowed {
		s[i] = a.String()
	}
	return strings.Join(s, " or ")
}

// readable reports whether a document expected this way has text to score:
// it is expected done, or in review with text that validation doubted
// (low_confidence, id_not_found) rather than none at all.
func (e Expected) readable() bool {
	for _, a := range e.Allowed {
		if a.State == outcome.Done {
			return true
		}
	}
	return false
}

// doubted reports whether e expects the document only in review for its
// text (low_confidence, id_not_found or date_not_found): a document to calibrate the
// confidence bands with, not one expected to read well.
func (e Expected) doubted() bool {
	if e.readable() {
		return false
	}
	for _, a := range e.Allowed {
		if a.State == outcome.Review && (a.Reason == outcome.LowConfidence || a.Reason == outcome.IDNotFound || a.Reason == outcome.DateNotFound) {
			return true
		}
	}
	return false
}

// ReadExpected reads expected.csv: a header naming at least source_id,
// state and reason (in any order, case-insensitive; other columns are
// ignored), then one row per manifest row, in manifest order. A row allows
// several outcomes when its state and reason list alternatives separated by
// "|", paired by position: state "done|review" with reason
// "|low_confidence" allows done, or review low_confidence. A single reason
// applies to every listed state. The reason "*" (AnyReason) accepts any
// reason of its state: "review,*" is any review.
func ReadExpected(r io.Reader) ([]Expected, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading expected outcomes: header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, want := range []string{"source_id", "state", "reason"} {
		if _, ok := col[want]; !ok {
			return nil, fmt.Errorf("reading expected outcomes: no %s column in the header", want)
		}
	}
	var out []Expected
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading expected outcomes: %w", err)
		}
		line, _ := cr.FieldPos(0)
		field := func(name string) string {
			if i := col[name]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		states := strings.Split(field("state"), "|")
		reasons := strings.Split(field("reason"), "|")
		if len(reasons) == 1 {
			for len(reasons) < len(states) {
				reasons = append(reasons, reasons[0])
			}
		}
		if len(reasons) != len(states) {
			return nil, fmt.Errorf("reading expected outcomes: line %d: %d states but %d reasons", line, len(states), len(reasons))
		}
		e := Expected{SourceID: field("source_id")}
		for i := range states {
			o := Outcome{State: outcome.State(strings.TrimSpace(states[i])), Reason: outcome.Reason(strings.TrimSpace(reasons[i]))}
			if o.State == "" {
				return nil, fmt.Errorf("reading expected outcomes: line %d: empty state", line)
			}
			e.Allowed = append(e.Allowed, o)
		}
		out = append(out, e)
	}
}

// LoadExpected reads an expected.csv file (see ReadExpected).
func LoadExpected(path string) ([]Expected, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadExpected(f)
}

// Truth is what the corpus generator drew for one document: its fields and
// the exact text of every page, as truth/<source_id>.json holds it. Other
// fields of the file (how a page was scanned) are ignored.
type Truth struct {
	SourceID      string      `json:"source_id"`
	ParticipantID string      `json:"participant_id"`
	ReferralDate  string      `json:"referral_date"`
	Pages         []TruthPage `json:"pages"`
}

// TruthPage is the text drawn on one page; empty for a blank page.
// FaintText is the page's faint or small print, also part of Text, and
// Columns marks a page with a section in two columns, whose Text is in
// column order; both are absent from older truth.
type TruthPage struct {
	Text      string `json:"text"`
	FaintText string `json:"faint_text,omitempty"`
	Columns   bool   `json:"columns,omitempty"`
	// HandwritingText is the page's handwritten note, also part of Text,
	// and Handwriting the hand that wrote it; Signature is set on a page
	// signed by hand. All are absent from older truth.
	HandwritingText string          `json:"handwriting_text,omitempty"`
	Handwriting     *TruthHand      `json:"handwriting,omitempty"`
	Signature       *TruthSignature `json:"signature,omitempty"`
	// Marks are the page's marks that are no note (signatures, stamps,
	// margin marks), each with the family that drew it.
	Marks []TruthMark `json:"marks,omitempty"`
}

// LoadTruth reads every *.json file of dir as a Truth and indexes them by
// their source_id field (not their file name, so that an odd source_id
// cannot name a path). Two files naming the same source_id are an error.
func LoadTruth(dir string) (map[string]*Truth, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("reading truth: %w", err)
		}
		return nil, fmt.Errorf("reading truth: no .json files in %s", dir)
	}
	sort.Strings(files)
	out := make(map[string]*Truth, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading truth: %w", err)
		}
		var t Truth
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("reading truth %s: %w", f, err)
		}
		if t.SourceID == "" {
			return nil, fmt.Errorf("reading truth %s: no source_id", f)
		}
		if _, dup := out[t.SourceID]; dup {
			return nil, fmt.Errorf("reading truth %s: a second file for source_id %s", f, t.SourceID)
		}
		out[t.SourceID] = &t
	}
	return out, nil
}

// Thresholds are the limits a run must stay within; thresholds.json holds
// them. A figure whose threshold is absent is measured and reported but not
// gated, except outcome mismatches, which default to none allowed:
//
//	{
//	  "outcome_mismatches_max": 0,
//	  "mean_cer_max": 0.04,
//	  "p95_cer_max": 0.10,
//	  "mean_wer_max": 0.10,
//	  "id_recall_min": 0.99,
//	  "date_recall_min": 0.99,
//	  "band_mean_cer_max": {"high": 0.05, "medium": 0.20},
//	  "faint_unflagged_max": 0,
//	  "column_page_cer_max": 0.05,
//	  "coverage_false_alarms_max": 1
//	}
//
// Rates are fractions (0.04 is 4%). An unknown key is an error, so that a
// misspelt gate cannot silently gate nothing.
type Thresholds struct {
	OutcomeMismatchesMax *int `json:"outcome_mismatches_max,omitempty"`
	// KnownMismatches names rows (by source_id) whose outcome is known to
	// differ from expected.csv: their mismatches are reported but not
	// counted. Naming them, rather than raising the count, keeps the gate
	// exact: a known row fixed while another breaks still fails.
	KnownMismatches []string `json:"known_mismatches,omitempty"`
	MeanCERMax      *float64 `json:"mean_cer_max,omitempty"`
	P95CERMax       *float64 `json:"p95_cer_max,omitempty"`
	MeanWERMax      *float64 `json:"mean_wer_max,omitempty"`
	IDRecallMin     *float64 `json:"id_recall_min,omitempty"`
	DateRecallMin   *float64 `json:"date_recall_min,omitempty"`
	// BandMeanCERMax caps the mean CER of the documents in a confidence
	// band: a high band whose text is poor means the confidence lies.
	BandMeanCERMax map[outcome.Band]float64 `json:"band_mean_cer_max,omitempty"`
	// BandDocumentsMin is the fewest documents each band must hold, so a
	// calibration cannot pass by leaving a band empty.
	BandDocumentsMin map[outcome.Band]int `json:"band_documents_min,omitempty"`
	// BandsOrdered requires the mean CER to rise from the high band to the
	// medium band to the low band (over the bands holding documents).
	BandsOrdered bool `json:"bands_ordered,omitempty"`
	// FaintUnflaggedMax caps the documents that ended done having read
	// under FaintReadRecall of their faint print: text never read,
	// published as if it were complete.
	FaintUnflaggedMax *int `json:"faint_unflagged_max,omitempty"`
	// ColumnPageCERMax caps the CER of the worst page with two columns:
	// one read across its columns misreads a third of its characters.
	ColumnPageCERMax *float64 `json:"column_page_cer_max,omitempty"`
	// CoverageFalseAlarmsMax caps the documents without faint print, and
	// not expected to end incomplete, that ended review incomplete_text.
	CoverageFalseAlarmsMax *int `json:"coverage_false_alarms_max,omitempty"`
	// NotesUnflaggedMax caps the documents that ended done having read
	// under NoteReadRecall of their handwritten note;
	// HandwritingFalseAlarmsMax the documents without a note that ended
	// review handwriting.
	NotesUnflaggedMax         *int `json:"notes_unflagged_max,omitempty"`
	HandwritingFalseAlarmsMax *int `json:"handwriting_false_alarms_max,omitempty"`
}

// textGated reports whether any threshold needs the truth to be checked.
func (t Thresholds) textGated() bool {
	return t.MeanCERMax != nil || t.P95CERMax != nil || t.MeanWERMax != nil ||
		t.IDRecallMin != nil || t.DateRecallMin != nil || len(t.BandMeanCERMax) > 0 ||
		len(t.BandDocumentsMin) > 0 || t.BandsOrdered || t.coverageGated()
}

// coverageGated reports whether any threshold gates the coverage figures.
func (t Thresholds) coverageGated() bool {
	return t.FaintUnflaggedMax != nil || t.ColumnPageCERMax != nil || t.CoverageFalseAlarmsMax != nil ||
		t.NotesUnflaggedMax != nil || t.HandwritingFalseAlarmsMax != nil
}

// ReadThresholds parses thresholds.json (see Thresholds).
func ReadThresholds(data []byte) (Thresholds, error) {
	var t Thresholds
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return t, fmt.Errorf("reading thresholds: %w", err)
	}
	for key, bands := range map[string][]outcome.Band{"band_mean_cer_max": slices.Collect(maps.Keys(t.BandMeanCERMax)),
		"band_documents_min": slices.Collect(maps.Keys(t.BandDocumentsMin))} {
		for _, band := range bands {
			if !slices.Contains(outcome.Bands(), band) {
				return t, fmt.Errorf("reading thresholds: %s: unknown band %q (high, medium or low)", key, band)
			}
		}
	}
	return t, nil
}

// LoadThresholds reads a thresholds.json file (see Thresholds).
func LoadThresholds(path string) (Thresholds, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Thresholds{}, err
	}
	return ReadThresholds(b)
}
