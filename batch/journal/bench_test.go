package journal

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal/journaltest"
	"github.com/refbatch/refbatch/report/outcome"
)

// The journal's hot paths, on the real SQLite file (WAL, synchronous FULL):
// what each document costs the journal beside its OCR. Run with
//
//	go test -run '^$' -bench . ./batch/journal
//
// BenchmarkWorkers runs on PostgreSQL too when REFBATCH_TEST_POSTGRES is
// set (see refbatch help scale-out for the figures); make bench-journal
// runs its live PostgreSQL half on a cluster of its own.

func benchJournal(b *testing.B) *Journal {
	b.Helper()
	j, err := Open(filepath.Join(b.TempDir(), "journal.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { j.Close() })
	return j
}

func benchAdmission(line int) Admission {
	source := fmt.Sprintf("R-%07d", line)
	return Admission{Manifest: "/archive/m.csv", Line: line, SourceID: source,
		SHA256: fmt.Sprintf("%064x", line), Path: "/archive/" + source + ".pdf", Size: 120 << 10, Pages: 2}
}

// BenchmarkAdmit records one admitted row and its new document.
func BenchmarkAdmit(b *testing.B) {
	j := benchJournal(b)
	line := 2
	for b.Loop() {
		if _, err := j.Admit(benchAdmission(line)); err != nil {
			b.Fatal(err)
		}
		line++
	}
}

// BenchmarkRow reads a recorded row's status: what a resumed run does for
// each row already final.
func BenchmarkRow(b *testing.B) {
	j := benchJournal(b)
	const rows = 2400
	for line := 2; line < rows+2; line++ {
		if _, err := j.Admit(benchAdmission(line)); err != nil {
			b.Fatal(err)
		}
	}
	line := 0
	for b.Loop() {
		if _, ok, err := j.Row("/archive/m.csv", line%rows+2); err != nil || !ok {
			b.Fatalf("row: %v, found %v", err, ok)
		}
		line++
	}
}

// BenchmarkClaimCommit is a document's journal work from claim to verdict:
// Claim, one PageDone per page, Finish. The documents are admitted outside
// the timer.
func BenchmarkClaimCommit(b *testing.B) {
	for _, pages := range []int{1, 2, 10} {
		b.Run(fmt.Sprintf("pages=%d", pages), func(b *testing.B) {
			j := benchJournal(b)
			owner := NewOwner()
			p := Policy{MaxAttempts: 3, LeaseTTL: time.Minute}
			line := 2
			for b.Loop() {
				b.StopTimer()
				st, err := j.Admit(benchAdmission(line))
				if err != nil {
					b.Fatal(err)
				}
				line++
				b.StartTimer()
				l, err := j.Claim(st.DocID, owner, p)
				if err != nil {
					b.Fatal(err)
				}
				for i := range pages {
					m := PageMetric{Page: i, DPI: 300, Render: 90 * time.Millisecond, OCR: 500 * time.Millisecond, Words: 180, MeanConfidence: 91}
					if err := j.PageDone(l, m, time.Minute); err != nil {
						b.Fatal(err)
					}
				}
				if err := j.Finish(l, Result{State: outcome.Done, MeanConfidence: 91, Band: "high", Artifact: "artifacts/x.json", ArtifactSHA256: "00"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWorkers is many machines' journal work on one journal: each
// worker has a handle of its own (its own connections, as a machine has)
// and, until no document is left, claims the next one (ClaimNext, as a
// run's workers do) and makes the journal calls of a document of P
// pages: one PageDone per page, then Finish. It reports documents and
// journal transactions per second, the transactions that took the
// custody lock per document, and the claims made per document (those
// that found nothing too). In the pages=P runs the documents are
// admitted outside the timer; in the live runs one more handle admits
// them while the workers claim (as a run's admission does), AdmitBatch
// rows a transaction (AdmitMany), each row waking one idle worker. A
// one-page document is the journal's worst case: the admission, the
// claim and the verdict, which append to the custody log, are spread
// over one page.
//
// On PostgreSQL the live runs go through a proxy adding a round trip of
// 0, 0.5 or 1 ms (journaltest.Delayed), as a LAN between the machines
// and the database would, and report besides the share of the time the
// custody lock was held, the events a seal chained per hold of it
// (events/hold: the batches of seal.go), the round trip added as
// measured, and the machine's CPU in use (both cores of a 2-core machine: 1), which says
// when more workers stop helping because the CPU, not the journal, is
// the limit.
func BenchmarkWorkers(b *testing.B) {
	for _, be := range backends {
		for _, pages := range []int{1, 4} {
			for _, workers := range []int{1, 4, 16, 64} {
				b.Run(fmt.Sprintf("%s/pages=%d/workers=%d", be.name, pages, workers), func(b *testing.B) {
					benchWorkers(b, be, workers, pages, false, 0)
				})
			}
		}
		for _, rtt := range benchRTTs(be) {
			for _, workers := range []int{4, 16, 64} {
				b.Run(fmt.Sprintf("%s/live/rtt=%gms/workers=%d", be.name, float64(rtt)/float64(time.Millisecond), workers), func(b *testing.B) {
					benchWorkers(b, be, workers, 1, true, rtt)
				})
			}
		}
	}
}

func benchWorkers(b *testing.B, be backend, workers, pages int, live bool, rtt time.Duration) {
	loc := be.location(b)
	var added time.Duration
	if rtt > 0 {
		direct := pingTime(b, loc)
		loc = journaltest.Delayed(b, loc, rtt)
		added = pingTime(b, loc) - direct
	}
	js := make([]*Journal, workers+1) // the last admits
	for i := range js {
		j, err := Open(loc)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { j.Close() })
		js[i] = j
	}
	admitter := js[workers]
	wake, admitted := make(chan struct{}, workers), make(chan struct{})
	admitAll := func() {
		for start := 0; start < b.N; start += AdmitBatch {
			var as []Admission
			for i := start; i < min(start+AdmitBatch, b.N); i++ {
				as = append(as, benchAdmission(i+2))
			}
			if _, err := admitter.AdmitMany(as); err != nil {
				b.Error(err)
				return
			}
			for range as {
				select { // one idle worker per row admitted
				case wake <- struct{}{}:
				default:
				}
			}
		}
	}
	if !live {
		admitAll()
		for len(wake) > 0 {
			<-wake
		}
	}
	for _, j := range js {
		j.locked.Store(0)
		j.held.Store(0)
		j.sealed.Store(0)
	}
	cpu := startCPU()
	p := Policy{MaxAttempts: 3, LeaseTTL: time.Minute}
	var claimed, claims atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	if live {
		go func() { admitAll(); close(admitted) }()
	} else {
		close(admitted)
	}
	for _, j := range js[:workers] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			benchWorker(b, j, pages, p, &claimed, &claims, wake, admitted)
		}()
	}
	wg.Wait()
	b.StopTimer()
	busy := cpu()
	if n := claimed.Load(); n != int64(b.N) {
		b.Fatalf("%d documents claimed, want %d", n, b.N)
	}
	var locked, held, sealed int64
	for _, j := range js {
		locked += j.locked.Load()
		held += j.held.Load()
		sealed += j.sealed.Load()
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/secs, "docs/s")
	b.ReportMetric(float64(pages+2)*float64(b.N)/secs, "tx/s")
	b.ReportMetric(float64(locked)/float64(b.N), "locked/doc")
	b.ReportMetric(float64(claims.Load())/float64(b.N), "claims/doc")
	if be.name == "postgres" {
		b.ReportMetric(float64(held)/float64(b.Elapsed()), "held")
		if locked > 0 {
			b.ReportMetric(float64(sealed)/float64(locked), "events/hold")
		}
	}
	if live {
		b.ReportMetric(float64(added)/float64(time.Millisecond), "rtt_ms")
		b.ReportMetric(busy, "cpu")
	}
}

// benchWorker claims and finishes documents until none is left and
// admitted is closed, waiting on wake while none is claimable.
func benchWorker(b *testing.B, j *Journal, pages int, p Policy, claimed, claims *atomic.Int64, wake, admitted chan struct{}) {
	owner := NewOwner()
	for {
		claims.Add(1)
		l, _, err := j.ClaimNext(owner, p, Claimable{})
		if errors.Is(err, ErrNothingClaimable) {
			select {
			case <-admitted:
				if claimed.Load() == int64(b.N) {
					return
				}
			case <-wake:
			}
			continue
		}
		if err != nil {
			b.Error(err)
			return
		}
		claimed.Add(1)
		for i := range pages {
			m := PageMetric{Page: i, DPI: 300, Render: 90 * time.Millisecond, OCR: 500 * time.Millisecond, Words: 180, MeanConfidence: 91}
			if err := j.PageDone(l, m, time.Minute); err != nil {
				b.Error(err)
				return
			}
		}
		if err := j.Finish(l, Result{State: outcome.Done, MeanConfidence: 91, Band: "high", Artifact: "artifacts/x.json", ArtifactSHA256: "00"}); err != nil {
			b.Error(err)
			return
		}
	}
}
