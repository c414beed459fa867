package main

// Export's cost (issue 16): `refbatch export --bag` over a batch the bench
// just OCR'd, timed against that batch's OCR, then again over the finished
// export (what a resumed export costs), and its peak memory, which must
// not grow with the batch.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// exportResult is one `refbatch export`, and its rerun over the finished
// export.
type exportResult struct {
	Name     string   `json:"name"`
	Args     []string `json:"args"`
	ExitCode int      `json:"exit_code"`
	Stderr   string   `json:"stderr,omitempty"`
	// Documents and Exported come from export's --json summary; Files and
	// Bytes are what it wrote.
	Documents int     `json:"documents"`
	Exported  int     `json:"exported"`
	Files     int     `json:"files_written"`
	Bytes     int64   `json:"bytes"`
	WallS     float64 `json:"wall_seconds"`
	CPUS      float64 `json:"cpu_seconds"`
	// PeakRSS is the export process's peak resident set (wait4's
	// ru_maxrss, or the polled VmHWM when larger).
	PeakRSS int64 `json:"peak_rss_bytes"`
	// OCRWallS is the wall of the run that OCR'd the batch; Share is WallS
	// over it.
	OCRWallS float64 `json:"ocr_wall_seconds"`
	Share    float64 `json:"share_of_ocr_wall"`
	// OCRCPUS is that run's CPU (refbatch and its workers); CPUShare is
	// CPUS over it: on a shared machine, where the other jobs stretch
	// both walls by different amounts, the measure that holds.
	OCRCPUS  float64 `json:"ocr_cpu_seconds"`
	CPUShare float64 `json:"share_of_ocr_cpu"`
	// ResumeWallS is the same command again over the finished export:
	// every file is already there.
	ResumeWallS   float64 `json:"resume_wall_seconds"`
	ResumePresent int     `json:"resume_files_present"`
}

// exportSummary is the last line of `refbatch export --json`.
type exportSummary struct {
	Event     string `json:"event"`
	Documents int    `json:"documents"`
	Exported  int    `json:"exported"`
	Written   int    `json:"files_written"`
	Present   int    `json:"files_present"`
	Bytes     int64  `json:"bytes"`
}

// measureExport exports the finished batch in out into a fresh bag beside
// it, twice, and sets the figures against ocr, the run that OCR'd it.
func (b *bench) measureExport(ctx context.Context, name, out string, ocr *runResult) (*exportResult, error) {
	dest := exportDir(out)
	if err := os.RemoveAll(dest); err != nil {
		return nil, err
	}
	args := []string{"export", "--quiet", "--json", "--bag", "--out", out, "--to", dest, "--format", b.o.ExportFormats}
	r := &exportResult{Name: name, Args: args}
	if ocr != nil {
		r.OCRWallS, r.OCRCPUS = ocr.WallS, ocr.CPUS
	}
	for pass := range 2 {
		var stdout bytes.Buffer
		cmd := exec.CommandContext(ctx, b.exe, args...)
		cmd.Stdout = &stdout
		u, err := measure(ctx, cmd, true)
		if err != nil {
			return nil, err
		}
		sum, err := lastSummary(&stdout)
		if u.ExitCode != 0 || err != nil {
			r.ExitCode, r.Stderr = u.ExitCode, lastLines(u.Stderr, 3)
			fmt.Fprintf(b.log, "refbench: %s: refbatch export exited %d: %s\n", name, u.ExitCode, lastLine(u.Stderr))
			return r, nil
		}
		if pass == 1 {
			r.ResumeWallS, r.ResumePresent = u.Wall.Seconds(), sum.Present
			break
		}
		r.Documents, r.Exported, r.Files, r.Bytes = sum.Documents, sum.Exported, sum.Written, sum.Bytes
		r.WallS, r.CPUS, r.PeakRSS = u.Wall.Seconds(), u.CPU().Seconds(), max(u.MaxRSS, u.PeakParentRSS)
		if r.OCRWallS > 0 {
			r.Share = r.WallS / r.OCRWallS
		}
		if r.OCRCPUS > 0 {
			r.CPUShare = r.CPUS / r.OCRCPUS
		}
	}
	fmt.Fprintf(b.log, "refbench: %s: %d documents in %.2fs (%.1f%% of the OCR's %.1fs), CPU %.2fs (%.1f%% of the OCR's %.1fs), peak RSS %.1f MiB; again over the finished export %.2fs\n",
		name, r.Exported, r.WallS, 100*r.Share, r.OCRWallS, r.CPUS, 100*r.CPUShare, r.OCRCPUS, float64(r.PeakRSS)/mib, r.ResumeWallS)
	return r, nil
}

func lastSummary(r io.Reader) (exportSummary, error) {
	var s exportSummary
	b, err := io.ReadAll(r)
	if err != nil {
		return s, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil || s.Event != "summary" {
		return s, fmt.Errorf("no summary from refbatch export")
	}
	return s, nil
}

// exportChecks adds issue 16's acceptance checks: export at most 5% of
// the OCR's wall and of its CPU (issue 50's acceptance 3), and flat memory: what export holds beyond what the same
// binary needs to open that batch's journal and build its report (the
// resume of the finished run, measured just before) stays the same from
// the default batch to the tiny 2,400-document one. The raw ratio of the
// two exports' peaks is in bench.json too; it also counts that floor,
// which grows with the journal for every command.
func (r *results) exportChecks(add func(name string, v float64, target string, pass bool)) {
	e := r.Export
	if e != nil && e.ExitCode == 0 && e.Share > 0 {
		add(fmt.Sprintf("export of %d documents / their OCR (wall)", e.Exported), e.Share, "<= 0.05", e.Share <= 0.05)
	}
	if e != nil && e.ExitCode == 0 && e.CPUShare > 0 {
		add(fmt.Sprintf("export of %d documents / their OCR (CPU)", e.Exported), e.CPUShare, "<= 0.05", e.CPUShare <= 0.05)
	}
	floor := map[*exportResult]*runResult{e: r.DefaultResume}
	if r.Rows != nil {
		floor[r.TinyExport] = r.Rows.SmallResume
	}
	for _, x := range []*exportResult{e, r.TinyExport} {
		if f := floor[x]; x != nil && x.ExitCode == 0 && f != nil && f.PeakParentRSS > 0 {
			v := float64(x.PeakRSS) / float64(f.PeakParentRSS)
			add(fmt.Sprintf("export peak RSS / resuming the same %d documents", x.Documents), v, "<= 1.20", v <= 1.20)
		}
	}
}

func writeExportLines(w io.Writer, r *results) {
	for _, e := range []*exportResult{r.Export, r.TinyExport} {
		if e == nil {
			continue
		}
		if e.ExitCode != 0 {
			fmt.Fprintf(w, "export   %s: refbatch export exited %d\n", e.Name, e.ExitCode)
			continue
		}
		fmt.Fprintf(w, "export   %s: %d documents, %d files, %.1f MiB in %.2f s (%.1f%% of the OCR's %.1f s), CPU %.2f s (%.1f%% of the OCR's %.1f s), peak RSS %.1f MiB; again over the finished export %.2f s\n",
			e.Name, e.Exported, e.Files, float64(e.Bytes)/mib, e.WallS, 100*e.Share, e.OCRWallS, e.CPUS, 100*e.CPUShare, e.OCRCPUS, float64(e.PeakRSS)/mib, e.ResumeWallS)
	}
	if e, t := r.Export, r.TinyExport; e != nil && t != nil && e.PeakRSS > 0 && t.PeakRSS > 0 {
		fmt.Fprintf(w, "export   peak RSS, %d documents / %d documents: %.2f\n", t.Documents, e.Documents, float64(t.PeakRSS)/float64(e.PeakRSS))
	}
}

// exportDir is where measureExport puts the bag of the batch in out.
func exportDir(out string) string { return filepath.Clean(out) + "-export" }
