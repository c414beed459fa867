package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/batchtest"

	"github.com/refbatch/refbatch/report/outcome"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture is a small batch with every final state, reasons in two states,
// rows out of manifest order and a settings map.
func fixture() *Report {
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	rows := []Row{
		{ManifestLine: 5, SourceID: "R-0004", State: "rejected", Reason: "not_pdf", SHA256: "4c1f0e4b1a0d2b0e6f1c9a7d3e5b8c2a4f6e8d0c1b3a5f7e9d2c4b6a8f0e1d3c"},
		{ManifestLine: 2, SourceID: "R-0001", State: "done", SHA256: "9f2b6c1d8e3a4f5b0c7d2e9a1b6c3d8e4f0a5b2c7d1e6f3a9b4c8d2e5f0a7b1c", Pages: 2, MeanConfidence: 91.4, Band: "high", Attempts: 1, Artifact: "artifacts/R-0001.txt.age", TraceID: "7d3c0a2e9b1f4c68"},
		{ManifestLine: 3, SourceID: "R-0002", State: "review", Reason: "low_confidence", SHA256: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809", Pages: 3, MeanConfidence: 42.75, Band: "low", Attempts: 1, Artifact: "artifacts/R-0002.txt.age", TraceID: "a1b2c3d4e5f60718"},
		{ManifestLine: 4, SourceID: "R-0003", State: "review", Reason: "attempts_exhausted", SHA256: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", Pages: 1, Attempts: 3, TraceID: "0f1e2d3c4b5a6978"},
		{ManifestLine: 6, SourceID: "R-0001", State: "duplicate", SHA256: "9f2b6c1d8e3a4f5b0c7d2e9a1b6c3d8e4f0a5b2c7d1e6f3a9b4c8d2e5f0a7b1c", Pages: 2},
		{ManifestLine: 7, SourceID: "", State: "rejected", Reason: "missing_field"},
		{ManifestLine: 8, SourceID: "R-0006", State: "rejected", Reason: "not_pdf", SHA256: "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"},
		{ManifestLine: 9, SourceID: "R-0007", State: "done", SHA256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Pages: 4, MeanConfidence: 88, Band: "medium", Attempts: 2, Artifact: "artifacts/R-0007.txt.age", TraceID: "5566778899aabbcc"},
	}
	s := Summarize(rows)
	s.PagesPerMinute = 10.0 / 1.5
	s.OCRPageSeconds = NewQuantiles([]float64{2.1, 2.4, 3.9, 2.2, 2.8, 5.6, 2.3, 2.5, 2.6, 2.7})
	s.QueueAgeSeconds = NewQuantiles([]float64{0.01, 4.2, 9.75, 12.5})
	s.AdmissionToStartSeconds = NewQuantiles([]float64{0.02, 0.05, 0.04, 0.3})
	s.Retries = 1
	s.PeakInflightBytes = 3*1024*1024 + 512*1024
	s.SLOSeconds = 600
	s.WithinSLO, s.SLOMeasured = 0.5, 4
	s.Documents = 4
	s.BlankRows = 2
	s.OCRPageHistogram = NewLogHistogram([]float64{2.1, 2.4, 3.9, 2.2, 2.8, 5.6, 2.3, 2.5, 2.6, 2.7})
	s.ConfidenceBands = Bands{High: 85, Low: 60}
	s.TimeBreakdown = []Phase{
		{Name: PhaseStart, Clock: ClockWall, Seconds: 3.2, PerDocument: Quantiles{N: 3, P50: 0.9, P95: 1.6, Max: 1.6}},
		{Name: PhasePages, Clock: ClockWall, Seconds: 20.5, PerDocument: Quantiles{N: 3, P50: 6.1, P95: 9.8, Max: 9.8}},
		{Name: PhaseHandoff, Clock: ClockWall, Seconds: 0.9, PerDocument: Quantiles{N: 3, P50: 0.3, P95: 0.4, Max: 0.4}},
		{Name: PhaseRender, Clock: ClockEngine, Seconds: 6.5, PerDocument: Quantiles{N: 3, P50: 1.9, P95: 2.8, Max: 2.8}},
		{Name: PhaseRecognise, Clock: ClockEngine, Seconds: 21, PerDocument: Quantiles{N: 3, P50: 6.2, P95: 9.1, Max: 9.1}},
	}
	var points []TimelinePoint
	for i := range 10 {
		points = append(points, TimelinePoint{Seconds: float64(10 * i), Queued: max(0, 3-i/2), Running: min(2, 4-i/3),
			Finished: i / 2, OldestQueuedSeconds: float64(5 * (i % 4)), InflightBytes: int64(1024 * (i % 3))})
	}
	return &Report{
		SchemaVersion: SchemaVersion,
		GeneratedAt:   start.Add(95 * time.Second),
		Complete:      true,
		Run: Run{
			Manifest:    "referrals-2025-03.csv",
			StartedAt:   start,
			FinishedAt:  start.Add(90 * time.Second),
			WallSeconds: 90,
			CPUSeconds:  171.25,
			Encrypted:   true,
			Recipients:  []string{"age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p", "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"},
			Settings:    map[string]string{"workers": "2", "dpi": "300", "attempts": "3", "max_pages": "200"},
			Versions:    map[string]string{"refbatch": "v0.1.0", "tesseract": "5.3.0", "mupdf": "1.24.15"},
		},
		Runs: []Invocation{
			{Owner: "archive-1/4242/100/0a1b2c3d", StartedAt: start, FinishedAt: start.Add(60 * time.Second), Exit: "batch incomplete: interrupted", CPUSeconds: 100, PeakInflightBytes: 2 << 20},
			{Owner: "archive-1/4300/900/4e5f6a7b", StartedAt: start.Add(75 * time.Second), FinishedAt: start.Add(90 * time.Second), Exit: "complete", CPUSeconds: 71.25, PeakInflightBytes: 3*1024*1024 + 512*1024},
		},
		Rows:     rows,
		Summary:  s,
		Timeline: Timeline{Start: start, End: start.Add(90 * time.Second), Points: points},
	}
}

// incompleteFixture is a run interrupted with one document still queued.
func incompleteFixture() *Report {
	r := fixture()
	r.Complete = false
	r.Rows = append(slices.Clone(r.Rows), Row{ManifestLine: 10, SourceID: "R-0008", State: "queued", SHA256: "ab", Attempts: 1})
	sum := Summarize(r.Rows)
	sum.PagesPerMinute = 0
	sum.ConfidenceBands = Bands{High: 85, Low: 60}
	r.Summary = sum
	r.Timeline = Timeline{}
	r.Runs = r.Runs[:1]
	r.Run.WallSeconds = 7.25
	r.Run.CPUSeconds = 0.04
	return r
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	batchtest.Golden(t, name, got, *update)
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name   string
		report *Report
		write  func(*Report, *bytes.Buffer) error
	}{
		{"complete.json", fixture(), func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) }},
		{"complete.txt", fixture(), func(r *Report, b *bytes.Buffer) error { return r.WriteText(b) }},
		{"complete.html", fixture(), func(r *Report, b *bytes.Buffer) error { return r.WriteHTML(b) }},
		{"complete.csv", fixture(), func(r *Report, b *bytes.Buffer) error { return r.WriteCSV(b) }},
		{"incomplete.json", incompleteFixture(), func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) }},
		{"incomplete.txt", incompleteFixture(), func(r *Report, b *bytes.Buffer) error { return r.WriteText(b) }},
		{"incomplete.html", incompleteFixture(), func(r *Report, b *bytes.Buffer) error { return r.WriteHTML(b) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(tt.report, &buf); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
			// Rendering must be deterministic (map order, sorting).
			var again bytes.Buffer
			if err := tt.write(tt.report, &again); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), again.Bytes()) {
				t.Error("two renderings of the same report differ")
			}
		})
	}
}

func TestWriteDoesNotModify(t *testing.T) {
	r := fixture()
	before := fixture()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, before) {
		t.Error("rendering changed the report (rows re-ordered in place?)")
	}
}

func TestSummarize(t *testing.T) {
	zeroStates := map[outcome.State]int{"done": 0, "review": 0, "rejected": 0, "duplicate": 0}
	tests := []struct {
		name string
		rows []Row
		want Summary
	}{
		{
			name: "no rows",
			want: Summary{States: zeroStates, Reasons: map[outcome.Reason]int{}, StatePages: map[outcome.State]int{"done": 0, "review": 0},
				NeedPersonReasons: map[outcome.Reason]int{}},
		},
		{
			name: "one of each",
			rows: []Row{
				{State: "done", Pages: 2},
				{State: "review", Reason: "low_confidence", Pages: 3},
				{State: "rejected", Reason: "not_pdf", Pages: 7},
				{State: "duplicate", Pages: 2},
			},
			want: Summary{
				Rows:       4,
				States:     map[outcome.State]int{"done": 1, "review": 1, "rejected": 1, "duplicate": 1},
				Reasons:    map[outcome.Reason]int{"low_confidence": 1, "not_pdf": 1},
				NeedPerson: 2, NeedPersonReasons: map[outcome.Reason]int{"low_confidence": 1, "not_pdf": 1},
				Pages:      5,
				StatePages: map[outcome.State]int{"done": 2, "review": 3},
			},
		},
		{
			name: "unfinished rows are counted under their state",
			rows: []Row{
				{State: "done", Pages: 1},
				{State: "queued", Pages: 4},
				{State: "queued"},
				{State: "rejected", Reason: "no_consent"},
				{State: "rejected", Reason: "no_consent"},
				{State: "rejected", Reason: "too_large"},
			},
			want: Summary{
				Rows:    6,
				States:  map[outcome.State]int{"done": 1, "review": 0, "rejected": 3, "duplicate": 0, "queued": 2},
				Reasons: map[outcome.Reason]int{"no_consent": 2, "too_large": 1},
				// no_consent needs no action: only too_large is open.
				NeedPerson: 1, NeedPersonReasons: map[outcome.Reason]int{"too_large": 1},
				Pages:      1,
				StatePages: map[outcome.State]int{"done": 1, "review": 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize(tt.rows); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Summarize() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func seq(from, to float64) []float64 {
	var s []float64
	for v := from; v <= to; v++ {
		s = append(s, v)
	}
	return s
}

func TestNewQuantiles(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		want    Quantiles
	}{
		{name: "nil", samples: nil, want: Quantiles{}},
		{name: "empty", samples: []float64{}, want: Quantiles{}},
		{name: "one", samples: []float64{2.5}, want: Quantiles{N: 1, P50: 2.5, P95: 2.5, Max: 2.5}},
		{name: "two", samples: []float64{3, 1}, want: Quantiles{N: 2, P50: 1, P95: 3, Max: 3}},
		{name: "1..10 unsorted", samples: []float64{7, 3, 10, 1, 9, 2, 8, 4, 6, 5}, want: Quantiles{N: 10, P50: 5, P95: 10, Max: 10}},
		{name: "1..20", samples: seq(1, 20), want: Quantiles{N: 20, P50: 10, P95: 19, Max: 20}},
		{name: "1..100", samples: seq(1, 100), want: Quantiles{N: 100, P50: 50, P95: 95, Max: 100}},
		{name: "1..101", samples: seq(1, 101), want: Quantiles{N: 101, P50: 51, P95: 96, Max: 101}},
		{name: "ties", samples: []float64{1, 1, 1, 9}, want: Quantiles{N: 4, P50: 1, P95: 9, Max: 9}},
		{name: "non-finite dropped", samples: []float64{math.NaN(), 4, math.Inf(1), 2, math.Inf(-1)}, want: Quantiles{N: 2, P50: 2, P95: 4, Max: 4}},
		{name: "only NaN", samples: []float64{math.NaN()}, want: Quantiles{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.samples)
			if got := NewQuantiles(tt.samples); got != tt.want {
				t.Errorf("NewQuantiles(%v) = %+v, want %+v", tt.samples, got, tt.want)
			}
			if !slices.EqualFunc(in, tt.samples, func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }) {
				t.Error("NewQuantiles modified its input")
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := fixture()
	if err := writeFiles(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	want := r.normalized()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadJSON(WriteJSON(r)) differs:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestWriteJSONNeverNull(t *testing.T) {
	var buf bytes.Buffer
	if err := (&Report{}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "null") {
		t.Errorf("an empty report renders null:\n%s", out)
	}
	for _, want := range []string{`"schema_version": 1`, `"done": 0`, `"review": 0`, `"rejected": 0`, `"duplicate": 0`, `"rows": []`} {
		if !strings.Contains(out, want) {
			t.Errorf("empty report lacks %s:\n%s", want, out)
		}
	}
}

func TestReadJSONErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
	}{
		{name: "not json", content: "<html>"},
		{name: "no schema version", content: `{"rows": []}`},
		{name: "newer schema", content: `{"schema_version": 2, "rows": []}`},
		{name: "wrong type", content: `{"schema_version": 1, "rows": {}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadJSON(path); err == nil {
				t.Error("ReadJSON succeeded, want an error")
			}
		})
	}
	if _, err := ReadJSON(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("ReadJSON of a missing file succeeded")
	}
}

func TestRenderError(t *testing.T) {
	r := fixture()
	r.Summary.PagesPerMinute = math.Inf(1) // JSON cannot carry it
	if err := Render(r, io.Discard, io.Discard, io.Discard); err == nil {
		t.Fatal("Render succeeded with an infinite number")
	}
}

func TestHTMLSelfContained(t *testing.T) {
	for name, r := range map[string]*Report{"fixture": fixture(), "incomplete": incompleteFixture(), "empty": {}} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := r.WriteHTML(&buf); err != nil {
				t.Fatal(err)
			}
			out := strings.ToLower(buf.String())
			for _, banned := range []string{"http://", "https://", "<script", "<link", "<img", "<iframe", "@import", "url(", "src=", "@font-face"} {
				if strings.Contains(out, banned) {
					t.Errorf("page contains %q", banned)
				}
			}
			checkLinks(t, out)
			for _, tag := range []string{"table", "tr", "section", "html", "body"} {
				if open, closed := strings.Count(out, "<"+tag+">")+strings.Count(out, "<"+tag+" "), strings.Count(out, "</"+tag+">"); open != closed {
					t.Errorf("<%s> opened %d times, closed %d", tag, open, closed)
				}
			}
			if !strings.HasPrefix(out, "<!doctype html>") || !strings.Contains(out, "@media print") {
				t.Error("page lacks doctype or print CSS")
			}
		})
	}
}

func TestHTMLEscapesHostileValues(t *testing.T) {
	const hostile = `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	r := fixture()
	r.Run.Manifest = hostile
	r.Run.Settings[hostile] = hostile
	r.Run.Versions["v"] = hostile
	for i := range r.Rows {
		r.Rows[i].SourceID = hostile
		r.Rows[i].TraceID = hostile
		r.Rows[i].Artifact = hostile
	}
	r.Rows[0].Reason = hostile // a rejected row, grouped by reason
	r.Rows[2].Reason = hostile // a review row
	r.Rows[1].State = hostile  // an unknown state, used for a CSS class
	r.Summary = Summarize(r.Rows)

	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	out := strings.ToLower(buf.String())
	for _, banned := range []string{"<script", "<img", "onerror=alert(2)>"} {
		if strings.Contains(out, banned) {
			t.Errorf("hostile value reached the page unescaped: %q", banned)
		}
	}
	if !strings.Contains(out, "&lt;script&gt;") {
		t.Error("the hostile source_id is not shown escaped")
	}
	if n := strings.Count(out, "<svg "); n != 4 {
		t.Errorf("page has %d charts, want 4 (did a value become markup?)", n)
	}
}

func TestTemplateParses(t *testing.T) {
	if page == nil || page.Lookup("report") == nil {
		t.Fatal("report template not parsed")
	}
	// A zero Report exercises every empty branch of the template.
	var buf bytes.Buffer
	if err := (&Report{}).WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
}

// TestNoDocumentData guards the rule that a report never carries document
// text or participant IDs: no field of a Report may be named for them.
func TestNoDocumentData(t *testing.T) {
	banned := []string{"participant", "text", "ocr_output", "content", "words", "page_image"}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(path, typ.Elem())
		case reflect.Struct:
			if typ == reflect.TypeFor[time.Time]() {
				return
			}
			for f := range typ.Fields() {
				name := strings.ToLower(f.Name + " " + f.Tag.Get("json"))
				for _, b := range banned {
					if strings.Contains(name, b) {
						t.Errorf("%s.%s looks like document data (%q)", path, f.Name, b)
					}
				}
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("Report", reflect.TypeFor[Report]())
}

func TestFormatSeconds(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0s"},
		{0.04, "0s"},
		{0.25, "0.3s"},
		{7.25, "7.3s"},
		{59.94, "59.9s"},
		{90, "1m30s"},
		{171.25, "2m51s"},
		{3725.6, "1h2m6s"},
	}
	for _, tt := range tests {
		if got := formatSeconds(tt.in); got != tt.want {
			t.Errorf("formatSeconds(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNewLogHistogram(t *testing.T) {
	tests := []struct {
		name    string
		samples []float64
		want    []Bucket
	}{
		{name: "none", want: []Bucket{}},
		{name: "one", samples: []float64{1}, want: []Bucket{{Lo: 1, Hi: 1.259, N: 1}}},
		{name: "a bound starts its bucket", samples: []float64{10, 9.99}, want: []Bucket{{Lo: 7.943, Hi: 10, N: 1}, {Lo: 10, Hi: 12.59, N: 1}}},
		{
			name:    "empty buckets between samples are kept",
			samples: []float64{0.52, 0.55, 2.1},
			want: []Bucket{
				{Lo: 0.5012, Hi: 0.631, N: 2}, {Lo: 0.631, Hi: 0.7943, N: 0}, {Lo: 0.7943, Hi: 1, N: 0},
				{Lo: 1, Hi: 1.259, N: 0}, {Lo: 1.259, Hi: 1.585, N: 0}, {Lo: 1.585, Hi: 1.995, N: 0}, {Lo: 1.995, Hi: 2.512, N: 1},
			},
		},
		{name: "zero counts as a millisecond", samples: []float64{0}, want: []Bucket{{Lo: 0.001, Hi: 0.001259, N: 1}}},
		{name: "non-finite dropped", samples: []float64{math.NaN(), math.Inf(1)}, want: []Bucket{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewLogHistogram(tt.samples); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NewLogHistogram(%v) = %v, want %v", tt.samples, got, tt.want)
			}
		})
	}
}

func TestReviewLaneOrder(t *testing.T) {
	rows := []Row{
		{ManifestLine: 2, State: "review", Reason: "attempts_exhausted"},
		{ManifestLine: 3, State: "review", Reason: "low_confidence", MeanConfidence: 40, Band: "low"},
		{ManifestLine: 4, State: "review", Reason: "id_not_found", MeanConfidence: 80, Band: "medium"},
		{ManifestLine: 5, State: "review", Reason: "low_confidence", MeanConfidence: 55, Band: "low"},
		{ManifestLine: 6, State: "review", Reason: "timeout"},
		{ManifestLine: 7, State: "review", Reason: "something_new"},
		{ManifestLine: 8, State: "review", Reason: "empty_text", Band: "low"},
		{ManifestLine: 9, State: "done"},
		{ManifestLine: 10, State: "review", Reason: "id_not_found", MeanConfidence: 93, Band: "high"},
	}
	var got []int
	var reasons []string
	pr := newPageRows(&Report{Summary: Summary{ConfidenceBands: Bands{High: 85, Low: 60}}})
	for _, r := range rows {
		pr.add(r)
	}
	for _, g := range pr.reviewLane() {
		reasons = append(reasons, g.Reason)
		if g.Action == "" && g.Reason != "something_new" {
			t.Errorf("%s has no action", g.Reason)
		}
		for _, r := range g.Rows {
			got = append(got, r.ManifestLine)
		}
	}
	if want := []string{"id_not_found", "low_confidence", "empty_text", "timeout", "attempts_exhausted", "something_new"}; !slices.Equal(reasons, want) {
		t.Errorf("reasons in order %q, want %q", reasons, want)
	}
	if want := []int{10, 4, 5, 3, 8, 6, 2, 7}; !slices.Equal(got, want) {
		t.Errorf("lines in order %v, want %v", got, want)
	}
}

func TestWriteCSVDefusesFormulas(t *testing.T) {
	r := &Report{Run: Run{Manifest: "=cmd|' /C calc'!A0"}, Rows: []Row{
		{ManifestLine: 2, SourceID: "=HYPERLINK(\"x\")", State: "rejected", Reason: "not_pdf"},
		{ManifestLine: 3, SourceID: "@SUM(A1)", State: "done", Pages: 2, MeanConfidence: 91.5, Band: "high", Attempts: 1},
		{ManifestLine: 4, SourceID: "R-1,\"quoted\"", State: "duplicate"},
		{ManifestLine: 5, SourceID: "R-5", State: "done", Pages: 1, MeanConfidence: 60, Band: "low", Attempts: 1,
			Decision: &Decision{Action: "accept", User: "alice", Host: "desk", At: time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC), Note: "=checked"}},
	}}
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], csvHeader) {
		t.Errorf("header %q", recs[0])
	}
	want := [][]string{
		{"'=cmd|' /C calc'!A0", "2", "'=HYPERLINK(\"x\")", "rejected", "not_pdf", "", "", "", "", "", "", "", "", "", "", "", "", "", ""},
		{"'=cmd|' /C calc'!A0", "3", "'@SUM(A1)", "done", "", "", "2", "91.5", "high", "1", "", "", "", "", "", "", "", "", ""},
		{"'=cmd|' /C calc'!A0", "4", "R-1,\"quoted\"", "duplicate", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""},
		{"'=cmd|' /C calc'!A0", "5", "R-5", "done", "", "", "1", "60", "low", "1", "", "", "accept", "alice@desk", "2025-03-01T09:30:00Z", "'=checked", "", "", ""},
	}
	if !reflect.DeepEqual(recs[1:], want) {
		t.Errorf("rows\n%q\nwant\n%q", recs[1:], want)
	}
}

func TestCharts(t *testing.T) {
	t.Run("empty data draws a placeholder", func(t *testing.T) {
		for name, got := range map[string]string{
			"confidence": string(confidenceChart(new(confidenceBins).buckets(), Bands{85, 60})),
			"ocr time":   string(ocrTimeChart(nil, Quantiles{})),
			"breakdown":  string(breakdownBar(nil)),
			"timeline":   string(timelineChart(Timeline{})),
		} {
			if !strings.HasPrefix(got, "<svg ") || !strings.Contains(got, "yet") {
				t.Errorf("%s: %.80s", name, got)
			}
		}
	})
	t.Run("confidence bins and thresholds", func(t *testing.T) {
		rows := []Row{
			{State: "done", MeanConfidence: 91, Band: "high"},
			{State: "done", MeanConfidence: 100, Band: "high"}, // the top bin includes 100
			{State: "review", MeanConfidence: 0, Band: "low"},
			{State: "duplicate", MeanConfidence: 91, Band: "high"}, // not counted twice
			{State: "review", Reason: "timeout"},                   // never read
		}
		var bins confidenceBins
		for _, r := range rows {
			bins.add(r)
		}
		b := bins.buckets()
		if b[18].N != 1 || b[19].N != 1 || b[0].N != 1 {
			t.Errorf("bins %v", b)
		}
		got := string(confidenceChart(b, Bands{High: 85, Low: 60}))
		for _, want := range []string{"low &lt; 60", "high ≥ 85"} {
			if !strings.Contains(got, want) {
				t.Errorf("chart lacks %q", want)
			}
		}
	})
	t.Run("ocr time marks quantiles", func(t *testing.T) {
		got := string(ocrTimeChart(NewLogHistogram([]float64{0.4, 0.5, 3}), Quantiles{N: 3, P50: 0.5, P95: 3, Max: 3}))
		for _, want := range []string{"p50 0.5s", "p95, max 3s"} {
			if !strings.Contains(got, want) {
				t.Errorf("chart lacks %q", want)
			}
		}
	})
}

func TestFormatTick(t *testing.T) {
	for in, want := range map[float64]string{0: "0s", 0.5: "0.5s", 30: "30s", 90: "1m30s", 3600: "1h", 5400: "1h30m", 93600: "1d2h"} {
		if got := formatTick(in); got != want {
			t.Errorf("formatTick(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestSeveralManifests(t *testing.T) {
	r := &Report{
		Run: Run{Manifests: []string{"/in/b.csv", "/in/a.csv"}},
		Rows: []Row{
			{Manifest: "/in/b.csv", ManifestLine: 2, SourceID: "B-1", State: "rejected", Reason: "not_pdf"},
			{Manifest: "/in/a.csv", ManifestLine: 3, SourceID: "A-2", State: "rejected", Reason: "not_pdf"},
			{Manifest: "/in/a.csv", ManifestLine: 2, SourceID: "A-1", State: "done", Pages: 1, Band: "high", MeanConfidence: 90},
		},
	}
	r.Summary = Summarize(r.Rows)
	var page, table bytes.Buffer
	if err := r.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if a, b := strings.Index(page.String(), `a.csv:3 <span class="mono">A-2</span>`), strings.Index(page.String(), `b.csv:2 <span class="mono">B-1</span>`); a < 0 || b < a {
		t.Error("rejected lines do not name their manifests in manifest order")
	}
	if err := r.WriteCSV(&table); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&table).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range recs[1:] {
		got = append(got, rec[0]+":"+rec[1])
	}
	if want := []string{"/in/a.csv:2", "/in/a.csv:3", "/in/b.csv:2"}; !slices.Equal(got, want) {
		t.Errorf("csv rows %q, want %q", got, want)
	}
}

// streamed returns r with its rows behind a RowSource, as a report built
// from the journal has them.
func streamed(r *Report) *Report {
	s := *r
	rows := sortedRows(r.Rows)
	s.Rows = nil
	s.RowSource = func(fn func(Row) error) error {
		for _, row := range rows {
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	}
	return &s
}

func TestStreamedRowsWriteTheSameBytes(t *testing.T) {
	writers := map[string]func(*Report, *bytes.Buffer) error{
		"json": func(r *Report, b *bytes.Buffer) error { return r.WriteJSON(b) },
		"csv":  func(r *Report, b *bytes.Buffer) error { return r.WriteCSV(b) },
		"html": func(r *Report, b *bytes.Buffer) error { return r.WriteHTML(b) },
		"text": func(r *Report, b *bytes.Buffer) error { return r.WriteText(b) },
	}
	for name, r := range map[string]*Report{"complete": fixture(), "incomplete": incompleteFixture(), "empty": {}} {
		for format, write := range writers {
			t.Run(name+"/"+format, func(t *testing.T) {
				var held, streamedOut bytes.Buffer
				if err := write(r, &held); err != nil {
					t.Fatal(err)
				}
				if err := write(streamed(r), &streamedOut); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(held.Bytes(), streamedOut.Bytes()) {
					t.Errorf("streamed rows render differently:\n%s\nheld:\n%s", streamedOut.Bytes(), held.Bytes())
				}
			})
		}
	}
	t.Run("files", func(t *testing.T) {
		held, stream := t.TempDir(), t.TempDir()
		if err := writeFiles(held, fixture()); err != nil {
			t.Fatal(err)
		}
		if err := writeFiles(stream, streamed(fixture())); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{JSONFile, CSVFile, HTMLFile} {
			a, _ := os.ReadFile(filepath.Join(held, name))
			b, _ := os.ReadFile(filepath.Join(stream, name))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("%s differs (%d and %d bytes)", name, len(a), len(b))
			}
		}
	})
}

// bigReport has more rows than report.html lists: every row done but the
// given numbers of low_confidence review rows and not_pdf rejections.
func bigReport(done, review, rejected int) *Report {
	var rows []Row
	line := 2
	add := func(n int, row Row) {
		for range n {
			row.ManifestLine, row.SourceID = line, fmt.Sprintf("R-%06d", line)
			rows = append(rows, row)
			line++
		}
	}
	add(done, Row{State: "done", Pages: 1, MeanConfidence: 90, Band: "high", Attempts: 1})
	add(review, Row{State: "review", Reason: "low_confidence", Pages: 1, MeanConfidence: 40, Band: "low", Attempts: 1})
	add(rejected, Row{State: "rejected", Reason: "not_pdf"})
	// The most confident review row comes last in the manifest: the lane
	// must still show it first.
	rows[len(rows)-rejected-1].MeanConfidence = 55
	r := &Report{Run: Run{Manifest: "m.csv"}, Rows: rows, Summary: Summarize(rows)}
	r.Summary.ConfidenceBands = Bands{High: 85, Low: 60}
	return streamed(r)
}

func TestHTMLCapsListings(t *testing.T) {
	// More review rows than twice the cap: the lane trims as it goes.
	const done, review, rejected = 40, 2*htmlRowCap + 3, htmlRowCap + 2
	r := bigReport(done, review, rejected)
	total := done + review + rejected
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	wants := []string{
		fmt.Sprintf("To review (%d)", review),
		fmt.Sprintf("low_confidence (%d)", review),
		fmt.Sprintf("… and %d more rows: see report.csv", review-htmlRowCap),
		fmt.Sprintf(`<td class="num">%d</td>`, rejected),
		"… and 2 more rows: see report.csv",
		fmt.Sprintf("All rows (%d)", total),
		fmt.Sprintf("… and %d more rows: see report.csv", total-htmlRowCap),
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	lane := out[strings.Index(out, "<h3>low_confidence"):]
	lane = lane[:strings.Index(lane, "</table>")]
	if n := strings.Count(lane, "<tr><td"); n != htmlRowCap {
		t.Errorf("review lane lists %d rows, want %d", n, htmlRowCap)
	}
	if first := fmt.Sprintf(`<tr><td class="num">%d</td>`, done+review+1); strings.Index(lane, first) != strings.Index(lane, "<tr><td") {
		t.Error("the most confident review row is not listed first")
	}
	rej := out[strings.Index(out, "<strong>not_pdf</strong>"):]
	rej = rej[:strings.Index(rej, "</tr>")]
	if n := strings.Count(rej, `class="ln nowrap"`); n != htmlRowCap {
		t.Errorf("rejected lists %d lines, want %d", n, htmlRowCap)
	}
	all := out[strings.Index(out, "<table class=\"rows\">"):]
	all = all[:strings.Index(all, "</table>")]
	if n := strings.Count(all, "<tr><td"); n != htmlRowCap {
		t.Errorf("all rows lists %d, want %d", n, htmlRowCap)
	}

	// report.json and report.csv keep every row.
	dir := t.TempDir()
	if err := writeFiles(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != total || back.Summary.Rows != total {
		t.Errorf("report.json has %d rows (summary %d), want %d", len(back.Rows), back.Summary.Rows, total)
	}
	f, err := os.Open(filepath.Join(dir, CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != total+1 {
		t.Errorf("report.csv has %d records, want %d rows and a header", len(recs), total)
	}
}

func TestRenderRowErrors(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(*Report)
	}{
		{"the row source fails midway", func(r *Report) {
			rows := r.RowSource
			n := 0
			r.RowSource = func(fn func(Row) error) error {
				return rows(func(row Row) error {
					if n++; n == 3 {
						return errors.New("journal went away")
					}
					return fn(row)
				})
			}
		}},
		{"a row JSON cannot carry", func(r *Report) {
			rows := r.RowSource
			r.RowSource = func(fn func(Row) error) error {
				return rows(func(row Row) error {
					if row.ManifestLine == 5 {
						row.MeanConfidence = math.NaN()
					}
					return fn(row)
				})
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := streamed(fixture())
			tt.spoil(r)
			if err := Render(r, io.Discard, io.Discard, io.Discard); err == nil {
				t.Fatal("Render succeeded")
			}
		})
	}
}

// writeFiles renders r into the three report files in dir, as a test
// needs them; the atomic write is batch.WriteReport's, tested there.
func writeFiles(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var fs []*os.File
	for _, name := range []string{JSONFile, CSVFile, HTMLFile} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		defer f.Close()
		fs = append(fs, f)
	}
	return Render(r, fs[0], fs[1], fs[2])
}

// TestHTMLMarksDecisions: a row a person decided about is marked in the
// rows table and listed with who decided, when and their note.
func TestHTMLMarksDecisions(t *testing.T) {
	at := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	r := &Report{Run: Run{Manifest: "m.csv"}, Rows: []Row{
		{ManifestLine: 2, SourceID: "R-1", State: "done", Pages: 1, MeanConfidence: 60, Band: "low", Attempts: 1,
			Decision: &Decision{Action: "accept", User: "alice", Host: "desk", At: at, Note: "checked against the paper file"}},
		{ManifestLine: 3, SourceID: "R-2", State: "done", Pages: 1, MeanConfidence: 96, Band: "high", Attempts: 1},
	}}
	r.Summary = Summarize(r.Rows)
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"Decided by a person (1)", "decided by a person: accept by alice@desk", "checked against the paper file"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if n := strings.Count(page, "decided by a person:"); n != 1 {
		t.Errorf("%d rows marked, want 1", n)
	}
}
