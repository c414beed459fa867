// Package pdfcheck measures a searchable PDF against its source and the
// pages it was made from, with the tools a reader would use: issue 16's
// acceptance 1 and 2.
//
//   - text: `pdftotext -raw` of each OCR'd page against the artifact's text
//     of that page, as a character error rate (at most [MaxCER]);
//   - position: the words `pdftotext -bbox` finds on the OCR'd pages, and
//     the share of them whose box lies on ink in the source rendered by
//     `pdftoppm` (at least [MinOnInk]);
//   - the source untouched: the output begins with the source's bytes,
//     every page renders identically at 72 dpi, `pdfimages -list` is
//     unchanged and `qpdf --check` passes (or warns no worse than on the
//     source).
//
// Issue 33's and 50's lines are in readers.go (each reader's text:
// Extract, and its character error: ReaderCER), phrases.go (the share of
// the artifact's phrases a reader finds, and its character error over
// sorted words: Measure) and pdfa.go (the PDF/A-2b clauses: PDFA).
//
// batch/export's TestSearchablePDF runs it on a few hand-picked pages and
// `refbench export-check` over every document of a finished batch. It
// runs the poppler-utils and qpdf programs named in [Tools]; it logs
// nothing, and its [Result] holds counts only, never text.
package pdfcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/refbatch/refbatch/batch/eval"
	"github.com/refbatch/refbatch/ocr/result"
)

// The acceptance lines.
const (
	// MaxCER is the highest pdftotext -raw character error rate allowed.
	MaxCER = 0.01
	// MinOnInk is the lowest share of words allowed off the source's ink.
	MinOnInk = 0.95
	// InkDPI is the resolution the source is rendered at to look for ink.
	InkDPI = 200
)

// Tools are the programs Check runs.
var Tools = []string{"pdftotext", "pdftoppm", "pdfimages", "qpdf"}

// Missing returns the first of Tools that is not installed, or "".
func Missing() string {
	for _, t := range Tools {
		if _, err := exec.LookPath(t); err != nil {
			return t
		}
	}
	return ""
}

// Result is what Check measured on one PDF. It holds counts, no text.
type Result struct {
	// Pages is the number of pages of the artifact; OCRPages those whose
	// text came from OCR, the ones the PDF adds a text layer to.
	Pages, OCRPages int
	// Prefix is whether the PDF begins with the source's bytes.
	Prefix bool
	// CERDistance over CERN is the pdftotext -raw character error rate
	// of the OCR'd pages against the artifact's text; RawPages is how
	// many pages pdftotext -raw gave.
	CERDistance, CERN, RawPages int
	// OnInk of Words (pdftotext -bbox, OCR'd pages) lie on the source's ink.
	Words, OnInk int
	// RenderedPages are the pages pdftoppm rendered of the source, and
	// IdenticalPages how many of the PDF's renders at 72 dpi equal them.
	RenderedPages, IdenticalPages int
	// QPDFSource and QPDF are the exit codes of qpdf --check (0 clean,
	// 3 warnings).
	QPDFSource, QPDF int
	// ImagesIdentical is whether pdfimages -list gives the same listing
	// (of the pages not straightened, with Options.Straightened).
	ImagesIdentical bool
	// Straightened counts the pages export --straighten redrew
	// (Options.Straightened), which need not render as the source's.
	Straightened int
}

// Options say what Check is to expect of a PDF.
type Options struct {
	// Straightened are the pages (1-based) export --straighten redrew:
	// their renders and images are new, so they are left out of the
	// comparisons with the source, and their words are looked for on
	// the PDF's own ink.
	Straightened []int
}

// CER is the character error rate of pdftotext -raw, 0 without OCR text.
func (r Result) CER() float64 {
	if r.CERN == 0 {
		return 0
	}
	return float64(r.CERDistance) / float64(r.CERN)
}

// InkShare is the share of words on ink, 1 when there are no words.
func (r Result) InkShare() float64 {
	if r.Words == 0 {
		return 1
	}
	return float64(r.OnInk) / float64(r.Words)
}

// QPDFOK is whether qpdf --check passes, or warns no worse than on the
// source (a scanner's PDF may already warn).
func (r Result) QPDFOK() bool { return r.QPDF == 0 || r.QPDF == r.QPDFSource }

// Problems lists the lines the PDF does not meet; none when it passes.
// A document whose OCR'd pages have text but whose PDF gives no word to
// pdftotext -bbox fails: its layer is missing.
func (r Result) Problems() []string {
	var p []string
	if !r.Prefix {
		p = append(p, "the PDF does not begin with the source's bytes")
	}
	if r.CER() > MaxCER {
		p = append(p, fmt.Sprintf("pdftotext -raw CER %.4f (%d/%d), want at most %.2f", r.CER(), r.CERDistance, r.CERN, MaxCER))
	}
	if r.RawPages < r.Pages {
		p = append(p, fmt.Sprintf("pdftotext -raw gave %d pages of %d", r.RawPages, r.Pages))
	}
	if r.CERN > 0 && r.Words == 0 {
		p = append(p, "no word on the OCR'd pages (pdftotext -bbox)")
	} else if r.InkShare() < MinOnInk {
		p = append(p, fmt.Sprintf("%d of %d words on ink (%.4f), want at least %.2f", r.OnInk, r.Words, r.InkShare(), MinOnInk))
	}
	if r.RenderedPages != r.Pages || r.IdenticalPages+r.Straightened != r.RenderedPages {
		p = append(p, fmt.Sprintf("%d of %d pages render identically at 72 dpi (%d rendered, %d straightened)", r.IdenticalPages, r.Pages, r.RenderedPages, r.Straightened))
	}
	if !r.QPDFOK() {
		p = append(p, fmt.Sprintf("qpdf --check exits %d (the source: %d)", r.QPDF, r.QPDFSource))
	}
	if !r.ImagesIdentical {
		p = append(p, "pdfimages -list differs from the source's")
	}
	return p
}

// Check measures the searchable PDF out against its source src and the
// artifact's pages it was made from. It writes into dir, a scratch folder
// the caller removes. An error is a tool that could not run, not a line
// that was missed: those are in the Result's Problems.
func Check(ctx context.Context, dir string, src, out []byte, pages []result.PageResult) (Result, error) {
	return CheckWith(ctx, dir, src, out, pages, Options{})
}

// CheckWith is Check expecting what o says.
func CheckWith(ctx context.Context, dir string, src, out []byte, pages []result.PageResult, o Options) (Result, error) {
	r := Result{Pages: len(pages), Prefix: bytes.HasPrefix(out, src), Straightened: len(o.Straightened)}
	for _, p := range pages {
		if p.TextSource == result.TextFromOCR {
			r.OCRPages++
		}
	}
	in, res := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(in, src, 0o600); err != nil {
		return r, err
	}
	if err := os.WriteFile(res, out, 0o600); err != nil {
		return r, err
	}
	r.QPDFSource, r.QPDF = qpdfCheck(ctx, in), qpdfCheck(ctx, res)
	a, err := run(ctx, "pdfimages", "-list", in)
	if err != nil {
		return r, err
	}
	b, err := run(ctx, "pdfimages", "-list", res)
	if err != nil {
		return r, err
	}
	r.ImagesIdentical = slices.Equal(imageList(a, o.Straightened), imageList(b, o.Straightened))
	if err := r.renders(ctx, dir, in, res, o.Straightened); err != nil {
		return r, err
	}
	raw, err := run(ctx, "pdftotext", "-raw", res, "-")
	if err != nil {
		return r, err
	}
	texts := strings.Split(string(raw), "\f")
	r.RawPages = len(texts) - 1 // pdftotext ends every page with a form feed
	for i, p := range pages {
		if p.TextSource != result.TextFromOCR || i >= len(texts) {
			continue
		}
		c := eval.CER(texts[i], p.Text)
		r.CERDistance, r.CERN = r.CERDistance+c.Distance, r.CERN+c.N
	}
	// A straightened page's ink is its own; the others render as the
	// source's.
	ink := in
	if len(o.Straightened) > 0 {
		ink = res
	}
	r.OnInk, r.Words, err = wordsOnInk(ctx, dir, res, ink, pages)
	return r, err
}

// imageList is pdfimages -list's listing without its header, each image's
// running number, and the images of the pages left out.
func imageList(list []byte, leftOut []int) []string {
	var out []string
	for k, line := range strings.Split(string(list), "\n") {
		f := strings.Fields(line)
		if k < 2 || len(f) < 2 {
			continue
		}
		if n, err := strconv.Atoi(f[0]); err == nil && slices.Contains(leftOut, n) {
			continue
		}
		out = append(out, strings.Join(append(f[:1:1], f[2:]...), " "))
	}
	return out
}

// renders compares the 72 dpi renders of the source and the PDF, page by
// page.
func (r *Result) renders(ctx context.Context, dir, in, res string, leftOut []int) error {
	a, err := render(ctx, in, filepath.Join(dir, "a"), "72")
	if err != nil {
		return err
	}
	b, err := render(ctx, res, filepath.Join(dir, "b"), "72")
	if err != nil {
		return err
	}
	r.RenderedPages = len(a)
	for i := range a {
		if i >= len(b) {
			break
		}
		x, errA := os.ReadFile(a[i])
		y, errB := os.ReadFile(b[i])
		if errA == nil && errB == nil && bytes.Equal(x, y) && !slices.Contains(leftOut, i+1) {
			r.IdenticalPages++
		}
		os.Remove(a[i])
		os.Remove(b[i])
	}
	return nil
}

// render runs pdftoppm on path into files named prefix-N and returns
// them in page order (pdftoppm pads N to one width, so the names sort).
func render(ctx context.Context, path, prefix, dpi string, extra ...string) ([]string, error) {
	if _, err := run(ctx, "pdftoppm", append(append([]string{"-r", dpi}, extra...), path, prefix)...); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(prefix + "-*")
	slices.Sort(files)
	return files, err
}

func qpdfCheck(ctx context.Context, path string) int {
	err := exec.CommandContext(ctx, "qpdf", "--check", path).Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return out, nil
}

var wordRe = regexp.MustCompile(`<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">([^<]*)</word>`)

// wordsOnInk counts the words pdftotext -bbox finds on the OCR'd pages of
// the PDF at path, and those whose box lies on ink in the source at orig
// rendered by pdftoppm at InkDPI: at least 3% of the box's pixels ink, in
// at least half of its rows and half of its columns, so that a box off by
// half a line or half a word does not count. A word of white space only
// is no word: the bridge the layer draws over a wide gap of a line
// (batch/export's pdfbridge.go), which lies on the paper between two
// words by design.
func wordsOnInk(ctx context.Context, dir, path, orig string, pages []result.PageResult) (onInk, words int, err error) {
	html, err := run(ctx, "pdftotext", "-bbox", path, "-")
	if err != nil {
		return 0, 0, err
	}
	imgs, err := render(ctx, orig, filepath.Join(dir, "ink"), strconv.Itoa(InkDPI), "-gray")
	if err != nil {
		return 0, 0, err
	}
	for i, chunk := range strings.Split(string(html), "<page ")[1:] {
		if i >= len(pages) || pages[i].TextSource != result.TextFromOCR {
			continue
		}
		if i >= len(imgs) {
			return onInk, words, fmt.Errorf("pdftoppm rendered %d pages, pdftotext found page %d", len(imgs), i+1)
		}
		img, err := loadGray(imgs[i])
		if err != nil {
			return onInk, words, err
		}
		for _, b := range bboxWords(chunk, InkDPI/72.0) {
			words++
			if OnInkBox(img, b) {
				onInk++
			}
		}
	}
	return onInk, words, nil
}

// bboxWords are the boxes of the words of a page of pdftotext -bbox's
// output, times scale, those of white space only left out.
func bboxWords(page string, scale float64) [][4]float64 {
	var boxes [][4]float64
	for _, m := range wordRe.FindAllStringSubmatch(page, -1) {
		if strings.TrimSpace(m[5]) == "" {
			continue
		}
		var b [4]float64
		for k := range b {
			b[k], _ = strconv.ParseFloat(m[k+1], 64)
			b[k] *= scale
		}
		boxes = append(boxes, b)
	}
	return boxes
}
