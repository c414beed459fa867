package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The cascade (issue 20, off by default since issue 29): refbatch reads
// each page first at a lower resolution and again at the full one only
// when that reading asks. The same build is measured with --cascade
// beside the default (every page read once at --dpi), in the same bench,
// and the --cascade run's artifacts say which pages were read twice and
// what those pages cost.

// cascadeStats is what the --cascade run's artifacts say of the cascade.
type cascadeStats struct {
	Pages     int `json:"pages"`      // pages with engine time
	FirstRead int `json:"first_read"` // read first under their resolution
	ReadTwice int `json:"read_twice"` // of them, read again at the full one
	KeptFirst int `json:"kept_first"` // of those, that kept the first reading
	// TwiceShare is the share of the engines' time (render and recognise,
	// both readings) the pages read twice took.
	TwiceShare float64        `json:"twice_share_of_engine_time"`
	Reasons    map[string]int `json:"reasons"`
}

// readCascadeStats reads the plaintext artifacts in dir.
func readCascadeStats(dir string) (*cascadeStats, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no plaintext artifacts in %s", dir)
	}
	s := &cascadeStats{Reasons: map[string]int{}}
	var engine, twice float64
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var a struct {
			Pages []struct {
				DPI        int     `json:"dpi"`
				FirstDPI   int     `json:"first_dpi"`
				SecondPass bool    `json:"second_pass"`
				Reason     string  `json:"cascade_reason"`
				Render     float64 `json:"render_ns"`
				Recognise  float64 `json:"recognise_ns"`
			} `json:"pages"`
		}
		if err := json.Unmarshal(data, &a); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		for _, p := range a.Pages {
			s.Pages++
			engine += p.Render + p.Recognise
			if p.FirstDPI == 0 {
				continue
			}
			s.FirstRead++
			if p.SecondPass {
				s.ReadTwice++
				s.Reasons[p.Reason]++
				twice += p.Render + p.Recognise
				if p.DPI == p.FirstDPI {
					s.KeptFirst++
				}
			}
		}
	}
	if engine > 0 {
		s.TwiceShare = twice / engine
	}
	return s, nil
}

// runCascade runs the default settings with --cascade: pages read first
// at --first-dpi, again at --dpi when that reading asks.
func (b *bench) runCascade(ctx context.Context) error {
	if !strings.Contains(b.help, "--cascade ") {
		b.res.Notes = append(b.res.Notes, "refbatch run has no --cascade flag: that run is skipped")
		return nil
	}
	out := b.runsDir("cascade")
	args := []string{"--workers", strconv.Itoa(b.o.Cores), "--dpi", strconv.Itoa(b.o.DPI), "--cascade"}
	r, err := b.refbatchRun(ctx, "cascade", filepath.Join(b.c.dir, "manifest.csv"), "", out, false, args...)
	if err != nil {
		return err
	}
	b.res.CascadeRun = r
	if s, err := readCascadeStats(filepath.Join(out, "artifacts")); err == nil {
		b.res.Cascade = s
	} else {
		b.res.Notes = append(b.res.Notes, "cascade: "+err.Error())
	}
	return nil
}

// cascadeRatios sets the --cascade run against the default, pages per
// minute by the wall and by CPU: shown, not checked (issue 29 checks the
// default against the limit).
func (r *results) cascadeRatios() {
	ok := func(x *runResult) bool {
		return x != nil && finished(x.ExitCode) && x.PagesPerMinute > 0 && x.CPUPagesPerMinute > 0
	}
	if ok(r.Default) && ok(r.CascadeRun) {
		r.Ratios.CascadeVsDefault = r.CascadeRun.PagesPerMinute / r.Default.PagesPerMinute
		r.Ratios.CascadeVsDefaultCPU = r.CascadeRun.CPUPagesPerMinute / r.Default.CPUPagesPerMinute
	}
}

// writeCascade prints the cascade's line of the table's notes.
func (r *results) writeCascade(w io.Writer) {
	s := r.Cascade
	if s == nil && r.Ratios.CascadeVsDefault == 0 {
		return
	}
	fmt.Fprint(w, "--cascade ")
	if s != nil {
		fmt.Fprintf(w, " %d of %d pages read first under their resolution, %d read again (%.1f%%, %d kept the first reading; %v), %.1f%% of the engines' time",
			s.FirstRead, s.Pages, s.ReadTwice, 100*float64(s.ReadTwice)/float64(max(1, s.FirstRead)), s.KeptFirst, s.Reasons, 100*s.TwiceShare)
	}
	if r.Ratios.CascadeVsDefault > 0 {
		fmt.Fprintf(w, "; --cascade / default pages per minute %.2f (by CPU %.2f)", r.Ratios.CascadeVsDefault, r.Ratios.CascadeVsDefaultCPU)
	}
	fmt.Fprintln(w)
}
