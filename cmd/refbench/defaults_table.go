package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// writeDefaultsTable prints one line per corpus and run, and the check;
// it returns whether the check passed on every corpus measured.
func writeDefaultsTable(w io.Writer, results []*defaultsResult, minRatio float64) bool {
	ok := true
	fmt.Fprintf(w, "%-7s %-9s %6s %12s %12s %9s %9s %8s %8s\n", "corpus", "run", "pages", "ppm by CPU", "ppm (wall)", "vs limit", "(wall)", "CER", "WER")
	for _, r := range results {
		if l := r.Limit; l != nil {
			fmt.Fprintf(w, "%-7s %-9s %6d %12.1f %12.1f %9s %9s\n", r.Corpus.Name, "limit", l.Pages, l.PagesPerMinute, l.WallPagesPerMinute, "1.00", "1.00")
		}
		for _, name := range sortedRuns(r.Runs) {
			run := r.Runs[name]
			score := ""
			if run.MeanCER > 0 || run.MeanWER > 0 {
				score = fmt.Sprintf("%8.4f %8.4f", run.MeanCER, run.MeanWER)
			}
			fmt.Fprintf(w, "%-7s %-9s %6d %12.1f %12.1f %9.2f %9.2f %s\n", r.Corpus.Name, name, run.Pages, run.CPUPagesPerMinute, run.PagesPerMinute, run.VsLimit, run.VsLimitWall, score)
		}
		got := 0.0
		if d := r.Runs["default"]; d != nil {
			got = d.VsLimit
		}
		pass := got >= minRatio
		ok = ok && pass
		fmt.Fprintf(w, "check   %s: default / limit by CPU %.2f, want >= %.2f: %s\n", r.Corpus.Name, got, minRatio, map[bool]string{true: "ok", false: "FAIL"}[pass])
	}
	return ok
}

// sortedRuns lists the default first, then --cascade, then the others.
func sortedRuns(runs map[string]*defaultsRun) []string {
	out := []string{}
	for _, n := range []string{"default", "cascade"} {
		if runs[n] != nil {
			out = append(out, n)
		}
	}
	var more []string
	for n := range runs {
		if n != "default" && n != "cascade" {
			more = append(more, n)
		}
	}
	slices.Sort(more)
	return append(out, more...)
}
