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

// The cascade (issue 20): refbatch reads each page first at a lower
// resolution and again at the full one only when that reading asks. The
// default run is measured against the same build with --no-cascade, in
// the same bench, and the default run's artifacts say which pages were
// read twice and what those pages cost.

// cascadeStats is what the default run's artifacts say of the cascade.
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

// runNoCascade runs the default settings with --no-cascade: every page
// read once at --dpi, refbatch before the cascade.
func (b *bench) runNoCascade(ctx context.Context) error {
	if !strings.Contains(b.help, "--no-cascade") {
		b.res.Notes = append(b.res.Notes, "refbatch run has no --no-cascade flag: that run is skipped")
		return nil
	}
	args := []string{"--workers", strconv.Itoa(b.o.Cores), "--dpi", strconv.Itoa(b.o.DPI), "--no-cascade"}
	r, err := b.refbatchRun(ctx, "no cascade", filepath.Join(b.c.dir, "manifest.csv"), "", b.runsDir("no-cascade"), false, args...)
	if err != nil {
		return err
	}
	b.res.NoCascade = r
	return nil
}

// noteCascade records the default run's cascade figures from its
// artifacts in out.
func (b *bench) noteCascade(out string) {
	s, err := readCascadeStats(filepath.Join(out, "artifacts"))
	if err != nil {
		b.res.Notes = append(b.res.Notes, "cascade: "+err.Error())
		return
	}
	b.res.Cascade = s
}

// cascadeChecks adds issue 20's acceptance: the default run against
// --no-cascade and against the limit, pages per minute.
func (r *results) cascadeChecks(add func(name string, v float64, target string, pass bool)) {
	ok := func(x *runResult) bool { return x != nil && finished(x.ExitCode) && x.PagesPerMinute > 0 }
	if ok(r.Default) && ok(r.NoCascade) {
		r.Ratios.DefaultVsNoCascade = r.Default.PagesPerMinute / r.NoCascade.PagesPerMinute
		r.Ratios.DefaultVsNoCascadeCPU = r.Default.CPUPagesPerMinute / r.NoCascade.CPUPagesPerMinute
		add("refbatch default / --no-cascade (pages per minute, issue 20)", r.Ratios.DefaultVsNoCascade, ">= 1.3", r.Ratios.DefaultVsNoCascade >= 1.3)
	}
	// Against the limit only for a build with the cascade: its pages say
	// so. By CPU, as the limit itself is computed: on a shared machine the
	// wall of a run is the other work's as much as refbatch's.
	if r.Limit != nil && r.Limit.PagesPerMinute > 0 && ok(r.Default) && r.Cascade != nil && r.Cascade.FirstRead > 0 {
		v := r.Default.CPUPagesPerMinute / r.Limit.PagesPerMinute
		add(fmt.Sprintf("refbatch default / limit at %d DPI, by CPU (issue 20)", r.Settings.DPI), v, ">= 1.3", v >= 1.3)
	}
}

// writeCascade prints the cascade's line of the table's notes.
func (r *results) writeCascade(w io.Writer) {
	s := r.Cascade
	if s == nil && r.Ratios.DefaultVsNoCascade == 0 {
		return
	}
	fmt.Fprint(w, "cascade ")
	if s != nil {
		fmt.Fprintf(w, " %d of %d pages read first under their resolution, %d read again (%.1f%%, %d kept the first reading; %v), %.1f%% of the engines' time",
			s.FirstRead, s.Pages, s.ReadTwice, 100*float64(s.ReadTwice)/float64(max(1, s.FirstRead)), s.KeptFirst, s.Reasons, 100*s.TwiceShare)
	}
	if r.Ratios.DefaultVsNoCascade > 0 {
		fmt.Fprintf(w, "; default / --no-cascade pages per minute %.2f (by CPU %.2f)", r.Ratios.DefaultVsNoCascade, r.Ratios.DefaultVsNoCascadeCPU)
	}
	fmt.Fprintln(w)
}
