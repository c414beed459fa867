package batch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/report/outcome"
)

// Benchmarks of the parent's work, the part of a run that is not OCR:
//
//	go test -run '^$' -bench . ./batch
//	go test -run '^$' -bench BenchmarkRun -cpuprofile cpu.out ./batch && go tool pprof -top batch.test cpu.out
//
// BenchmarkRun profiles only the parent: its engines are child processes.

// finishedRows is the size of the finished batches the benchmarks read: the
// weekend import of issue 7.
const finishedRows = 2400

// finishedJournal writes a manifest of rows rows and a journal in which
// every row's document is done, through the journal's own API, as a run
// would have left them (two pages each). The files the rows name do not
// exist: a final row is never read again.
func finishedJournal(b *testing.B, rows int) (manifest, out string) {
	b.Helper()
	dir := b.TempDir()
	manifest = filepath.Join(dir, "manifest.csv")
	out = filepath.Join(dir, "out")
	var m strings.Builder
	m.WriteString("source_id,participant_id,referral_date,consent,path\n")
	for i := range rows {
		fmt.Fprintf(&m, "R-%06d,P-%06d,2024-01-01,yes,docs/R-%06d.pdf\n", i, i, i)
	}
	if err := os.WriteFile(manifest, []byte(m.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		b.Fatal(err)
	}
	j, err := journal.Open(filepath.Join(out, layout.JournalFile))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	owner := journal.NewOwner()
	run, err := j.StartRun(owner, "{}", "{}")
	if err != nil {
		b.Fatal(err)
	}
	policy := journal.Policy{MaxAttempts: 3, LeaseTTL: time.Minute}
	for i := range rows {
		source := fmt.Sprintf("R-%06d", i)
		st, err := j.Admit(journal.Admission{Manifest: manifest, Line: i + 2, SourceID: source,
			SHA256: fmt.Sprintf("%064x", i), Path: filepath.Join(dir, "docs", source+".pdf"), Size: 60 << 10, Pages: 2})
		if err != nil {
			b.Fatal(err)
		}
		l, err := j.Claim(st.DocID, owner, policy)
		if err != nil {
			b.Fatal(err)
		}
		for p := range 2 {
			if err := j.PageDone(l, journal.PageMetric{Page: p, DPI: 300, Render: 90 * time.Millisecond, OCR: 500 * time.Millisecond, Words: 180, MeanConfidence: 91}, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
		if err := j.Finish(l, journal.Result{State: outcome.Done, MeanConfidence: 91, Band: "high"}); err != nil {
			b.Fatal(err)
		}
	}
	if err := j.EndRun(run, "complete", 1, 0); err != nil {
		b.Fatal(err)
	}
	if err := j.SetMeta("artifacts", "plaintext"); err != nil {
		b.Fatal(err)
	}
	return manifest, out
}

// BenchmarkBuildReport builds the report of a finished 2,400-document batch
// from its journal.
func BenchmarkBuildReport(b *testing.B) {
	manifest, out := finishedJournal(b, finishedRows)
	j, err := journal.Open(filepath.Join(out, layout.JournalFile))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	b.ReportAllocs()
	for b.Loop() {
		rep, err := standing.BuildReport(j, standing.ReportInfo{Manifest: manifest})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Summary.Rows != finishedRows {
			b.Fatalf("%d rows, want %d", rep.Summary.Rows, finishedRows)
		}
	}
}

// BenchmarkResumeFinished reruns a finished 2,400-row batch: stream the
// manifest, see every row final, write the reports. Issue 7 wants it under
// 3 seconds.
func BenchmarkResumeFinished(b *testing.B) {
	manifest, out := finishedJournal(b, finishedRows)
	// A finished batch needs no engine: one would fail to start, and so
	// would the run.
	o := Options{Manifest: manifest, Out: out, Plaintext: true, Logger: slog.New(slog.DiscardHandler),
		Worker: layout.Process{Path: "/a finished batch needs no engine"}, Admission: testAdmission}
	o.Workers = 2
	for b.Loop() {
		res, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Complete {
			b.Fatal("a finished batch reported incomplete")
		}
	}
}

// BenchmarkRun runs a batch of 40 documents (the sample's good documents
// under distinct source_ids, rendered at 100 DPI to keep the engines'
// share small) with two real engines, into a fresh output folder each
// time. Its CPU profile is the parent's: admission, journal, handoff,
// artifacts, report.
func BenchmarkRun(b *testing.B) {
	const docs = 40
	root := benchRepoRoot(b)
	sample := filepath.Join(root, "testdata", "sample")
	var m strings.Builder
	m.WriteString("source_id,participant_id,referral_date,consent,path\n")
	for i := range docs {
		fmt.Fprintf(&m, "B-%04d,P-%06d,2024-01-01,yes,docs/R-%04d.pdf\n", i, i, i%4+1)
	}
	dir := b.TempDir()
	manifest := filepath.Join(dir, "manifest.csv")
	if err := os.WriteFile(manifest, []byte(m.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	o := Options{Manifest: manifest, Plaintext: true, Logger: slog.New(slog.DiscardHandler),
		Worker: testWorker(""), Admission: testAdmission}
	o.Root, o.Workers, o.DPI, o.PageTimeout, o.NoIDCheck = sample, 2, 100, time.Minute, true
	o.WorkerMemory = ocr.DefaultMemoryLimit
	pages, n := 0, 0
	for b.Loop() {
		o.Out = filepath.Join(dir, fmt.Sprintf("out-%d", n))
		n++
		res, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Complete {
			b.Fatal("incomplete")
		}
		pages = res.Report.Summary.Pages
	}
	b.ReportMetric(float64(pages), "pages/op")
}

func benchRepoRoot(b *testing.B) string {
	b.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			b.Fatal("go.mod not found")
		}
		dir = parent
	}
}
