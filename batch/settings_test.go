package batch

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/batchtest"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr/page"
)

// goldenSettings are the options TestSettingsGolden pins. Workers
// defaults to the machine's CPU count: it is fixed so that the file is the
// same on every machine.
func goldenSettings(t *testing.T) map[string]Options {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Options{
		"defaults":              {Settings: layout.Settings{Workers: 4}},
		"dpi under the minimum": {Settings: layout.Settings{Workers: 1, Policy: page.Policy{DPI: 100}}},
		"every switch": {
			Settings: layout.Settings{
				Policy: page.Policy{Lang: "eng+deu", DPI: 200, MinDPI: 120, MaxPagePixels: 10_000_000,
					ForceOCR: true, NoOrientation: true, NoDeskew: true, NoDespeckle: true, NoCoverage: true},
				Root: "/archive", Workers: 8, MaxBytes: 1 << 20, MaxPages: 10,
				PageTimeout: time.Minute, DocTimeout: 90 * time.Second, Attempts: 5, MaxInflightBytes: 1 << 30, SLO: time.Hour,
				HighConfidence: 90, LowConfidence: 70, CoverageThreshold: 0.2, NoIDCheck: true,
				WorkerMemory: 3 << 30, AdmitMemory: 100 << 20, AdmitTimeout: 2 * time.Second,
			},
			Recipients: []age.Recipient{id.Recipient()},
		},
		"no ID check alone": {Settings: layout.Settings{Workers: 2, NoIDCheck: true}},
		"no coverage alone": {Settings: layout.Settings{Workers: 2, Policy: page.Policy{NoCoverage: true}}},
	}
}

// TestSettingsGolden pins what a run records of its options: the settings
// report.json shows, and the policy and its version every artifact
// carries. A refactor of the options must leave them as they are; a
// change here is a change of the published record, to be made on purpose
// (go test ./batch -run TestSettingsGolden -update) and announced.
func TestSettingsGolden(t *testing.T) {
	type record struct {
		Settings      map[string]string `json:"settings"`
		Policy        map[string]any    `json:"policy"`
		PolicyVersion string            `json:"policy_version"`
	}
	got := map[string]record{}
	for name, o := range goldenSettings(t) {
		o = o.withDefaults()
		got[name] = record{Settings: o.Settings.Strings(), Policy: o.PolicyRecord(), PolicyVersion: o.PolicyVersion()}
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "settings.golden.json", append(b, '\n'))
}

// TestSettingsJournal: the journal stores the settings as JSON and gives
// them back as they were; the maps of strings earlier builds stored are
// read into the same type, and shown as they were recorded.
func TestSettingsJournal(t *testing.T) {
	for name, o := range goldenSettings(t) {
		t.Run(name, func(t *testing.T) {
			want := o.withDefaults().Settings
			got, ok := layout.DecodeSettings(want.Encode())
			if !ok || !reflect.DeepEqual(got, want) {
				t.Fatalf("decode(encode()) = %+v, %t; want %+v", got, ok, want)
			}

			// The same run as an earlier build recorded it.
			old := want.Strings()
			delete(old, "worker_memory")
			delete(old, "admit_memory")
			delete(old, "admit_timeout")
			b, _ := json.Marshal(old)
			legacy, ok := layout.DecodeSettings(string(b))
			if !ok {
				t.Fatalf("%s does not decode", b)
			}
			if shown := legacy.Strings(); !maps.Equal(shown, old) {
				t.Errorf("an earlier build's settings are shown as %v; want them as recorded, %v", shown, old)
			}
			want.WorkerMemory, want.AdmitMemory, want.AdmitTimeout = 0, legacy.AdmitMemory, legacy.AdmitTimeout
			// As JSON, which leaves out the strings legacy keeps to show.
			if l, w := jsonOf(t, legacy), jsonOf(t, want); l != w {
				t.Errorf("an earlier build's settings read as\n%+v; want\n%+v", legacy, want)
			}
		})
	}
	for _, none := range []string{"{}", "", "not json", `{"format":99}`} {
		if s, ok := layout.DecodeSettings(none); ok {
			t.Errorf("decodeSettings(%q) = %+v, true; want none", none, s)
		}
	}
}

// TestSettingsDocBudget: a document's time budget follows its page
// count unless one is given; the settings of format 2, from before the
// budget was on by default, read a doc_timeout of 0 as none.
func TestSettingsDocBudget(t *testing.T) {
	s := layout.Settings{}.WithDefaults()
	for pages, want := range map[int]time.Duration{1: 126 * time.Second, 200: 22 * time.Minute} {
		if got := s.DocBudget(pages); got != want {
			t.Errorf("default budget of %d pages: %v, want %v", pages, got, want)
		}
	}
	if got := (layout.Settings{PageTimeout: time.Second}).DocBudget(40); got != 3*time.Second {
		t.Errorf("budget of 40 pages at a 1s page timeout: %v, want 3s", got)
	}
	if got := (layout.Settings{DocTimeout: time.Minute}).DocBudget(200); got != time.Minute {
		t.Errorf("given budget: %v, want 1m", got)
	}
	if got := (layout.Settings{NoDocTimeout: true}).DocBudget(200); got != 0 {
		t.Errorf("no budget: %v, want 0", got)
	}
	for stored, none := range map[string]bool{
		`{"format":2,"doc_timeout":0}`:           true,
		`{"format":2,"doc_timeout":60000000000}`: false,
		`{"format":3,"doc_timeout":0}`:           false,
	} {
		got, ok := layout.DecodeSettings(stored)
		if !ok || got.NoDocTimeout != none {
			t.Errorf("decodeSettings(%s): no budget %t (ok %t), want %t", stored, got.NoDocTimeout, ok, none)
		}
		rec, ok := layout.DecodeRun(stored)
		if !ok || rec.NoDocTimeout != none {
			t.Errorf("decodeRun(%s): no budget %t (ok %t), want %t", stored, rec.NoDocTimeout, ok, none)
		}
	}
	if err := (Options{Settings: layout.Settings{DocTimeout: time.Minute, NoDocTimeout: true}}).Validate(); err == nil {
		t.Error("a budget and none at once: valid")
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		s       layout.Settings
		setting string // "" when valid
	}{
		{"zero options", layout.Settings{}, ""},
		{"low band equal to the high", layout.Settings{HighConfidence: 80, LowConfidence: 80}, ""},
		{"no worker memory limit", layout.Settings{WorkerMemory: 0}, ""},
		{"negative dpi", layout.Settings{Policy: page.Policy{DPI: -300}}, "dpi"},
		{"minimum dpi above the dpi", layout.Settings{Policy: page.Policy{DPI: 100, MinDPI: 150}}, "min_dpi"},
		{"negative pixel cap", layout.Settings{Policy: page.Policy{MaxPagePixels: -1}}, "max_page_pixels"},
		{"empty language among several", layout.Settings{Policy: page.Policy{Lang: "eng++deu"}}, "lang"},
		{"negative byte cap", layout.Settings{MaxBytes: -1}, "max_bytes"},
		{"negative page cap", layout.Settings{MaxPages: -1}, "max_pages"},
		{"negative workers", layout.Settings{Workers: -2}, "workers"},
		{"negative page timeout", layout.Settings{PageTimeout: -time.Second}, "page_timeout"},
		{"negative document timeout", layout.Settings{DocTimeout: -time.Second}, "doc_timeout"},
		{"negative attempts", layout.Settings{Attempts: -1}, "attempts"},
		{"negative in-flight budget", layout.Settings{MaxInflightBytes: -1}, "max_inflight"},
		{"negative SLO", layout.Settings{SLO: -time.Hour}, "slo"},
		{"high band over 100", layout.Settings{HighConfidence: 101}, "high_confidence"},
		{"negative high band", layout.Settings{HighConfidence: -1}, "high_confidence"},
		{"low band above the high", layout.Settings{LowConfidence: 95}, "low_confidence"},
		{"negative low band", layout.Settings{LowConfidence: -1}, "low_confidence"},
		{"coverage threshold over 1", layout.Settings{CoverageThreshold: 1.5}, "coverage_threshold"},
		{"negative coverage threshold", layout.Settings{CoverageThreshold: -0.1}, "coverage_threshold"},
		{"negative worker memory", layout.Settings{WorkerMemory: -1}, "worker_memory"},
		{"negative admission memory", layout.Settings{AdmitMemory: -1}, "admit_memory"},
		{"negative admission timeout", layout.Settings{AdmitTimeout: -time.Second}, "admit_timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Options{Settings: tt.s}.Validate()
			var se *layout.SettingError
			switch {
			case tt.setting == "" && err != nil:
				t.Fatalf("Validate() = %v; want nil", err)
			case tt.setting == "":
			case !errors.As(err, &se) || se.Setting != tt.setting:
				t.Fatalf("Validate() = %v; want a *SettingError about %s", err, tt.setting)
			}
		})
	}
}

// TestLegacyCascade: builds in which the cascade was on by default stored
// no_cascade; their runs read under the cascade unless it was true, and
// are read back so. A policy stored with cascade keeps it.
func TestLegacyCascade(t *testing.T) {
	tests := []struct {
		name, policy string
		want         bool
	}{
		{"cascade on by default then", `{"dpi":300,"first_dpi":200,"no_cascade":false}`, true},
		{"--no-cascade then", `{"dpi":300,"first_dpi":200,"no_cascade":true}`, false},
		{"this build, off", `{"dpi":300,"first_dpi":200,"cascade":false}`, false},
		{"this build, on", `{"dpi":300,"first_dpi":200,"cascade":true}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored := fmt.Sprintf(`{"format":%d,"manifest":"m.csv","policy":%s,"workers":2}`, layout.SettingsFormat, tt.policy)
			s, ok := layout.DecodeSettings(stored)
			if !ok || s.Cascade != tt.want || s.Workers != 2 {
				t.Errorf("decodeSettings: ok %t, cascade %t, workers %d; want cascade %t", ok, s.Cascade, s.Workers, tt.want)
			}
			rec, ok := layout.DecodeRun(stored)
			if !ok || rec.Cascade != tt.want || rec.Manifest != "m.csv" {
				t.Errorf("decodeRun: ok %t, cascade %t, manifest %q; want cascade %t", ok, rec.Cascade, rec.Manifest, tt.want)
			}
			o, err := Options{}.docOptions(journal.Doc{SourceID: "R-1", RetryPolicy: tt.policy})
			if err != nil || o.Cascade != tt.want {
				t.Errorf("docOptions: %v, cascade %t; want %t", err, o.Cascade, tt.want)
			}
		})
	}
}

// TestDocBudgetEarnedByPage: a budget the page count gives is earned as
// pages begin, so a 200-page file of 10.5 s pages (the 37 KB form
// bomb) is stopped near its 29th page, about 5 minutes in, not after its
// whole 22 minutes; a given --doc-timeout is all there from the start.
func TestDocBudgetEarnedByPage(t *testing.T) {
	s := layout.Settings{}.WithDefaults()
	const slow = 10500 * time.Millisecond
	read := func(d *docWork) (pages int) {
		for pages < d.pages {
			timeout, _, over := d.pageTimeout(s.PageTimeout)
			if over || timeout < slow {
				return pages
			}
			d.used.Add(int64(slow))
			pages++
		}
		return pages
	}
	auto := &docWork{pages: 200, budget: s.DocBudget(200), perPage: s.DocBudgetPerPage()}
	if n := read(auto); n < 20 || n > 30 {
		t.Errorf("the default budget let %d slow pages be read, want about 28", n)
	}
	given := layout.Settings{DocTimeout: 22 * time.Minute}.WithDefaults()
	fixed := &docWork{pages: 200, budget: given.DocBudget(200), perPage: given.DocBudgetPerPage()}
	if n := read(fixed); n != 125 {
		t.Errorf("a given budget of 22m let %d slow pages be read, want 125", n)
	}
	fast := &docWork{pages: 200, budget: s.DocBudget(200), perPage: s.DocBudgetPerPage()}
	for i := 0; i < 200; i++ {
		if _, _, over := fast.pageTimeout(s.PageTimeout); over {
			t.Fatalf("pages of 3 s stopped at page %d", i+1)
		}
		fast.used.Add(int64(3 * time.Second))
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenFile compares got with testdata/name, or rewrites it with -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	batchtest.Golden(t, name, got, *updateGolden)
}
