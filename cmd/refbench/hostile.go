package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// The hostile part runs each file of a folder of hostile PDFs as the
// middle row of a three-row manifest (a good document, the hostile file,
// another good document) under an address-space limit of 4 GiB (ulimit
// -v 4194304), and measures the whole run: its wall, the largest resident
// memory of its whole process tree at one moment, and every row's
// outcome. Issue 12 wants each run to exit 0 within 60 s with both good
// rows done, the hostile row rejected or in review, and the tree under
// 1 GiB.

// hostilePoll is how often the tree's memory is read: often, since an
// admission child can grow to its cap and be ended in a fraction of a
// second.
const hostilePoll = 20 * time.Millisecond

// hostileAS is the address-space limit of the measured runs, in KiB as
// ulimit -v takes it.
const hostileAS = 4194304

// hostileResult is one hostile file's run.
type hostileResult struct {
	File        string  `json:"file"`
	Bytes       int64   `json:"bytes"`
	WallS       float64 `json:"wall_s"`
	PeakTreeRSS int64   `json:"peak_tree_rss_bytes"`
	ExitCode    int     `json:"exit_code"`
	Outcome     string  `json:"outcome"`   // the hostile row's state/reason
	GoodDone    int     `json:"good_done"` // of the two good rows
	Stderr      string  `json:"stderr,omitempty"`
}

// ok reports whether the run met issue 12's line.
func (h *hostileResult) ok() bool {
	state, reason, _ := strings.Cut(h.Outcome, "/")
	// A file valid enough to be read is stopped by its time budget, which
	// may be minutes: review timeout is that stop.
	inTime := h.WallS < 60 || outcome.State(state) == outcome.Review && outcome.Reason(reason) == outcome.Timeout
	return finished(h.ExitCode) && inTime && h.GoodDone == 2 && (outcome.State(state) == outcome.Rejected || outcome.State(state) == outcome.Review) && h.PeakTreeRSS < 1<<30
}

func (b *bench) runHostile(ctx context.Context) error {
	var files []string
	for _, dir := range strings.Split(b.o.Hostile, ",") {
		found, err := filepath.Glob(filepath.Join(dir, "*.pdf"))
		if err != nil {
			return err
		}
		if len(found) == 0 {
			return fmt.Errorf("no *.pdf in %s", dir)
		}
		files = append(files, found...)
	}
	if len(b.c.rows) < 2 {
		return fmt.Errorf("the corpus has %d documents; the hostile runs need 2", len(b.c.rows))
	}
	slices.Sort(files)
	b.res.Hostile = nil
	for _, f := range files {
		h, err := b.hostileRun(ctx, f)
		if err != nil {
			return err
		}
		b.res.Hostile = append(b.res.Hostile, h)
		fmt.Fprintf(b.log, "refbench: hostile %s: exit %d in %.1fs, tree peak %.0f MiB, %s, %d of 2 good done\n",
			h.File, h.ExitCode, h.WallS, float64(h.PeakTreeRSS)/mib, h.Outcome, h.GoodDone)
		if err := b.save(); err != nil {
			return err
		}
	}
	return nil
}

// hostileRun runs one hostile file between the corpus's first two
// documents.
func (b *bench) hostileRun(ctx context.Context, file string) (*hostileResult, error) {
	name := filepath.Base(file)
	dir := filepath.Join(b.o.Out, "hostile", strings.TrimSuffix(name, ".pdf"))
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	hostile := filepath.Join(dir, name)
	if err := os.WriteFile(hostile, data, 0o644); err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range b.c.header {
		col[h] = i
	}
	records := [][]string{{"source_id", "participant_id", "referral_date", "consent", "path"}}
	row := func(r corpusRow) []string {
		return []string{r.record[col["source_id"]], r.record[col["participant_id"]], r.record[col["referral_date"]], "yes", r.path}
	}
	records = append(records, row(b.c.rows[0]),
		[]string{"HOSTILE-1", "P-000000", "2024-01-01", "yes", hostile},
		row(b.c.rows[1]))
	manifest := filepath.Join(dir, "manifest.csv")
	if err := writeCSV(manifest, records); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "out")
	args := []string{"run", "--quiet", "--plaintext", "--root", "/", "--out", out,
		"--workers", fmt.Sprint(b.o.Cores), "--dpi", fmt.Sprint(b.o.DPI), manifest}
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, hostileAS), b.exe}, args...)...)
	cmd.Stdout = io.Discard
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	u, err := measureEvery(ctx, cmd, hostilePoll)
	if err != nil {
		return nil, err
	}
	h := &hostileResult{File: name, Bytes: int64(len(data)), WallS: u.Wall.Seconds(), PeakTreeRSS: u.PeakTreeRSS, ExitCode: u.ExitCode}
	if !finished(u.ExitCode) {
		h.Stderr = lastLines(u.Stderr, 5)
	}
	rep, err := report.ReadJSON(filepath.Join(out, report.JSONFile))
	if err != nil {
		h.Outcome = "no report"
		return h, nil
	}
	for _, r := range rep.Rows {
		switch {
		case r.SourceID == "HOSTILE-1":
			h.Outcome = string(r.State) + "/" + string(r.Reason)
		case r.State == outcome.Done:
			h.GoodDone++
		}
	}
	return h, nil
}

// writeHostileTable prints the hostile runs.
func writeHostileTable(w io.Writer, hs []*hostileResult) {
	if len(hs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nhostile files, each between two good documents, under ulimit -v %d (issue 12)\n", hostileAS)
	fmt.Fprintf(w, "  %-4s  %-34s %10s %8s %14s %4s  %-28s %s\n", "", "file", "bytes", "wall s", "tree peak MiB", "exit", "hostile row", "good done")
	for _, h := range hs {
		verdict := "FAIL"
		if h.ok() {
			verdict = "pass"
		}
		fmt.Fprintf(w, "  %-4s  %-34s %10d %8.1f %14.0f %4d  %-28s %d/2\n", verdict, h.File, h.Bytes, h.WallS, float64(h.PeakTreeRSS)/mib, h.ExitCode, h.Outcome, h.GoodDone)
	}
}
