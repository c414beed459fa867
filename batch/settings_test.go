package batch

import (
	"encoding/json"
	"testing"
	"time"

	"filippo.io/age"
)

// TestSettingsGolden pins what a run records of its options: the settings
// the journal and report.json carry, and the policy and its version every
// artifact carries. A refactor of the options must leave both as they are; a
// change here is a change of the published record, to be made on purpose
// (go test ./batch -run TestSettingsGolden -update) and announced.
func TestSettingsGolden(t *testing.T) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		o    Options
	}{
		// Workers defaults to the machine's CPU count: fixed here so the
		// file is the same on every machine.
		{"defaults", Options{Workers: 4}},
		{"dpi under the minimum", Options{Workers: 1, DPI: 100}},
		{"every switch", Options{
			Workers: 8, DPI: 200, MinDPI: 120, MaxBytes: 1 << 20, MaxPages: 10, MaxPagePixels: 10_000_000,
			PageTimeout: time.Minute, DocTimeout: 90 * time.Second, Attempts: 5, Lang: "eng+deu",
			MaxInflightBytes: 1 << 30, SLO: time.Hour, ForceOCR: true, NoOrientation: true, NoDeskew: true,
			NoDespeckle: true, NoCoverage: true, CoverageThreshold: 0.2, NoIDCheck: true,
			Recipients: []age.Recipient{id.Recipient()}, HighConfidence: 90, LowConfidence: 70, Root: "/archive",
		}},
		{"no ID check alone", Options{Workers: 2, NoIDCheck: true}},
		{"no coverage alone", Options{Workers: 2, NoCoverage: true}},
	}
	type record struct {
		Settings      map[string]string `json:"settings"`
		Policy        map[string]any    `json:"policy"`
		PolicyVersion string            `json:"policy_version"`
	}
	got := map[string]record{}
	for _, c := range cases {
		o := c.o.withDefaults()
		got[c.name] = record{Settings: o.Settings(), Policy: o.policySettings(), PolicyVersion: o.PolicyVersion()}
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "settings.golden.json", append(b, '\n'))
}
