package batch

import (
	"encoding/json"
	"fmt"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr/page"
)

// This file is how a run reads a document a person sent back to be read
// again (review retry): under the page policy and the validation
// settings the retry recorded (batch/review records them).

// docOptions are o with the page policy document d is read under: the
// one a retry decision stored, or o's own.
func (o Options) docOptions(d journal.Doc) (Options, error) {
	if d.RetryPolicy == "" {
		return o, nil
	}
	var p page.Policy
	if err := json.Unmarshal([]byte(d.RetryPolicy), &p); err != nil {
		return o, fmt.Errorf("journal: document %s: its retry policy: %w", d.SourceID, err)
	}
	layout.LegacyCascade([]byte(d.RetryPolicy), &p)
	o.Policy = p.WithDefaults()
	return o.withRetryValidation([]byte(d.RetryPolicy)), nil
}

// withRetryValidation is o with the validation settings a retry recorded
// in stored, those it holds.
func (o Options) withRetryValidation(stored []byte) Options {
	var v struct {
		NoIDCheck         *bool    `json:"no_id_check"`
		HighConfidence    *float64 `json:"high_confidence"`
		LowConfidence     *float64 `json:"low_confidence"`
		CoverageThreshold *float64 `json:"coverage_threshold"`
	}
	if json.Unmarshal(stored, &v) != nil {
		return o
	}
	if v.NoIDCheck != nil {
		o.NoIDCheck = *v.NoIDCheck
	}
	if v.HighConfidence != nil {
		o.HighConfidence = *v.HighConfidence
	}
	if v.LowConfidence != nil {
		o.LowConfidence = *v.LowConfidence
	}
	if v.CoverageThreshold != nil {
		o.CoverageThreshold = *v.CoverageThreshold
	}
	return o
}
