package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// writeTable prints the side-by-side table, the ratios and the checks.
func (r *results) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\nrefbench %s  %s, %d cores  load %v -> %v\n", r.Date.Format("2006-01-02 15:04Z"), r.Machine.CPU, r.Machine.Cores, r.Machine.LoadAvgStart, r.Machine.LoadAvgEnd)
	fmt.Fprintf(w, "corpus %d documents, %d pages at %d DPI (%s)\n\n", r.Corpus.Documents, r.Corpus.Pages, r.Settings.DPI, r.Corpus.Dir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tpages\tpages/min\tby CPU\twall s\tCPU s/page\tparent CPU s/page\tparent RSS MiB\tworker RSS MiB\tothers' CPU\t")
	row := func(name string, x *runResult) {
		if x == nil {
			return
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.3f\t%.4f\t%.1f\t%.1f\t%.0f%%\t\n", name, x.Pages, x.PagesPerMinute, x.CPUPagesPerMinute, x.WallS, x.CPUPerPage, x.ParentCPUPerPage,
			float64(x.PeakParentRSS)/mib, float64(x.PeakWorkerRSS)/mib, 100*x.OtherCPUShare)
	}
	row("refbatch (default)", r.Default)
	row("refbatch (page steps off)", r.Fast)
	row("refbatch (coverage off)", r.NoCoverage)
	row("refbatch (--cascade)", r.CascadeRun)
	if l := r.Limit; l != nil {
		fmt.Fprintf(tw, "limit (pdftoppm %.3f + tesseract %.3f CPU s/page)\t%d\t%.1f\t%.1f\t%.1f\t%.3f\t-\t-\t-\t%.0f%%\t\n", l.RenderCPUPerPage, l.OCRCPUPerPage,
			l.Pages, l.PagesPerMinute, l.PagesPerMinute, l.WallS, l.RenderCPUPerPage+l.OCRCPUPerPage, 100*l.OtherCPUShare)
		if l.NetPagesPerMinute > 0 {
			fmt.Fprintf(tw, "limit less process start (%.3f CPU s/page)\t%d\t%.1f\t%.1f\t-\t%.3f\t-\t-\t-\t\t\n", l.StartCPU,
				l.Pages, l.NetPagesPerMinute, l.NetPagesPerMinute, l.RenderCPUPerPage+l.OCRCPUPerPage-l.StartCPU)
		}
		fmt.Fprintf(tw, "limit pool, by its wall\t%d\t%.1f\t-\t%.1f\t-\t-\t-\t-\t\t\n", l.Pages, l.WallPagesPerMinute, l.WallS)
	}
	if m := r.OCRmyPDF; m != nil {
		fmt.Fprintf(tw, "OCRmyPDF %s --jobs %d\t%d\t%.1f\t%.1f\t%.1f\t%.3f\t-\t-\t-\t%.0f%%\t\n", m.Version, m.Jobs, m.Pages, m.PagesPerMinute, m.CPUPagesPerMinute,
			m.WallS, m.CPUPerPage, 100*m.OtherCPUShare)
	}
	for _, s := range r.Subsets {
		row("refbatch, "+s.Name, s)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if r.Ratios.DefaultVsLimit > 0 || r.Ratios.FastVsLimit > 0 || r.Ratios.DefaultVsOCRmyPDF > 0 {
		fmt.Fprintf(w, "ratios   by CPU: refbatch/limit %.2f", r.Ratios.DefaultVsLimit)
		if r.Ratios.FastVsLimit > 0 {
			fmt.Fprintf(w, "   no-orientation/limit %.2f", r.Ratios.FastVsLimit)
		}
		if r.Ratios.DefaultVsNetLimit > 0 {
			fmt.Fprintf(w, "   refbatch/(limit less process start) %.2f", r.Ratios.DefaultVsNetLimit)
		}
		if r.Ratios.DefaultVsOCRmyPDF > 0 {
			fmt.Fprintf(w, "   refbatch/OCRmyPDF %.2f", r.Ratios.DefaultVsOCRmyPDF)
		}
		fmt.Fprintln(w)
	}
	if r.CoverageShare > 0 || r.Ratios.DefaultVsNoCoverage > 0 {
		fmt.Fprintf(w, "coverage step: %.1f%% of the engines' time in the default run", 100*r.CoverageShare)
		if r.Ratios.DefaultVsNoCoverage > 0 {
			fmt.Fprintf(w, "; default / --no-coverage run, pages per minute by CPU: %.2f", r.Ratios.DefaultVsNoCoverage)
		}
		fmt.Fprintln(w)
	}
	r.writeCascade(w)
	if d := r.DefaultResume; d != nil {
		fmt.Fprintf(w, "resume   finished default batch (%d documents): %.2f s\n", r.Corpus.Documents, d.WallS)
	}
	if rr := r.Rows; rr != nil {
		for _, p := range []struct{ run, resume *runResult }{{rr.Small, rr.SmallResume}, {rr.Big, rr.BigResume}} {
			if p.run == nil {
				continue
			}
			fmt.Fprintf(w, "tiny     %d rows at %d DPI: %.1f s (%.1f ms/document, parent %.2f ms CPU/document), parent peak RSS %.1f MiB", p.run.Rows, rr.DPI,
				p.run.WallS, p.run.WallS*1000/float64(p.run.Rows), p.run.ParentCPUS*1000/float64(p.run.Rows), float64(p.run.PeakParentRSS)/mib)
			if p.resume != nil {
				fmt.Fprintf(w, "; resume %.2f s, parent peak RSS %.1f MiB", p.resume.WallS, float64(p.resume.PeakParentRSS)/mib)
			}
			fmt.Fprintln(w)
		}
	}
	if rr := r.Rows; rr != nil && rr.ParentRSSRatio > 0 {
		fmt.Fprintf(w, "memory   parent peak RSS, %d rows / %d rows: %.2f (run), %.2f (resume)\n", rr.Big.Rows, rr.Small.Rows, rr.ParentRSSRatio, rr.ResumeParentRSSRatio)
	}
	if l := r.Long; l != nil && l.All != nil && l.One != nil {
		fmt.Fprintf(w, "long     %d-page document at %d DPI: %d workers %.1f s, 1 worker %.1f s: ratio %.2f\n", l.Pages, l.DPI, l.Workers, l.All.WallS, l.One.WallS, l.Ratio)
	}
	writeExportLines(w, r)
	writeHostileTable(w, r.Hostile)
	if len(r.Acceptance) > 0 {
		fmt.Fprintln(w, "\nacceptance")
		for _, c := range r.Acceptance {
			verdict := "FAIL"
			if c.Pass {
				verdict = "pass"
			}
			fmt.Fprintf(w, "  %-4s  %-62s %8.2f  target %s\n", verdict, c.Criterion, c.Value, c.Target)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
