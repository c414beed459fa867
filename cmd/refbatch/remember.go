package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/manifest"
)

// This file is how a rerun remembers how its batch was run: every run
// flag that sets a recorded setting and is not given takes the value the
// batch's latest run of the manifest recorded, and the recipients (or
// --plaintext) the batch's first run recorded are used when none is
// given. A flag given wins, and the run records it, as every run records
// its settings.

// settingFlags maps each run flag that sets a recorded setting to the
// setting's names in the recorded JSON (a policy's under "policy.").
var settingFlags = map[string][]string{
	"root":               {"root"},
	"max-bytes":          {"max_bytes"},
	"max-pages":          {"max_pages"},
	"page-timeout":       {"page_timeout"},
	"doc-timeout":        {"doc_timeout", "no_doc_timeout"},
	"attempts":           {"attempts"},
	"slo":                {"slo"},
	"max-inflight-bytes": {"max_inflight"},
	"worker-memory":      {"worker_memory"},
	"admit-memory":       {"admit_memory"},
	"admit-timeout":      {"admit_timeout"},
	"coverage-threshold": {"coverage_threshold"},
	"high-confidence":    {"high_confidence"},
	"low-confidence":     {"low_confidence"},
	"no-id-check":        {"no_id_check"},
	"dpi":                {"policy.dpi"},
	"max-page-pixels":    {"policy.max_page_pixels"},
	"lang":               {"policy.lang"},
	"force-ocr":          {"policy.force_ocr"},
	"no-orientation":     {"policy.no_orientation"},
	"no-deskew":          {"policy.no_deskew"},
	"no-despeckle":       {"policy.no_despeckle"},
	"no-coverage":        {"policy.no_coverage"},
	"no-recovery":        {"policy.no_recovery"},
	"cover-confidence":   {"policy.cover_confidence"},
	"first-dpi":          {"policy.first_dpi"},
	"cascade":            {"policy.cascade"},
	"no-cascade":         {"policy.cascade"},
}

// remember fills o with what the batch in o's --out (or --journal)
// recorded, for every setting whose flag isSet says was not given, and
// the batch's recipients when none was given. It returns the flags taken
// from the batch, with their values, for the run's summary; none for a
// new batch.
func remember(o *runOptions, isSet func(string) bool) ([]string, error) {
	path := o.batch.Manifest
	if path != manifest.Stdin {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		path = abs
	}
	rec, err := layout.ReadRecorded(layout.Place{Out: o.batch.Out, Journal: o.batch.Journal}, path)
	if err != nil || !rec.Found {
		return nil, err
	}
	root := filepath.Dir(path)
	if path == manifest.Stdin {
		if root, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	merged, from, err := mergeSettings(rec.Settings, o.batch.Settings, root, isSet)
	if err != nil {
		return nil, err
	}
	o.batch.Settings = merged
	given := len(o.recipients)+len(o.addRecipients) > 0 || o.recipientsFile != "" || o.envRecipients != "" || isSet("plaintext")
	switch {
	case given:
	case rec.Plaintext:
		o.batch.Plaintext = true
		from = append(from, "--plaintext")
	case len(rec.Recipients) > 0:
		if o.batch.Recipients, err = parseRecipients(rec.Recipients); err != nil {
			return nil, fmt.Errorf("the batch's recorded recipients: %w", err)
		}
		from = append(from, fmt.Sprintf("the recipients (%d key%s)", len(rec.Recipients), plural(len(rec.Recipients))))
	}
	return from, nil
}

// mergeSettings is rec with the settings whose flags were given taken
// from cur, and this run's workers (what the machine brings, not the
// batch). from names the flags whose recorded value differs from what
// this run would otherwise have used.
func mergeSettings(rec, cur layout.Settings, defaultRoot string, isSet func(string) bool) (layout.Settings, []string, error) {
	recM, err := settingsMap(rec)
	if err != nil {
		return cur, nil, err
	}
	curM, err := settingsMap(cur)
	if err != nil {
		return cur, nil, err
	}
	setKey(recM, "workers", curM["workers"])
	if rec.Root == defaultRoot && !isSet("root") {
		setKey(recM, "root", curM["root"]) // the same folder: nothing taken
	}
	var from []string
	for _, flag := range slices.Sorted(maps.Keys(settingFlags)) {
		keys := settingFlags[flag]
		if isSet(flag) {
			for _, k := range keys {
				setKey(recM, k, getKey(curM, k))
			}
			continue
		}
		if flag == "no-cascade" {
			continue // --cascade says it
		}
		for _, k := range keys {
			if a, b := fmt.Sprint(getKey(recM, k)), fmt.Sprint(getKey(curM, k)); a != b {
				from = append(from, flagValue(flag, getKey(recM, keys[0]), rec))
				break
			}
		}
	}
	b, err := json.Marshal(recM)
	if err != nil {
		return cur, nil, err
	}
	var out layout.Settings
	if err := json.Unmarshal(b, &out); err != nil {
		return cur, nil, err
	}
	return out, from, nil
}

// flagValue words a flag and the value taken from the batch: --no-id-check,
// --max-page-pixels 20000000, --page-timeout 1m0s.
func flagValue(flag string, v any, rec layout.Settings) string {
	if b, ok := v.(bool); ok {
		if b {
			return "--" + flag
		}
		return "--" + flag + "=false"
	}
	if s, ok := rec.Strings()[strings.ReplaceAll(flag, "-", "_")]; ok {
		return "--" + flag + " " + s
	}
	return fmt.Sprintf("--%s %v", flag, v)
}

func getKey(m map[string]any, key string) any {
	if p, rest, ok := strings.Cut(key, "."); ok {
		sub, _ := m[p].(map[string]any)
		return getKey(sub, rest)
	}
	return m[key]
}

func setKey(m map[string]any, key string, v any) {
	if p, rest, ok := strings.Cut(key, "."); ok {
		sub, _ := m[p].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
			m[p] = sub
		}
		setKey(sub, rest, v)
		return
	}
	if v == nil {
		delete(m, key)
		return
	}
	m[key] = v
}

// settingsMap is s as the journal records it, decoded into a map (its
// numbers kept as written).
func settingsMap(s layout.Settings) (map[string]any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	m := map[string]any{}
	return m, d.Decode(&m)
}
