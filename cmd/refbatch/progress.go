package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report/outcome"
)

// progressSink is a batch.Progress the command closes when the run ends.
type progressSink interface {
	batch.Progress
	Close()
}

type nopSink struct{}

func (nopSink) Event(batch.Event) {}
func (nopSink) Close()            {}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// countBar is the plain bar of a command that works through a known
// number of documents (verify, export), on a terminal's stderr.
func countBar(w io.Writer, total int, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
}

// jsonProgress prints one JSON object per event on stdout.
type jsonProgress struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func newJSONProgress(w io.Writer) *jsonProgress { return &jsonProgress{enc: json.NewEncoder(w)} }

func (p *jsonProgress) Event(e batch.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.enc.Encode(e)
}

func (p *jsonProgress) Close() {}

// barProgress draws a progress bar of rows reaching a final state on a
// terminal, followed by the pages recognised, pages per minute over the
// last minutes, an estimate of the time left and the count in review. A
// ticker redraws it every second, so a stall shows as the rate falling and
// the estimate growing rather than as a frozen line.
type barProgress struct {
	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	now     func() time.Time
	start   time.Time
	total   int
	done    int // rows final, resumed ones included
	resumed int // rows already final when the run started
	pages   int
	review  int
	// recent holds the times of the pages recognised within rateWindow.
	recent []time.Time
	// eta is the rate the estimate of the time left divides by.
	eta rateEstimate
	// columns is the terminal's width now.
	columns func() int

	stop chan struct{}
	wg   sync.WaitGroup
}

// rateWindow is the span the bar measures pages per minute over, as
// `refbatch status` does.
const rateWindow = standing.StatusWindow

func newBarProgress(w io.Writer, total int) *barProgress {
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("starting"),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("rows"),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(barWidth),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	p := &barProgress{bar: bar, now: time.Now, start: time.Now(), total: total, stop: make(chan struct{}),
		columns: func() int { return terminalColumns(w) }}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.bar.Describe(p.describe())
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *barProgress) Event(e batch.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case batch.EventPageDone:
		p.pages++
		p.recent = append(p.recent, p.now())
	case batch.EventFinished:
		p.done++
		if e.Resumed {
			p.resumed++
		}
		if e.State == outcome.Review {
			p.review++
		}
		p.bar.Add(1)
	default:
		return
	}
	p.bar.Describe(p.describe())
}

// describe is the text after the bar: "documents · 19 pages · 237 pages/min ·
// ETA 4s · 1 in review", with fewer words on a narrow terminal, so that
// the line fits it. Called with p.mu held.
func (p *barProgress) describe() string {
	now := p.now()
	cut := 0
	for cut < len(p.recent) && now.Sub(p.recent[cut]) > rateWindow {
		cut++
	}
	p.recent = p.recent[cut:]
	ppm := 0.0
	if window := min(rateWindow, now.Sub(p.start)); window > 0 {
		ppm = float64(len(p.recent)) / window.Minutes()
	}
	p.eta.update(now, p.pages)
	eta := "ETA --"
	// Rows left will cost what the rows finished by this run cost on
	// average, rejected ones (no pages) included, at the rate of the last
	// minutes; none while the window holds no page (a stall).
	rate, seen := p.eta.perSecond()
	if worked := p.done - p.resumed; seen && worked >= etaMinRows && ppm > 0 && rate > 0 && p.total > p.done {
		left := float64(p.total-p.done) * float64(p.pages) / float64(worked)
		eta = "ETA " + etaText(left/rate)
	} else if p.total > 0 && p.done >= p.total {
		eta = "finishing"
	}
	room := p.columns() - fixedWidth(p.done, p.total, now.Sub(p.start))
	return fitDescription(room,
		fmt.Sprintf("documents · %d pages · %.0f pages/min · %s · %d in review", p.pages, ppm, eta, p.review),
		fmt.Sprintf("%d pages · %.0f pages/min · %s · %d in review", p.pages, ppm, eta, p.review),
		fmt.Sprintf("%.0f pages/min · %s · %d in review", ppm, eta, p.review),
		fmt.Sprintf("%.0f p/min · %s · %d review", ppm, eta, p.review),
		fmt.Sprintf("%s · %d review", eta, p.review),
		eta)
}

func (p *barProgress) Close() {
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Finish()
}

// countRows counts the manifest's rows for the progress bar's total; 0
// when the manifest cannot be read (the run then reports why).
func countRows(path string) int {
	st, _ := manifest.ScanFile(path)
	return st.Rows
}
