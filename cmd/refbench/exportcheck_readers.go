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

// checkReadersAndPDFA measures each available reader's CER on d's PDF out
// (written as out.pdf in dir by pdfcheck.Check) on its upright pages and
// the others, and checks the PDF/A clauses when it was exported as PDF/A.
func checkReadersAndPDFA(ctx context.Context, o exportCheckOptions, d *docCheck, dir string, out []byte, pages []result.PageResult) error {
	path := filepath.Join(dir, "out.pdf")
	d.Readers = map[string][2]pdfcheck.PageCER{}
	for _, reader := range pdfcheck.Readers {
		if pdfcheck.ReaderAvailable(reader, o.PDFJS) != "" {
			continue
		}
		var figs [2]pdfcheck.PageCER
		for k, up := range []bool{true, false} {
			c, err := pdfcheck.ReaderCER(ctx, reader, path, dir, o.PDFJS, pages, func(i int) bool { return pdfcheck.Upright(pages[i]) == up })
			if err != nil {
				return fmt.Errorf("%s: %w", d.SourceID, err)
			}
			figs[k] = c
		}
		d.Readers[reader] = figs
		if figs[0].Rate() > pdfcheck.MaxCER {
			d.Problems = append(d.Problems, fmt.Sprintf("%s CER %.4f on upright pages, want at most %.2f", reader, figs[0].Rate(), pdfcheck.MaxCER))
		}
	}
	if o.PDFA && d.NotPDFA == "" {
		d.PDFA = true
		if p := pdfcheck.PDFA(out); len(p) > 0 {
			d.Problems = append(d.Problems, "PDF/A: "+strings.Join(p, "; "))
		}
	}
	return nil
}

// writeReaders prints each document's reader CERs, upright pages / the
// others ("-" where it has none), its PDF/A state, and the totals.
func writeReaders(w io.Writer, docs []*docCheck, pdfa bool) {
	fmt.Fprintf(w, "\nreader CER, upright pages | turned or skewed pages\n%-24s", "document")
	for _, r := range pdfcheck.Readers {
		fmt.Fprintf(w, " %19s", r)
	}
	fmt.Fprintln(w, "  PDF/A")
	total := map[string]*[2]pdfcheck.PageCER{}
	rate := func(c pdfcheck.PageCER) string {
		if c.N == 0 {
			return "-"
		}
		return fmt.Sprintf("%.4f", c.Rate())
	}
	var isPDFA int
	for _, d := range docs {
		fmt.Fprintf(w, "%-24s", d.SourceID)
		for _, r := range pdfcheck.Readers {
			f, ok := d.Readers[r]
			if !ok {
				fmt.Fprintf(w, " %19s", "n/a")
				continue
			}
			if total[r] == nil {
				total[r] = &[2]pdfcheck.PageCER{}
			}
			total[r][0].Add(f[0])
			total[r][1].Add(f[1])
			fmt.Fprintf(w, " %9s|%-9s", rate(f[0]), rate(f[1]))
		}
		switch {
		case !pdfa:
			fmt.Fprintln(w, "  (not asked)")
		case d.PDFA:
			isPDFA++
			fmt.Fprintln(w, "  yes")
		default:
			fmt.Fprintln(w, "  no: "+d.NotPDFA)
		}
	}
	fmt.Fprintf(w, "%-24s", "all pages")
	for _, r := range pdfcheck.Readers {
		if t := total[r]; t != nil {
			fmt.Fprintf(w, " %9s|%-9s", rate(t[0]), rate(t[1]))
		} else {
			fmt.Fprintf(w, " %19s", "n/a")
		}
	}
	if pdfa {
		fmt.Fprintf(w, "  %d of %d PDF/A", isPDFA, len(docs))
	}
	fmt.Fprintln(w)
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
