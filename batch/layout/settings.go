package layout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/refbatch/refbatch/ocr/page"
	"github.com/refbatch/refbatch/report/outcome"
)

// Settings are a run's settings: everything that changes what a run
// produces, and the limits it ran under. batch.Options embeds them; a zero field
// is the default. The journal keeps them, as JSON, for every run; report.json
// shows them as strings (Strings); the artifacts carry a hash of those that
// change what an artifact says (PolicyVersion).
type Settings struct {
	// Policy is how pages are rendered and recognised; its fields read as
	// the settings' own (s.DPI, s.NoDeskew).
	page.Policy `json:"policy"`

	// Root is the folder manifest paths are relative to; default the
	// manifest's folder. A run records it absolute.
	Root string `json:"root"`

	// Workers is the number of OCR worker processes; default the number
	// of CPUs.
	Workers int `json:"workers"`
	// MaxBytes and MaxPages are admission's caps on a file; defaults
	// admit.DefaultMaxBytes and admit.DefaultMaxPages.
	MaxBytes int64 `json:"max_bytes"`
	MaxPages int   `json:"max_pages"`
	// PageTimeout is how long a page may take before it is a hang.
	// DocTimeout is the engines' time a whole document may take, counted
	// over its pages whichever workers read them; 0 is the budget its
	// page count gives it (DocBudget), and NoDocTimeout sets none.
	PageTimeout  time.Duration `json:"page_timeout"`
	DocTimeout   time.Duration `json:"doc_timeout"`
	NoDocTimeout bool          `json:"no_doc_timeout,omitempty"`
	// Attempts is how many times a document whose engine failed is tried
	// before it goes to review attempts_exhausted.
	Attempts int `json:"attempts"`
	// MaxInflightBytes bounds the source bytes held by the engines at once
	// (a document's bytes are held from read until its last page); an
	// engine waits for room rather than grow memory. One document larger
	// than the budget still runs, alone.
	MaxInflightBytes int64 `json:"max_inflight"`
	// SLO is the target from admission to done, for the report's
	// within_slo share.
	SLO time.Duration `json:"slo"`

	// Confidence bands: a document's mean confidence per character at or
	// above HighConfidence is high, at or above LowConfidence medium, and
	// below LowConfidence it goes to review low_confidence.
	HighConfidence float64 `json:"high_confidence"`
	LowConfidence  float64 `json:"low_confidence"`
	// CoverageThreshold is the unread share of a page's print (after it
	// was read again) above which its document goes to review
	// incomplete_text, unless the policy's NoCoverage is set.
	CoverageThreshold float64 `json:"coverage_threshold"`
	// NoIDCheck skips the participant ID and referral date checks, for
	// corpora that carry no participant IDs (a test corpus).
	NoIDCheck bool `json:"no_id_check"`

	// WorkerMemory is each OCR worker's address-space limit (RLIMIT_AS)
	// in bytes; 0 means none, and ocr.DefaultMemoryLimit documents what a
	// worker needs. AdmitMemory and AdmitTimeout bound admission's PDF
	// checks of one file: its resident memory, and its CPU time for a
	// small file (a larger one gets more; see admit.PoolConfig); defaults
	// admit.DefaultInspectMemory and admit.DefaultInspectTimeout.
	WorkerMemory int64         `json:"worker_memory"`
	AdmitMemory  int64         `json:"admit_memory"`
	AdmitTimeout time.Duration `json:"admit_timeout"`

	// Encrypted records whether the run encrypts its artifacts; Run sets
	// it from Options.Recipients.
	Encrypted bool `json:"encrypted"`

	// legacy holds the strings an earlier build recorded, when the
	// settings were read from them: the report shows those as they were.
	legacy map[string]string
}

// SettingsFormat marks the settings a journal stores as this struct's
// JSON. Earlier builds stored a map of strings, without it; format 2 is
// the same JSON from before a document's time budget was on by default,
// when a DocTimeout of 0 meant none (decodeFormat reads it so).
const SettingsFormat = 3

// decodeFormat reads the format of stored settings, and brings the
// settings of format 2 to this one's meaning. ok is false when stored is
// not settings JSON of either format.
func decodeFormat(format int, s *Settings) (ok bool) {
	switch format {
	case 2:
		s.NoDocTimeout = s.DocTimeout == 0
		return true
	case SettingsFormat:
		return true
	}
	return false
}

// SettingError is a setting outside the values it may take. Setting is
// the setting's recorded name (workers, dpi, coverage_threshold, ...): the
// page policy's errors and admission's are of this type too.
type SettingError = page.SettingError

// RunRecord is what the journal stores of a run's settings: the settings,
// and the manifest the run streamed, or, for a join, that it worked on
// every manifest of the batch.
type RunRecord struct {
	Format   int    `json:"format"`
	Manifest string `json:"manifest,omitempty"`
	Join     bool   `json:"join,omitempty"`
	// StdinSHA256 is the SHA-256 of a manifest the run read from the
	// standard input (Manifest "-"): its bytes are not stored.
	StdinSHA256 string `json:"stdin_sha256,omitempty"`
	// StdinRows is that manifest's rows, for status, which cannot read it.
	StdinRows int `json:"stdin_rows,omitempty"`
	Settings
}

// Encode is the settings as the journal stores them.
func (s Settings) Encode() string { return s.EncodeRun("", false) }

// EncodeRun is the settings of a run of manifest (of a join when join is
// set) as the journal stores them.
func (s Settings) EncodeRun(manifest string, join bool) string {
	b, err := json.Marshal(RunRecord{Format: SettingsFormat, Manifest: manifest, Join: join, Settings: s})
	if err != nil {
		panic(err) // plain fields: cannot fail
	}
	return string(b)
}

// EncodeManifestRun is EncodeRun of a run that streamed manifest, with the
// SHA-256 of its bytes and its rows when it was read from the standard
// input.
func (s Settings) EncodeManifestRun(manifest, stdinSHA256 string, stdinRows int) string {
	b, err := json.Marshal(RunRecord{Format: SettingsFormat, Manifest: manifest, StdinSHA256: stdinSHA256, StdinRows: stdinRows, Settings: s})
	if err != nil {
		panic(err) // plain fields: cannot fail
	}
	return string(b)
}

// DecodeRun reads what EncodeRun stored; ok is false for settings an
// earlier build stored, which named no manifest.
func DecodeRun(stored string) (rec RunRecord, ok bool) {
	if json.Unmarshal([]byte(stored), &rec) != nil || !decodeFormat(rec.Format, &rec.Settings) {
		return RunRecord{}, false
	}
	rec.Settings.legacyCascade(stored)
	return rec, true
}

// DecodeSettings reads settings the journal stored: this build's JSON, or
// the map of strings earlier builds stored, whose missing settings take
// today's defaults. ok is false when there are none ("{}", or not JSON).
func DecodeSettings(stored string) (s Settings, ok bool) {
	var v struct {
		Format int `json:"format"`
		Settings
	}
	if json.Unmarshal([]byte(stored), &v) == nil && decodeFormat(v.Format, &v.Settings) {
		v.Settings.legacyCascade(stored)
		return v.Settings, true
	}
	var m map[string]string
	if json.Unmarshal([]byte(stored), &m) != nil || len(m) == 0 {
		return Settings{}, false
	}
	return legacySettings(m), true
}

// legacyCascade sets s's cascade from the no_cascade that builds in which
// the cascade was on by default stored (it was on unless no_cascade was
// true), when stored has that and no cascade of its own.
func (s *Settings) legacyCascade(stored string) {
	var v struct {
		Policy json.RawMessage `json:"policy"`
	}
	if json.Unmarshal([]byte(stored), &v) == nil && v.Policy != nil {
		LegacyCascade(v.Policy, &s.Policy)
	}
}

// LegacyCascade is Settings.legacyCascade for a stored policy on its own
// (a retry decision's).
func LegacyCascade(stored []byte, p *page.Policy) {
	var v struct {
		NoCascade *bool `json:"no_cascade"`
		Cascade   *bool `json:"cascade"`
	}
	if json.Unmarshal(stored, &v) == nil && v.NoCascade != nil && v.Cascade == nil {
		p.Cascade = !*v.NoCascade
	}
}

// legacySettings reads the map of strings earlier builds recorded (the
// report's view of the time): it is the one reader of settings as strings.
func legacySettings(m map[string]string) Settings {
	s := Settings{legacy: m}
	num := func(key string, into any) {
		v, ok := m[key]
		if !ok {
			return
		}
		switch p := into.(type) {
		case *int:
			n, _ := strconv.Atoi(v)
			*p = n
		case *int64:
			n, _ := strconv.ParseInt(v, 10, 64)
			*p = n
		case *float64:
			f, _ := strconv.ParseFloat(v, 64)
			*p = f
		case *time.Duration:
			d, _ := time.ParseDuration(v)
			*p = d
		case *bool:
			*p = v == "true"
		}
	}
	s.Lang, s.Root = m["lang"], m["root"]
	num("dpi", &s.DPI)
	num("min_dpi", &s.MinDPI)
	num("max_page_pixels", &s.MaxPagePixels)
	num("force_ocr", &s.ForceOCR)
	for key, off := range map[string]*bool{"orientation": &s.NoOrientation, "deskew": &s.NoDeskew, "despeckle": &s.NoDespeckle, "coverage": &s.NoCoverage} {
		*off = m[key] == "false"
	}
	num("workers", &s.Workers)
	num("max_bytes", &s.MaxBytes)
	num("max_pages", &s.MaxPages)
	num("page_timeout", &s.PageTimeout)
	num("doc_timeout", &s.DocTimeout)
	// Earlier builds had no budget unless one was given ("auto" is this
	// build's, which the report shows).
	_, given := m["doc_timeout"]
	s.NoDocTimeout = !given
	num("attempts", &s.Attempts)
	num("max_inflight", &s.MaxInflightBytes)
	num("slo", &s.SLO)
	num("high_confidence", &s.HighConfidence)
	num("low_confidence", &s.LowConfidence)
	num("coverage_threshold", &s.CoverageThreshold)
	s.NoIDCheck = m["id_check"] == "off"
	num("encrypted", &s.Encrypted)
	return s.WithDefaults()
}

// Strings is the settings as report.json's run.settings shows them, one
// string per setting: the report's schema keeps those names and spellings
// (see report.SchemaVersion), and adds new settings beside them. Settings
// an earlier build recorded are shown as it recorded them.
func (s Settings) Strings() map[string]string {
	if s.legacy != nil {
		return maps.Clone(s.legacy)
	}
	m := map[string]string{
		"root":               s.Root,
		"workers":            fmt.Sprint(s.Workers),
		"max_bytes":          fmt.Sprint(s.MaxBytes),
		"max_pages":          fmt.Sprint(s.MaxPages),
		"page_timeout":       s.PageTimeout.String(),
		"attempts":           fmt.Sprint(s.Attempts),
		"max_inflight":       fmt.Sprint(s.MaxInflightBytes),
		"slo":                s.SLO.String(),
		"high_confidence":    fmt.Sprint(s.HighConfidence),
		"low_confidence":     fmt.Sprint(s.LowConfidence),
		"coverage_threshold": fmt.Sprint(s.CoverageThreshold),
		"worker_memory":      fmt.Sprint(s.WorkerMemory),
		"admit_memory":       fmt.Sprint(s.AdmitMemory),
		"admit_timeout":      s.AdmitTimeout.String(),
		"encrypted":          fmt.Sprint(s.Encrypted),
		"policy_version":     s.PolicyVersion(),
	}
	for _, p := range s.Policy.Recorded() {
		m[p.Name] = fmt.Sprint(p.Value)
	}
	switch {
	case s.DocTimeout > 0:
		m["doc_timeout"] = s.DocTimeout.String()
	case !s.NoDocTimeout:
		m["doc_timeout"] = "auto"
	}
	if s.NoIDCheck {
		m["id_check"] = "off"
	}
	return m
}

// PolicyVersion is a short hash of every setting that changes what an
// artifact says (PolicyRecord), so two artifacts made under different
// policies can be told apart.
func (s Settings) PolicyVersion() string {
	b, _ := json.Marshal(s.PolicyRecord())
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// PolicyRecord is what the artifacts' provenance records of the policy,
// and what PolicyVersion hashes: the page policy, the confidence bands,
// the coverage threshold and which validation checks run.
func (s Settings) PolicyRecord() map[string]any {
	m := map[string]any{
		"high_confidence":    s.HighConfidence,
		"low_confidence":     s.LowConfidence,
		"coverage_threshold": s.CoverageThreshold,
		"validation":         s.Validation(),
	}
	for _, p := range s.Policy.Recorded() {
		m[p.Name] = p.Value
	}
	return m
}

// Validation names, for the policy hash, the checks validation runs in
// their order and the revision of the rule they make together, which went
// up when a check changed: 3 when id_not_found began to look for the
// referral date too, 4 with incomplete_text, 5 when a missing date became
// date_not_found of its own, 6 with handwriting (which comes with the
// coverage step).
func (s Settings) Validation() string {
	checks := []string{string(outcome.EmptyText), string(outcome.LowConfidence)}
	revision := 2
	if !s.NoCoverage {
		checks = append(checks, string(outcome.Handwriting), string(outcome.IncompleteText))
		revision = 6
	}
	if !s.NoIDCheck {
		checks = append(checks, string(outcome.IDNotFound), string(outcome.DateNotFound))
		revision = max(revision, 5)
	}
	return strings.Join(checks, ",") + "/" + strconv.Itoa(revision)
}

// docBudgetShare is the share of the page timeout each page adds to a
// document's time budget.
const docBudgetShare = 20

// DocBudget is the engines' time a document of pages pages may take, 0
// for none: DocTimeout when it is set, else the page timeout, which any
// one page may take, plus a twentieth of it for each page (with the
// default 2 min: 2 min plus 6 s a page, 22 min for 200 pages, over ten
// times what a page of print takes at 300 dpi). That budget is earned as
// the pages begin (docWork): at any moment the engines may have spent the
// page timeout plus a twentieth of it for each page begun.
func (s Settings) DocBudget(pages int) time.Duration {
	switch {
	case s.NoDocTimeout:
		return 0
	case s.DocTimeout > 0:
		return s.DocTimeout
	}
	return s.PageTimeout + time.Duration(pages)*s.PageTimeout/docBudgetShare
}

// DocBudgetPerPage is what each page adds to the budget the page count
// gives (DocBudget), earned as the page begins; 0 when the budget is
// DocTimeout's or none.
func (s Settings) DocBudgetPerPage() time.Duration {
	if s.NoDocTimeout || s.DocTimeout > 0 {
		return 0
	}
	return s.PageTimeout / docBudgetShare
}
