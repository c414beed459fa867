package standing

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/batchtest"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixedSettings are the settings the runs of fixedJournal recorded, as
// builds before the typed settings recorded them: a map of strings.
const fixedSettings = `{"workers":"2","dpi":"300","slo":"20s","high_confidence":"85","low_confidence":"60","attempts":"3"}`

// fixedJournal builds, through the journal's own API, a batch of two runs:
// the first is interrupted with a document half read and another waiting
// out a retry; the second finishes both and one more. The journal's clock
// moves one second at each step, from base, so the report it gives is the
// same bytes every time.
func fixedJournal(t *testing.T) (*journal.Journal, time.Time) {
	t.Helper()
	base := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	now := base.Add(time.Second)
	j, err := journal.Open(filepath.Join(t.TempDir(), layout.JournalFile), journal.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	const manifest = "/archive/referrals-2025-03.csv" // never read: it does not exist
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Each step happens a second after the one before.
	tick := func() { now = now.Add(time.Second) }
	admitRow := func(line int, source, sha string, size int64, pages int) int64 {
		t.Helper()
		tick()
		st, err := j.Admit(journal.Admission{Manifest: manifest, Line: line, SourceID: source, SHA256: sha, Path: "/archive/" + source + ".pdf", Size: size, Pages: pages})
		must(err)
		return st.DocID
	}
	policy := journal.Policy{MaxAttempts: 3, LeaseTTL: time.Hour}
	claim := func(doc int64, owner journal.Owner) journal.Lease {
		t.Helper()
		tick()
		l, err := j.Claim(doc, owner, policy)
		must(err)
		return l
	}
	page := func(l journal.Lease, i int, render, ocr time.Duration, conf float64) {
		t.Helper()
		tick()
		must(j.PageDone(l, journal.PageMetric{Page: i, DPI: 300, Render: render, OCR: ocr, Words: 120, MeanConfidence: conf}, time.Hour))
	}
	finish := func(l journal.Lease, r journal.Result) {
		t.Helper()
		tick()
		must(j.Finish(l, r))
	}
	ms := time.Millisecond
	o1, o2 := journal.Owner("archive-1/4242/100/0a1b2c3d"), journal.Owner("archive-1/4300/900/4e5f6a7b")
	run1, err := j.StartRun(o1, fixedSettings, "{}")
	must(err)
	r1 := admitRow(2, "R-0001", "9f2b6c1d8e3a4f5b0c7d2e9a1b6c3d8e4f0a5b2c7d1e6f3a9b4c8d2e5f0a7b1c", 180_000, 2)
	tick()
	must(j.Reject(manifest, 3, "R-0002", "4c1f0e4b1a0d2b0e6f1c9a7d3e5b8c2a4f6e8d0c1b3a5f7e9d2c4b6a8f0e1d3c", "not_pdf", ""))
	r3 := admitRow(4, "R-0003", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 90_000, 1)
	admitRow(5, "R-0001", "9f2b6c1d8e3a4f5b0c7d2e9a1b6c3d8e4f0a5b2c7d1e6f3a9b4c8d2e5f0a7b1c", 180_000, 2)

	l := claim(r1, o1)
	page(l, 0, 200*ms, 700*ms, 92)
	page(l, 1, 210*ms, 650*ms, 90)
	finish(l, journal.Result{State: outcome.Done, MeanConfidence: 91.2, Band: "high", Artifact: "artifacts/R-0001_9f2b6c1d_a1.json.age", ArtifactSHA256: "aa"})

	l = claim(r3, o1)
	tick()
	// A retry time in the past keeps the document claimable at once.
	_, err = j.Fail(l, "crash", base, policy)
	must(err)

	r4 := admitRow(6, "R-0004", "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100", 400_000, 3)
	l = claim(r4, o1)
	page(l, 0, 250*ms, 900*ms, 85)
	tick()
	must(j.Release(l)) // Ctrl-C
	tick()
	must(j.EndRun(run1, "batch incomplete: interrupted", 12.5, 400_000))

	tick()
	run2, err := j.StartRun(o2, fixedSettings, `{"refbatch":"v0.1.0","tesseract":"5.3.0","mupdf":"1.24.15"}`)
	must(err)
	l = claim(r3, o2)
	page(l, 0, 300*ms, 800*ms, 41)
	finish(l, journal.Result{State: outcome.Review, Reason: "low_confidence", MeanConfidence: 41, Band: "low", Artifact: "artifacts/R-0003_00112233_a2.json.age", ArtifactSHA256: "bb"})

	l = claim(r4, o2)
	for i := range 3 {
		page(l, i, 250*ms, 900*ms, 88)
	}
	finish(l, journal.Result{State: outcome.Review, Reason: "id_not_found", MeanConfidence: 88.4, Band: "high", Artifact: "artifacts/R-0004_ffeeddcc_a2.json.age", ArtifactSHA256: "cc"})

	r5 := admitRow(7, "R-0005", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 120_000, 1)
	l = claim(r5, o2)
	page(l, 0, 150*ms, 2400*ms, 77)
	finish(l, journal.Result{State: outcome.Done, MeanConfidence: 77, Band: "medium", Artifact: "artifacts/R-0005_01234567_a1.json.age", ArtifactSHA256: "dd"})
	tick()
	must(j.EndRun(run2, "complete", 30.25, 180_000))
	return j, base
}

// goldenFile compares got with testdata/name, or rewrites it with -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	batchtest.Golden(t, name, got, *updateGolden)
}

// TestReportOfFixedJournal builds the report of a fixed journal and
// compares report.json and the text summary with golden files.
func TestReportOfFixedJournal(t *testing.T) {
	j, base := fixedJournal(t)
	settings, ok := layout.DecodeSettings(fixedSettings)
	if !ok {
		t.Fatal("the fixed journal's settings do not decode")
	}
	rep, err := BuildReport(j, ReportInfo{Settings: &settings, Encrypted: true, Now: base.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	// Trace IDs are random by design; give them stable stand-ins.
	rows := rep.RowSource
	rep.RowSource = func(fn func(report.Row) error) error {
		return rows(func(r report.Row) error {
			if r.TraceID != "" {
				r.TraceID = fmt.Sprintf("trace-line-%d", r.ManifestLine)
			}
			return fn(r)
		})
	}
	// The batch root covers them, and the owners' random suffixes: it
	// must be there, and is given a stand-in.
	if rep.Custody == nil || len(rep.Custody.Root) != 64 || rep.Custody.Events == 0 {
		t.Fatalf("custody = %+v, want the batch root", rep.Custody)
	}
	rep.Custody.Root = strings.Repeat("ab", 32)
	var js, txt bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "fixed-journal.report.json", js.Bytes())
	goldenFile(t, "fixed-journal.summary.txt", txt.Bytes())

	// What the golden files must say, spelled out.
	s := rep.Summary
	checks := []struct {
		name string
		ok   bool
	}{
		{"complete", rep.Complete && !rep.InProgress},
		{"two runs", len(rep.Runs) == 2 && rep.Runs[1].Exit == "complete"},
		{"versions from the journal", rep.Run.Versions["tesseract"] == "5.3.0"},
		{"one retry", s.Retries == 1},
		{"four documents", s.Documents == 4},
		{"pages of done and review", s.Pages == 7 && s.StatePages["done"] == 3 && s.StatePages["review"] == 4},
		{"every page of a verdict timed", s.OCRPageSeconds.N == 7 && s.OCRPageSeconds.Max == 2.55},
		{"five phases", len(s.TimeBreakdown) == 5},
		{"a claim per attempt", s.QueueAgeSeconds.N == 6 && s.AdmissionToStartSeconds.N == 4},
		{"timeline ends with every document finished", len(rep.Timeline.Points) > 2 && rep.Timeline.Points[len(rep.Timeline.Points)-1].Finished == 4},
		{"the interrupted run's bytes are the peak", s.PeakInflightBytes == 400_000},
		{"wall time is the runs' time", rep.Run.WallSeconds > 0 && rep.Run.CPUSeconds == 42.75},
		{"bands", s.ConfidenceBands == report.Bands{High: 85, Low: 60}},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not so in the report", c.name)
		}
	}
}

// TestReportFromJournalWhileRunning reads a journal held open by a writer
// with a document under a live lease: the report says running, not
// complete, and the timeline shows the document running.
func TestReportFromJournalWhileRunning(t *testing.T) {
	out := t.TempDir()
	j, err := journal.Open(filepath.Join(out, layout.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	owner := journal.NewOwner()
	if _, err := j.StartRun(owner, `{"slo":"1h"}`, "{}"); err != nil {
		t.Fatal(err)
	}
	st, err := j.Admit(journal.Admission{Manifest: "/nowhere/m.csv", Line: 2, SourceID: "R-1", SHA256: "aa", Path: "/nowhere/a.pdf", Size: 1000, Pages: 4})
	if err != nil {
		t.Fatal(err)
	}
	l, err := j.Claim(st.DocID, owner, journal.Policy{MaxAttempts: 3, LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.PageDone(l, journal.PageMetric{Page: 0, DPI: 150, OCR: time.Second}, time.Hour); err != nil {
		t.Fatal(err)
	}
	rep, err := ReportFromJournal(context.Background(), layout.Place{Out: out}, "", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Complete || !rep.InProgress || rep.Status() != "running" {
		t.Errorf("complete %v, in progress %v, status %s", rep.Complete, rep.InProgress, rep.Status())
	}
	last := rep.Timeline.Points[len(rep.Timeline.Points)-1]
	if last.Running != 1 || last.InflightBytes != 1000 {
		t.Errorf("last timeline point %+v, want one document running", last)
	}
	if rep.Summary.SLOSeconds != 3600 {
		t.Errorf("slo %v, want the run's recorded 1h", rep.Summary.SLOSeconds)
	}
	status, err := ReadStatus(layout.Place{Out: out}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if status.State != "running" || status.Running != 1 || status.RemainingPages != 4 || len(status.Leases) != 1 || !status.Leases[0].Live {
		t.Errorf("status %+v", status)
	}
	if _, err := ReadStatus(layout.Place{Out: t.TempDir()}, time.Now()); err == nil {
		t.Error("ReadStatus of a folder without a journal succeeded")
	}
}

// TestWriteReportKeepsOldFiles: a report that fails to render leaves the
// previous report files as they were and no temp file.
func TestWriteReportKeepsOldFiles(t *testing.T) {
	out := t.TempDir()
	if err := WriteReport(out, &report.Report{}); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, name := range []string{report.JSONFile, report.CSVFile, report.HTMLFile} {
		before[name], _ = os.ReadFile(filepath.Join(out, name))
	}
	bad := &report.Report{}
	bad.Summary.PagesPerMinute = math.Inf(1) // JSON cannot carry it
	if err := WriteReport(out, bad); err == nil {
		t.Fatal("WriteReport succeeded with an infinite number")
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 3 {
		t.Errorf("folder holds %d files, want the 3 old reports and no temp file", len(entries))
	}
	for name, old := range before {
		if now, _ := os.ReadFile(filepath.Join(out, name)); !bytes.Equal(now, old) {
			t.Errorf("%s changed", name)
		}
	}
}
