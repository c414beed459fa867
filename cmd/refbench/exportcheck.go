package main

// `refbench export-check`: issue 16's acceptance 1 and 2 over every
// document of a finished batch. It runs `refbatch export --format pdf`
// into a scratch folder and measures each searchable PDF against its
// source and its artifact with batch/export/pdfcheck, the same code as
// batch/export's TestSearchablePDF.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"filippo.io/age"
	"golang.org/x/sync/errgroup"

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/export/pdfcheck"
	"github.com/refbatch/refbatch/batch/handover"
	"github.com/refbatch/refbatch/batch/layout"
)

const exportCheckUsage = `Usage: refbench export-check --out DIR [--identity FILE] [flags]

Exports the finished batch in DIR with ` + "`refbatch export --format pdf`" + ` into a
scratch folder (or --to) and checks every searchable PDF against its source
(the PDF's first bytes, of the size and SHA-256 the artifact records) and
its artifact: pdftotext -raw CER at most 0.01 on the OCR'd pages, at least
95% of the words pdftotext -bbox finds on the source's ink (pdftoppm), every
page identical at 72 dpi, qpdf --check passing (or no worse than on the
source), pdfimages -list unchanged. Then issue 50's lines, for each reader
(pdftotext default and -raw, mutool draw -F txt, pdf.js from testdata/pdfjs
when node and its node_modules are there, PDFBox's text stripper in content
order and sorted by position, through testdata/pdfbox/Text.java, when java
and Debian's libpdfbox2-java are there): the share of the artifact's word
trigrams (three words in a row of a line) found in its text, white space
collapsed and a line break after a hyphen joined, at least 0.99 on the
upright pages and 0.95 on the turned or skewed ones; its character error
over the words sorted at most 0.01; its character error in reading order,
reported; and, with --pdfa (the default), every PDF exported
as PDF/A-2b passing batch/export/pdfcheck's PDF/A clauses, the others
listed with export's reason. With --straighten it exports so: the pages
export redraws straight are left out of the renders and the pdfimages
listing compared with the source's, and words are looked for on the
PDF's own ink. It prints one line per document (its
source_id and figures, never its text) and the totals.

Exit status: 0 every document meets every line; 1 one does not, a document
was not exported, or the check could not run; 2 usage error.

Flags:
`

// exportCheckOptions are export-check's flags.
type exportCheckOptions struct {
	Out, Identity, Refbatch, To, States, JSON string
	PDFJS                                     string
	Workers                                   int
	PDFA, Straighten                          bool
}

// docCheck is one document's figures; Problems are the lines it misses.
type docCheck struct {
	SourceID string `json:"source_id"`
	pdfcheck.Result
	CER      float64  `json:"cer"`
	InkShare float64  `json:"words_on_ink"`
	Problems []string `json:"problems,omitempty"`
	// Readers are each reader's figures on the upright pages and the
	// others.
	Readers map[string][2]pdfcheck.Figures `json:"readers,omitempty"`
	// PDFA is whether the PDF was exported as PDF/A; NotPDFA export's
	// reason when not.
	PDFA    bool   `json:"pdfa"`
	NotPDFA string `json:"not_pdfa,omitempty"`
}

// exportCheckMain is `refbench export-check ARGS`; it returns the exit code.
func exportCheckMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("refbench export-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, exportCheckUsage); fs.PrintDefaults() }
	var o exportCheckOptions
	fs.StringVar(&o.Out, "out", "", "the finished output folder `DIR` to export and check (required)")
	fs.StringVar(&o.Identity, "identity", "", "age identity `FILE` that decrypts the artifacts (encrypted batches)")
	fs.StringVar(&o.Refbatch, "refbatch", "bin/refbatch", "the refbatch binary that exports")
	fs.StringVar(&o.To, "to", "", "export into `DEST` and keep it (default: a scratch folder, removed)")
	fs.StringVar(&o.States, "state", "done,review", "the --state of the export: the documents checked")
	fs.StringVar(&o.JSON, "json", "", "also write every figure to `FILE`")
	fs.IntVar(&o.Workers, "workers", runtime.NumCPU(), "documents checked at once")
	fs.BoolVar(&o.PDFA, "pdfa", true, "export with --pdfa and check the PDF/A clauses")
	fs.BoolVar(&o.Straighten, "straighten", false, "export with --straighten: the pages it redraws are left out of the comparisons with the source, their words looked for on the PDF's own ink")
	fs.StringVar(&o.PDFJS, "pdfjs", "testdata/pdfjs", "the `DIR` of pdf.js's text.mjs and node_modules (PDFBox's Text.java is in ../pdfbox beside it)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.Out == "" || fs.NArg() != 0 || o.Workers < 1 {
		fmt.Fprintln(stderr, "refbench: error: export-check needs --out DIR and no arguments")
		return 2
	}
	ok, err := exportCheck(ctx, o, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "refbench: error: %v\n", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

func exportCheck(ctx context.Context, o exportCheckOptions, stdout, stderr io.Writer) (bool, error) {
	if tool := pdfcheck.Missing(); tool != "" {
		return false, fmt.Errorf("%s is not installed (make deps installs poppler-utils and qpdf)", tool)
	}
	var ids []age.Identity
	if o.Identity != "" {
		b, err := os.ReadFile(o.Identity)
		if err != nil {
			return false, err
		}
		if ids, err = age.ParseIdentities(bytes.NewReader(b)); err != nil {
			return false, fmt.Errorf("identity %s: %w", o.Identity, err)
		}
	}
	scratch, err := os.MkdirTemp("", "refbench-export-check-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(scratch)
	to := o.To
	if to == "" {
		to = filepath.Join(scratch, "export")
	}
	ev, err := runExport(ctx, o, to, stderr)
	if err != nil {
		return false, err
	}
	exported, refused := ev.exported, ev.refused
	fmt.Fprintf(stderr, "refbench: export-check: %d documents exported, %d refused; checking\n", len(exported), len(refused))

	var docs []*docCheck
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.Workers)
	err = audit.ReadArtifacts(layout.Place{Out: o.Out}, ids, func(_ string, a *layout.Artifact) error {
		id := a.Provenance.SourceID
		if !exported[id] {
			return gctx.Err()
		}
		d := &docCheck{SourceID: id, NotPDFA: ev.notPDFA[id]}
		docs = append(docs, d)
		pages := checkedPages(a)
		g.Go(func() error {
			out, err := os.ReadFile(filepath.Join(to, handover.ExportName(id)+".pdf"))
			if err != nil {
				return err
			}
			src, ok := sourcePrefix(out, a.Provenance.SourceSize, a.Provenance.SourceSHA256)
			if !ok {
				d.Pages = len(pages)
				d.Problems = []string{"the PDF does not begin with the source's bytes"}
				return nil
			}
			dir, err := os.MkdirTemp(scratch, "doc-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			d.Result, err = pdfcheck.CheckWith(gctx, dir, src, out, pages, pdfcheck.Options{Straightened: ev.straightened[id]})
			if err != nil {
				return fmt.Errorf("%s: %w", id, err)
			}
			d.CER, d.InkShare, d.Problems = d.Result.CER(), d.Result.InkShare(), d.Result.Problems()
			return checkReadersAndPDFA(gctx, o, d, dir, out, pages)
		})
		return gctx.Err()
	})
	// A check that failed cancels gctx: its error, not the cancellation
	// that ReadArtifacts then returns, is the one to report.
	if werr := g.Wait(); werr != nil {
		err = werr
	}
	if err != nil {
		return false, err
	}
	ok := writeExportCheck(stdout, docs, refused)
	writeReaders(stdout, docs, o.PDFA)
	if len(docs) != len(exported) {
		fmt.Fprintf(stdout, "FAIL: %d documents exported, %d of them with an artifact checked\n", len(exported), len(docs))
		ok = false
	}
	if o.JSON != "" {
		b, err := json.MarshalIndent(map[string]any{"out": o.Out, "documents": docs, "refused": refused, "ok": ok}, "", "  ")
		if err != nil {
			return false, err
		}
		if err := os.WriteFile(o.JSON, append(b, '\n'), 0o644); err != nil {
			return false, err
		}
	}
	return ok, nil
}

// sourcePrefix is the first size bytes of a searchable PDF when they hash
// to the source's SHA-256: the source itself, since the PDF is the source
// followed by an incremental update.
func sourcePrefix(out []byte, size int64, sha string) ([]byte, bool) {
	if size <= 0 || size > int64(len(out)) {
		return nil, false
	}
	sum := sha256.Sum256(out[:size])
	return out[:size], hex.EncodeToString(sum[:]) == sha
}

// exportEvents are what export said of each document: the source_ids
// exported, those refused (with their findings' kinds), those not PDF/A
// though asked (with the reason) and the pages --straighten redrew.
type exportEvents struct {
	exported     map[string]bool
	refused      map[string][]string
	notPDFA      map[string]string
	straightened map[string][]int
}

// runExport runs refbatch export --format pdf --json into to and returns
// what it said of each document.
func runExport(ctx context.Context, o exportCheckOptions, to string, stderr io.Writer) (exportEvents, error) {
	e := exportEvents{exported: map[string]bool{}, refused: map[string][]string{}, notPDFA: map[string]string{}, straightened: map[string][]int{}}
	exe, err := filepath.Abs(o.Refbatch)
	if err != nil {
		return e, err
	}
	args := []string{"export", "--quiet", "--json", "--format", "pdf", "--state", o.States, "--out", o.Out, "--to", to}
	if o.PDFA {
		args = append(args, "--pdfa")
	}
	if o.Straighten {
		args = append(args, "--straighten")
	}
	if o.Identity != "" {
		args = append(args, "--identity", o.Identity)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	var stdout, errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errBuf
	runErr := cmd.Run()
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for sc.Scan() {
		var ev handover.ExportEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Kind {
		case "exported":
			e.exported[ev.SourceID] = true
			if ev.NotPDFA != "" {
				e.notPDFA[ev.SourceID] = ev.NotPDFA
			}
			e.straightened[ev.SourceID] = ev.Straightened
		case "refused":
			for _, f := range ev.Findings {
				e.refused[ev.SourceID] = append(e.refused[ev.SourceID], f.Kind)
			}
		}
	}
	// Export exits 1 when it refused a document and 5 when a PDF asked
	// as PDF/A is not; both are figures here, not failures to run.
	var ee *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &ee) && (ee.ExitCode() == 1 && len(e.refused) > 0 || ee.ExitCode() == 5 && len(e.notPDFA) > 0)) {
		return e, fmt.Errorf("refbatch export: %v: %s", runErr, strings.TrimSpace(lastLine(errBuf.String())))
	}
	return e, nil
}

// writeExportCheck prints a line per document and the totals, and reports
// whether every document met every line.
func writeExportCheck(w io.Writer, docs []*docCheck, refused map[string][]string) bool {
	fmt.Fprintf(w, "%-24s %5s %4s %8s %15s %9s %5s %6s  %s\n", "document", "pages", "ocr", "CER", "words on ink", "72dpi", "qpdf", "images", "result")
	var t struct {
		pages, ocrPages, identical, rendered, qpdfOK, imagesOK, failed int
		straightened                                                   int
		dist, n, words, onInk, withText, withWords                     int
		cerSum, cerMax, inkSum                                         float64
	}
	inkMin := 1.0
	for _, d := range docs {
		r := d.Result
		t.pages, t.ocrPages, t.identical, t.rendered = t.pages+r.Pages, t.ocrPages+r.OCRPages, t.identical+r.IdenticalPages, t.rendered+r.RenderedPages
		t.straightened += r.Straightened
		t.dist, t.n, t.words, t.onInk = t.dist+r.CERDistance, t.n+r.CERN, t.words+r.Words, t.onInk+r.OnInk
		if r.QPDFOK() && r.Pages > 0 {
			t.qpdfOK++
		}
		if r.ImagesIdentical {
			t.imagesOK++
		}
		if r.CERN > 0 {
			t.withText++
			t.cerSum += r.CER()
			t.cerMax = max(t.cerMax, r.CER())
		}
		if r.Words > 0 {
			t.withWords++
			t.inkSum += r.InkShare()
			inkMin = min(inkMin, r.InkShare())
		}
		result := "ok"
		if len(d.Problems) > 0 {
			t.failed++
			result = "FAIL: " + strings.Join(d.Problems, "; ")
		}
		fmt.Fprintf(w, "%-24s %5d %4d %8.4f %6.4f %8s %4d/%-4d %5d %6t  %s\n", d.SourceID, r.Pages, r.OCRPages, r.CER(),
			r.InkShare(), fmt.Sprintf("%d/%d", r.OnInk, r.Words), r.IdenticalPages, r.Pages, r.QPDF, r.ImagesIdentical, result)
	}
	for id, kinds := range refused {
		t.failed++
		fmt.Fprintf(w, "%-24s refused by export: %s\n", id, strings.Join(kinds, ", "))
	}
	mean := func(sum float64, n int) float64 {
		if n == 0 {
			return 0
		}
		return sum / float64(n)
	}
	pooled := 0.0
	if t.n > 0 {
		pooled = float64(t.dist) / float64(t.n)
	}
	share := 1.0
	if t.words > 0 {
		share = float64(t.onInk) / float64(t.words)
	}
	fmt.Fprintf(w, "\n%d documents, %d pages (%d OCR'd), %d refused\n", len(docs), t.pages, t.ocrPages, len(refused))
	fmt.Fprintf(w, "pdftotext -raw CER: mean %.4f, max %.4f over %d documents with OCR text; all pages %.4f (%d/%d); line <= %.2f\n",
		mean(t.cerSum, t.withText), t.cerMax, t.withText, pooled, t.dist, t.n, pdfcheck.MaxCER)
	fmt.Fprintf(w, "words on ink: min %.4f, mean %.4f over %d documents with words; all words %.4f (%d/%d); line >= %.2f\n",
		inkMin, mean(t.inkSum, t.withWords), t.withWords, share, t.onInk, t.words, pdfcheck.MinOnInk)
	fmt.Fprintf(w, "pages identical at 72 dpi: %d of %d (%d straightened, left out); qpdf --check ok: %d of %d; pdfimages -list identical: %d of %d\n",
		t.identical, t.pages, t.straightened, t.qpdfOK, len(docs), t.imagesOK, len(docs))
	if t.failed > 0 {
		fmt.Fprintf(w, "FAIL: %d of %d documents miss a line\n", t.failed, len(docs)+len(refused))
		return false
	}
	fmt.Fprintf(w, "ok: every document meets every line\n")
	return true
}
