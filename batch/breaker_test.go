package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/page"
)

// TestBreakerRearms: the breaker asks for one probe at a time, and after a
// probe, passed or failed, it asks again when documents keep failing: a
// good probe forgets the failures counted so far, it does not disarm the
// breaker for the rest of the run.
func TestBreakerRearms(t *testing.T) {
	var b breaker
	fail := func(from int64) (probes int) {
		for id := from; id < from+breakerThreshold; id++ {
			n, p := b.failed(id)
			if p {
				probes++
				if n != breakerThreshold {
					t.Errorf("a probe asked for after %d documents, want %d", n, breakerThreshold)
				}
			}
		}
		return probes
	}
	if got := fail(0); got != 1 {
		t.Fatalf("%d probes asked for after %d failing documents, want 1", got, breakerThreshold)
	}
	if _, p := b.failed(100); p {
		t.Error("a second probe asked for while the first runs")
	}
	b.probed(true)
	if n, p := b.failed(200); n != 1 || p {
		t.Errorf("after a good probe: %d failing documents, probe %v; want the count to start again", n, p)
	}
	if got := fail(300); got != 1 {
		t.Errorf("after a good probe, %d probes asked for when documents keep failing, want 1: the breaker did not re-arm", got)
	}
	b.probed(false)
	if _, p := b.failed(400); !p {
		t.Error("after a failed probe, the next failure asks for no probe")
	}
	b.probed(true)
	b.ok()
	if n, _ := b.failed(500); n != 1 {
		t.Errorf("after a success, %d failing documents, want 1", n)
	}
}

// probeEngine reads the probe page, or fails it with err: fault
// injection for the breaker, which only asks whether the page was read.
type probeEngine struct{ err error }

func (e probeEngine) Open(context.Context, []byte) (int, error) { return 1, nil }
func (e probeEngine) Page(context.Context, int, int, time.Duration) (ocr.PageResult, error) {
	return ocr.PageResult{}, e.err
}
func (probeEngine) Versions() ocr.Versions  { return ocr.Versions{} }
func (probeEngine) Memory() ocr.MemoryUsage { return ocr.MemoryUsage{} }
func (probeEngine) Alive() bool             { return true }
func (probeEngine) Close() error            { return nil }

// TestEngineFailedProbes: documents failing in the engines make the run
// probe a fresh engine once per breakerThreshold of them; a good probe
// lets the run go on and the count start again, a failed one stops the
// run with ErrEnginesBroken.
func TestEngineFailedProbes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		probe  error
		probes int
		broken bool
	}{
		{"the probe page is read", nil, 2, false},
		{"the probe page fails", errors.New("engine died"), 1, true},
	} {
		probes := 0
		r := &runner{log: slog.New(slog.DiscardHandler), engines: func(context.Context, page.Policy) (engine, error) {
			probes++
			return probeEngine{err: tc.probe}, nil
		}}
		ctx, cancel := context.WithCancel(context.Background())
		r.stop.cancel = cancel
		// Twice the threshold of documents fail, until the run stops.
		for id := int64(0); id < 2*breakerThreshold && ctx.Err() == nil; id++ {
			r.engineFailed(ctx, id)
		}
		cancel()
		if broken := errors.Is(r.stop.err(), ErrEnginesBroken); probes != tc.probes || broken != tc.broken {
			t.Errorf("%s: %d probes, run stopped as broken: %v (%v); want %d, %v", tc.name, probes, broken, r.stop.err(), tc.probes, tc.broken)
		}
	}
}

// TestSettleTimeoutProvesTheEngine: a page over its deadline ends its
// document and shows the engine answers, so the documents failing before
// it are forgotten, as a success forgets them; a page the engine could not
// render shows nothing of the kind. Real SQLite; the probe engine reads
// the probe page.
func TestSettleTimeoutProvesTheEngine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cause  ocr.Cause
		probes int
	}{
		{"a page over its deadline between the failures", ocr.CauseTimeout, 0},
		{"a page not rendered between the failures", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testSettleBetweenFailures(t, tc.cause, tc.probes)
		})
	}
}

// testSettleBetweenFailures settles breakerThreshold-1 crashes, one
// attempt failing with cause, and breakerThreshold-1 crashes again, and
// checks the probes the breaker asked for.
func testSettleBetweenFailures(t *testing.T, cause ocr.Cause, want int) {
	j, err := journal.Open(filepath.Join(t.TempDir(), "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	probes := 0
	r := &runner{j: j, log: slog.New(slog.DiscardHandler), o: Options{Progress: NopProgress{}},
		engines: func(context.Context, page.Policy) (engine, error) { probes++; return probeEngine{}, nil }}
	r.o.Attempts = 3
	r.stop.cancel = func() {}
	settle := func(i int, c ocr.Cause) {
		id := fmt.Sprintf("R-%d", i)
		row, err := j.Admit(journal.Admission{Manifest: "m.csv", Line: i + 2, SourceID: id, SHA256: id, Path: id + ".pdf", Size: 1, Pages: 1})
		if err != nil {
			t.Fatal(err)
		}
		l, err := j.Claim(row.DocID, "o", r.policy())
		if err != nil {
			t.Fatal(err)
		}
		r.settle(context.Background(), l, journal.Doc{ID: row.DocID, SourceID: id}, job{},
			ocrResult{err: &ocr.EngineError{Cause: c, Err: errors.New("x")}}, r.log)
	}
	for i := range breakerThreshold - 1 {
		settle(i, ocr.CauseCrash)
	}
	settle(breakerThreshold, cause)
	for i := range breakerThreshold - 1 {
		settle(breakerThreshold+1+i, ocr.CauseCrash)
	}
	if probes != want || r.stop.err() != nil {
		t.Errorf("%d probes, run stopped by %v; want %d probes", probes, r.stop.err(), want)
	}
}
