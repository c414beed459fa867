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
	"image"
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
	// ImagesIdentical is whether pdfimages -list gives the same listing.
	ImagesIdentical bool
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
	if r.RenderedPages != r.Pages || r.IdenticalPages != r.RenderedPages {
		p = append(p, fmt.Sprintf("%d of %d pages render identically at 72 dpi (%d rendered)", r.IdenticalPages, r.Pages, r.RenderedPages))
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
	r := Result{Pages: len(pages), Prefix: bytes.HasPrefix(out, src)}
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
	r.ImagesIdentical = bytes.Equal(a, b)
	if err := r.renders(ctx, dir, in, res); err != nil {
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
	r.OnInk, r.Words, err = wordsOnInk(ctx, dir, res, in, pages)
	return r, err
}

// renders compares the 72 dpi renders of the source and the PDF, page by
// page.
func (r *Result) renders(ctx context.Context, dir, in, res string) error {
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
		if errA == nil && errB == nil && bytes.Equal(x, y) {
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

var wordRe = regexp.MustCompile(`<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">`)

// wordsOnInk counts the words pdftotext -bbox finds on the OCR'd pages of
// the PDF at path, and those whose box lies on ink in the source at orig
// rendered by pdftoppm at InkDPI: at least 3% of the box's pixels ink, in
// at least half of its rows and half of its columns, so that a box off by
// half a line or half a word does not count.
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
		for _, m := range wordRe.FindAllStringSubmatch(chunk, -1) {
			var b [4]float64
			for k := range b {
				b[k], _ = strconv.ParseFloat(m[k+1], 64)
				b[k] *= InkDPI / 72.0
			}
			words++
			if OnInkBox(img, b) {
				onInk++
			}
		}
	}
	return onInk, words, nil
}

// loadGray reads the binary PGM (P5, 8 bits) pdftoppm -gray writes:
// a PNG would cost pdftoppm five times the CPU to compress, and this
// package as much again to decompress, for the same pixels.
func loadGray(name string) (*image.Gray, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	// The header: P5, width, height and the largest value, apart by
	// whitespace, the last followed by one whitespace byte and then the
	// pixels (pdftoppm writes no comments).
	var fields [4]string
	rest := data
	for i := range fields {
		rest = bytes.TrimLeft(rest, " \t\r\n")
		end := bytes.IndexAny(rest, " \t\r\n")
		if end < 0 {
			return nil, fmt.Errorf("%s: not a PGM", name)
		}
		fields[i], rest = string(rest[:end]), rest[end+1:]
	}
	w, errW := strconv.Atoi(fields[1])
	h, errH := strconv.Atoi(fields[2])
	if fields[0] != "P5" || fields[3] != "255" || errW != nil || errH != nil || w < 1 || h < 1 || len(rest) != w*h {
		return nil, fmt.Errorf("%s: not an 8-bit binary PGM", name)
	}
	return &image.Gray{Pix: rest, Stride: w, Rect: image.Rect(0, 0, w, h)}, nil
}

// MinInkContrast and MaxInkContrast bound how much darker than the paper
// around it a pixel must be to count as ink (of 255 gray levels): more
// than a scan's grain, and no more than the edge of a stroke is.
const (
	MinInkContrast = 16
	MaxInkContrast = 32
)

// inkLevel is the gray level under which a pixel near the box r counts as
// ink. It looks at r grown by its height on every side (the box's word and
// its neighbours, and paper around them): the paper is its 90th
// percentile, the ink its 2nd, and the level lies halfway between, but
// at least MinInkContrast and at most MaxInkContrast under the paper. A
// level of the window's own, so that faint print (grey 200 on white), a
// faded scan (ink at 140 on paper at 170) and bold print on the same page
// all count, where one level for the whole page takes only the darkest
// print for ink.
func inkLevel(img *image.Gray, r image.Rectangle) int {
	m := r.Dy()
	w := image.Rect(r.Min.X-m, r.Min.Y-m, r.Max.X+m, r.Max.Y+m).Intersect(img.Bounds())
	var hist [256]int
	for y := w.Min.Y; y < w.Max.Y; y++ {
		for _, v := range img.Pix[img.PixOffset(w.Min.X, y):img.PixOffset(w.Max.X, y)] {
			hist[v]++
		}
	}
	percentile := func(p int) int {
		rank, n := w.Dx()*w.Dy()*p/100, 0
		for v, c := range hist {
			if n += c; n > rank {
				return v
			}
		}
		return 255
	}
	paper, ink := percentile(90), percentile(2)
	return paper - min(MaxInkContrast, max(MinInkContrast, (paper-ink)/2))
}

// OnInkBox reports whether the box b (xMin, yMin, xMax, yMax in pixels of
// img) lies on ink, as wordsOnInk counts it: pixels darker than the level
// of the ink around it (inkLevel).
func OnInkBox(img *image.Gray, b [4]float64) bool {
	r := image.Rect(int(b[0]), int(b[1]), int(b[2]+0.999), int(b[3]+0.999)).Intersect(img.Bounds())
	if r.Empty() {
		return false
	}
	ink := inkLevel(img, r)
	rows, cols := make([]bool, r.Dy()), make([]bool, r.Dx())
	dark := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if int(img.GrayAt(x, y).Y) < ink {
				dark++
				rows[y-r.Min.Y], cols[x-r.Min.X] = true, true
			}
		}
	}
	count := func(v []bool) (n int) {
		for _, b := range v {
			if b {
				n++
			}
		}
		return n
	}
	return float64(dark) >= 0.03*float64(r.Dx()*r.Dy()) && 2*count(rows) >= len(rows) && 2*count(cols) >= len(cols)
}
