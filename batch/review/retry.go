package review

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr/page"
)

// This file is what a retry decision records beside its page policy: the
// validation settings its next reading is judged by, so that `review
// retry` takes every run setting that decides a document's verdict.

// RetryValidation are a retry's validation settings (Settings' fields of
// the same JSON names).
type RetryValidation struct {
	NoIDCheck         bool    `json:"no_id_check"`
	HighConfidence    float64 `json:"high_confidence"`
	LowConfidence     float64 `json:"low_confidence"`
	CoverageThreshold float64 `json:"coverage_threshold"`
}

// retryValidationNames are RetryValidation's JSON names, as a retry's
// set names them.
var retryValidationNames = func() (names []string) {
	t := reflect.TypeOf(RetryValidation{})
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}()

// retryValidation is the latest run's validation settings with those set
// (by JSON name) replaced by over's, checked as a run checks its own.
// IsRetrySetting reports whether a retry can set name: a page setting
// (page.Policy's JSON names) or a validation setting (RetryValidation's).
func IsRetrySetting(name string) bool {
	if slices.Contains(retryValidationNames, name) {
		return true
	}
	_, err := page.Policy{}.Overlay(page.Policy{}, []string{name})
	return err == nil
}

func retryValidation(j *journal.Journal, over RetryValidation, set []string) (RetryValidation, error) {
	s := layout.Settings{}
	runs, err := j.Runs()
	if err != nil {
		return RetryValidation{}, err
	}
	for _, r := range slices.Backward(runs) {
		if rs, ok := layout.DecodeSettings(r.Settings); ok {
			s = rs
			break
		}
	}
	s = s.WithDefaults()
	base := RetryValidation{NoIDCheck: s.NoIDCheck, HighConfidence: s.HighConfidence, LowConfidence: s.LowConfidence, CoverageThreshold: s.CoverageThreshold}
	var bm, om map[string]json.RawMessage
	if err := remarshal(base, &bm); err != nil {
		return base, err
	}
	if err := remarshal(over, &om); err != nil {
		return base, err
	}
	for _, name := range set {
		bm[name] = om[name]
	}
	var v RetryValidation
	if err := remarshal(bm, &v); err != nil {
		return base, err
	}
	s.NoIDCheck, s.HighConfidence, s.LowConfidence, s.CoverageThreshold = v.NoIDCheck, v.HighConfidence, v.LowConfidence, v.CoverageThreshold
	return v, s.Validate()
}

// remarshal is v through JSON into dst.
func remarshal(v, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// retryRecord is the JSON a retry records: the page policy's fields and
// the validation settings', in one object.
func retryRecord(policy any, v RetryValidation) (string, error) {
	m := map[string]any{}
	for _, part := range []any{policy, v} {
		b, err := json.Marshal(part)
		if err != nil {
			return "", err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return "", err
		}
	}
	b, err := json.Marshal(m)
	return string(b), err
}
