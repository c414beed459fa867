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
	"github.com/refbatch/refbatch/manifest"
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

// barProgress draws a progress bar of rows reaching a final state, with
// pages, pages per minute and the count in review.
type barProgress struct {
	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	start   time.Time
	pages   int
	review  int
	resumed int
}

func newBarProgress(w io.Writer, total int) *barProgress {
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("rows"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	return &barProgress{bar: bar, start: time.Now()}
}

func (p *barProgress) Event(e batch.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case batch.EventPageDone:
		p.pages++
	case batch.EventFinished:
		if e.Resumed {
			p.resumed++
		}
		if e.State == "review" {
			p.review++
		}
		p.bar.Add(1)
	default:
		return
	}
	ppm := 0.0
	if m := time.Since(p.start).Minutes(); m > 0 {
		ppm = float64(p.pages) / m
	}
	p.bar.Describe(fmt.Sprintf("rows · %d pages · %.0f pages/min · %d in review", p.pages, ppm, p.review))
}

func (p *barProgress) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Finish()
}

// countRows counts the manifest's records for the progress bar's total; 0
// when the manifest cannot be read (the run then reports why).
func countRows(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	r, err := manifest.NewReader(f)
	if err != nil {
		return 0
	}
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			return n
		}
		n++
	}
}
