package main

// export-check's issue 33 lines: reader agreement and PDF/A.

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/refbatch/refbatch/batch/export/pdfcheck"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr/result"
)

// checkReadersAndPDFA measures each available reader on d's PDF out
// (written as out.pdf in dir by pdfcheck.Check), on its upright pages and
// the others: the share of the artifact's phrases it finds (at least
// pdfcheck.MinPhrases on upright pages, MinPhrasesTurned on the others),
// its character error over the words sorted (at most MaxSortedCER on all
// pages) and in reading order (reported); and it checks the PDF/A
// clauses when d was exported as PDF/A.
func checkReadersAndPDFA(ctx context.Context, o exportCheckOptions, d *docCheck, dir string, out []byte, pages []result.PageResult) error {
	path := filepath.Join(dir, "out.pdf")
	d.Readers = map[string][2]pdfcheck.Figures{}
	for _, reader := range pdfcheck.Readers {
		if pdfcheck.ReaderAvailable(reader, o.PDFJS) != "" {
			continue
		}
		texts, err := pdfcheck.Extract(ctx, reader, path, dir, o.PDFJS)
		if err != nil {
			return fmt.Errorf("%s: %w", d.SourceID, err)
		}
		var figs [2]pdfcheck.Figures
		for k, up := range []bool{true, false} {
			figs[k] = pdfcheck.Measure(texts, pages, func(i int) bool { return pdfcheck.Upright(pages[i]) == up })
		}
		d.Readers[reader] = figs
		d.Problems = append(d.Problems, readerProblems(reader, figs)...)
	}
	if o.PDFA && d.NotPDFA == "" {
		d.PDFA = true
		if p := pdfcheck.PDFA(out); len(p) > 0 {
			d.Problems = append(d.Problems, "PDF/A: "+strings.Join(p, "; "))
		}
	}
	return nil
}

// phraseLines are the least share of the phrases a reader must find on
// a document's upright pages and on its others.
var phraseLines = [2]float64{pdfcheck.MinPhrases, pdfcheck.MinPhrasesTurned}

// sortedCER is a reader's CER over sorted words on all of a document's
// pages, upright and others, which MaxSortedCER is a line for.
func sortedCER(figs [2]pdfcheck.Figures) pdfcheck.PageCER {
	s := figs[0].Sorted
	s.Add(figs[1].Sorted)
	return s
}

// readerProblems are the lines reader's figures on a document's upright
// pages and its others miss.
func readerProblems(reader string, figs [2]pdfcheck.Figures) []string {
	var p []string
	for k, want := range phraseLines {
		if r := figs[k].Phrases; r.Of > 0 && r.Rate() < want {
			p = append(p, fmt.Sprintf("%s finds %.4f of the phrases on %s pages, want at least %.2f", reader, r.Rate(), [2]string{"upright", "turned or skewed"}[k], want))
		}
	}
	if sorted := sortedCER(figs); sorted.Rate() > pdfcheck.MaxSortedCER {
		p = append(p, fmt.Sprintf("%s CER over sorted words %.4f, want at most %.2f", reader, sorted.Rate(), pdfcheck.MaxSortedCER))
	}
	return p
}

// readerMeasures are writeReaders' tables: a title and the figure each
// prints of a reader's Figures.
var readerMeasures = []struct {
	title string
	of    func(pdfcheck.Figures) (float64, bool)
}{
	{"phrase recall (word trigrams found)", func(f pdfcheck.Figures) (float64, bool) { return f.Phrases.Rate(), f.Phrases.Of > 0 }},
	{"CER over sorted words", func(f pdfcheck.Figures) (float64, bool) { return f.Sorted.Rate(), f.Sorted.N > 0 }},
	{"CER in reading order", func(f pdfcheck.Figures) (float64, bool) { return f.CER.Rate(), f.CER.N > 0 }},
}

// writeReaders prints, for each of readerMeasures, each document's
// figure per reader on its upright pages / the others ("-" where it has
// none) and the totals; then each document's PDF/A state.
func writeReaders(w io.Writer, docs []*docCheck, pdfa bool) {
	total := map[string]*[2]pdfcheck.Figures{}
	for _, d := range docs {
		for r, f := range d.Readers {
			if total[r] == nil {
				total[r] = &[2]pdfcheck.Figures{}
			}
			total[r][0].Add(f[0])
			total[r][1].Add(f[1])
		}
	}
	cell := func(f [2]pdfcheck.Figures, of func(pdfcheck.Figures) (float64, bool)) string {
		var s [2]string
		for k := range s {
			s[k] = "-"
			if v, ok := of(f[k]); ok {
				s[k] = fmt.Sprintf("%.4f", v)
			}
		}
		return fmt.Sprintf(" %7s|%-7s", s[0], s[1])
	}
	for _, m := range readerMeasures {
		fmt.Fprintf(w, "\nreader %s, upright pages | turned or skewed pages\n%-24s", m.title, "document")
		for _, r := range pdfcheck.Readers {
			fmt.Fprintf(w, " %15s", r)
		}
		fmt.Fprintln(w)
		for _, d := range docs {
			fmt.Fprintf(w, "%-24s", d.SourceID)
			for _, r := range pdfcheck.Readers {
				if f, ok := d.Readers[r]; ok {
					fmt.Fprint(w, cell(f, m.of))
				} else {
					fmt.Fprintf(w, " %15s", "n/a")
				}
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%-24s", "all pages")
		for _, r := range pdfcheck.Readers {
			if t := total[r]; t != nil {
				fmt.Fprint(w, cell(*t, m.of))
			} else {
				fmt.Fprintf(w, " %15s", "n/a")
			}
		}
		fmt.Fprintln(w)
	}
	writeReaderSummary(w, docs)
	if !pdfa {
		return
	}
	isPDFA := 0
	for _, d := range docs {
		if d.PDFA {
			isPDFA++
		} else {
			fmt.Fprintf(w, "%-24s not PDF/A: %s\n", d.SourceID, d.NotPDFA)
		}
	}
	fmt.Fprintf(w, "%d of %d documents PDF/A\n", isPDFA, len(docs))
}

// writeReaderSummary prints, per reader, the documents' phrase recall
// (least and median) on upright pages and on the others, with how many
// documents miss its line, and the most character error over sorted
// words of a document, with how many miss MaxSortedCER.
func writeReaderSummary(w io.Writer, docs []*docCheck) {
	fmt.Fprintf(w, "\nper reader, over documents: phrase recall min / median (documents under the line), upright | turned or skewed; CER over sorted words max (over %.2f)\n", pdfcheck.MaxSortedCER)
	for _, r := range pdfcheck.Readers {
		var rec [2][]float64
		var under [2]int
		sortedMax, over := 0.0, 0
		for _, d := range docs {
			f, ok := d.Readers[r]
			if !ok {
				continue
			}
			for k, want := range phraseLines {
				if f[k].Phrases.Of > 0 {
					rec[k] = append(rec[k], f[k].Phrases.Rate())
					if f[k].Phrases.Rate() < want {
						under[k]++
					}
				}
			}
			s := sortedCER(f)
			sortedMax = max(sortedMax, s.Rate())
			if s.Rate() > pdfcheck.MaxSortedCER {
				over++
			}
		}
		if len(rec[0])+len(rec[1]) == 0 {
			fmt.Fprintf(w, "%-15s n/a\n", r)
			continue
		}
		fmt.Fprintf(w, "%-15s %s (%d of %d) | %s (%d of %d); %.4f (%d)\n", r, minMedian(rec[0]), under[0], len(rec[0]),
			minMedian(rec[1]), under[1], len(rec[1]), sortedMax, over)
	}
}

// minMedian is "min / median" of v, "-" when v is empty; v is sorted.
func minMedian(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	slices.Sort(v)
	return fmt.Sprintf("%.4f / %.4f", v[0], v[len(v)/2])
}

// checkedPages are a's pages as its searchable PDF carries their text: a
// person's transcriptions of a page (set in its layer after its lines,
// when the page has a resolution to place them by) follow its text, a
// line each, so that they do not count as the readers' errors.
func checkedPages(a *layout.Artifact) []result.PageResult {
	pages := slices.Clone(a.Pages)
	for _, t := range a.Transcriptions {
		b := t.Box
		if t.Page < 0 || t.Page >= len(pages) || pages[t.Page].DPI <= 0 || b[2] <= b[0] || b[3] <= b[1] {
			continue
		}
		var lines []string
		for _, l := range strings.Split(t.Text, "\n") {
			if ws := strings.Fields(l); len(ws) > 0 {
				lines = append(lines, strings.Join(ws, " "))
			}
		}
		if len(lines) > 0 {
			p := &pages[t.Page]
			p.Text = strings.TrimLeft(p.Text+"\n\n"+strings.Join(lines, "\n"), "\n")
		}
	}
	return pages
}
