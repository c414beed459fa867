package pdfcheck

// Reader agreement (issue 33's acceptance 1): the text each common reader
// extracts from a searchable PDF, against the text the export wrote.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/refbatch/refbatch/batch/eval"
	"github.com/refbatch/refbatch/ocr/result"
)

// The readers, as ReaderCER names them.
const (
	ReaderPdftotext = "pdftotext"     // poppler, default (reading order) mode: desktop search, indexers
	ReaderRaw       = "pdftotext-raw" // poppler, content stream order
	ReaderMutool    = "mutool"        // MuPDF, mutool draw -F txt
	ReaderPDFJS     = "pdfjs"         // pdf.js (browsers), getTextContent
	ReaderPDFBox    = "pdfbox"        // PDFBox's PDFTextStripper (Apache Tika: Solr, Elasticsearch, DSpace), content order
	ReaderPDFBoxPos = "pdfbox-sorted" // the same, setSortByPosition(true)
)

// Readers are the readers ReaderCER measures, in report order.
var Readers = []string{ReaderPdftotext, ReaderRaw, ReaderMutool, ReaderPDFJS, ReaderPDFBox, ReaderPDFBoxPos}

// PDFJSDir is the folder holding testdata/pdfjs's text.mjs and its
// node_modules (npm install there; make deps does).
func PDFJSDir(moduleRoot string) string { return filepath.Join(moduleRoot, "testdata", "pdfjs") }

// ReaderAvailable says why reader cannot run here, "" when it can.
// pdfjsDir is the folder of PDFJSDir.
func ReaderAvailable(reader, pdfjsDir string) string {
	if reader == ReaderPDFBox || reader == ReaderPDFBoxPos {
		return pdfboxMissing(pdfjsDir)
	}
	need := map[string]string{ReaderPdftotext: "pdftotext", ReaderRaw: "pdftotext", ReaderMutool: "mutool", ReaderPDFJS: "node"}[reader]
	if _, err := exec.LookPath(need); err != nil {
		return need + " is not installed"
	}
	if reader == ReaderPDFJS {
		if _, err := os.Stat(filepath.Join(pdfjsDir, "node_modules", "pdfjs-dist")); err != nil {
			return "pdfjs-dist is not installed in " + pdfjsDir + " (npm install there)"
		}
	}
	return ""
}

// Extract returns the text reader gives of each page of the PDF at path.
// dir is a scratch folder the caller removes.
func Extract(ctx context.Context, reader, path, dir, pdfjsDir string) ([]string, error) {
	var out []byte
	var err error
	switch reader {
	case ReaderPdftotext:
		out, err = run(ctx, "pdftotext", path, "-")
	case ReaderRaw:
		out, err = run(ctx, "pdftotext", "-raw", path, "-")
	case ReaderMutool:
		return mutoolPages(ctx, path, dir)
	case ReaderPDFJS:
		abs, aerr := filepath.Abs(path)
		if aerr != nil {
			return nil, aerr
		}
		cmd := exec.CommandContext(ctx, "node", "text.mjs", abs)
		cmd.Dir = pdfjsDir
		if out, err = cmd.Output(); err != nil {
			err = fmt.Errorf("node text.mjs (pdf.js): %w", err)
		}
	case ReaderPDFBox, ReaderPDFBoxPos:
		out, err = pdfboxText(ctx, path, pdfjsDir, reader == ReaderPDFBoxPos)
	default:
		return nil, fmt.Errorf("unknown reader %q", reader)
	}
	if err != nil {
		return nil, err
	}
	pages := strings.Split(string(out), "\f")
	return pages[:len(pages)-1], nil // every page ends with a form feed
}

// mutoolPages runs mutool draw -F txt, a file per page.
func mutoolPages(ctx context.Context, path, dir string) ([]string, error) {
	pattern := filepath.Join(dir, "mutool-%d.txt")
	if _, err := run(ctx, "mutool", "draw", "-q", "-F", "txt", "-o", pattern, path); err != nil {
		return nil, err
	}
	var pages []string
	for i := 1; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf("mutool-%d.txt", i))
		b, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			return pages, nil
		}
		if err != nil {
			return nil, err
		}
		os.Remove(name)
		pages = append(pages, string(b))
	}
}

// PageCER is one reader's character error on a set of pages: Distance
// over N, and how many pages the reader gave.
type PageCER struct {
	Distance, N, Pages int
}

// Rate is Distance over N, 0 with no text.
func (c PageCER) Rate() float64 {
	if c.N == 0 {
		return 0
	}
	return float64(c.Distance) / float64(c.N)
}

// Add adds o's counts to c.
func (c *PageCER) Add(o PageCER) {
	c.Distance, c.N, c.Pages = c.Distance+o.Distance, c.N+o.N, c.Pages+o.Pages
}

// ReaderCER is reader's character error on the OCR'd pages of the PDF at
// path for which keep says yes (nil: all), against the artifact's text
// of each page: the export's .txt.
func ReaderCER(ctx context.Context, reader, path, dir, pdfjsDir string, pages []result.PageResult, keep func(int) bool) (PageCER, error) {
	texts, err := Extract(ctx, reader, path, dir, pdfjsDir)
	if err != nil {
		return PageCER{}, err
	}
	return TextCER(texts, pages, keep), nil
}

// TextCER is ReaderCER on the texts a reader has already given, one a
// page (Extract's), so that a caller that also looks at the texts
// otherwise runs the reader once.
func TextCER(texts []string, pages []result.PageResult, keep func(int) bool) PageCER {
	var c PageCER
	eachOCRPage(texts, pages, keep, func(got, want string, given bool) { c.count(eval.CER(got, want), given) })
	return c
}

// eachOCRPage calls f on each OCR'd page keep says yes to (nil: all),
// with the text a reader gave of it (given: whether it gave one; "" if
// not) and the artifact's text of it, the one selection of pages every
// measure of a reader's texts is taken on.
func eachOCRPage(texts []string, pages []result.PageResult, keep func(int) bool, f func(got, want string, given bool)) {
	for i, p := range pages {
		if p.TextSource != result.TextFromOCR || (keep != nil && !keep(i)) {
			continue
		}
		got, given := "", i < len(texts)
		if given {
			got = texts[i]
		}
		f(got, p.Text, given)
	}
}

// count adds e, the error on one page, to c; given is whether the reader
// gave that page.
func (c *PageCER) count(e eval.ErrorRate, given bool) {
	c.Distance, c.N = c.Distance+e.Distance, c.N+e.N
	if given {
		c.Pages++
	}
}

// Upright is whether page p was read as it is displayed: neither turned
// in the image nor deskewed by a tenth of a degree or more. Issue 33's
// 1% line holds on such pages; the others are reported.
func Upright(p result.PageResult) bool {
	return p.Rotation%360 == 0 && p.SkewDegrees < 0.1 && p.SkewDegrees > -0.1
}

// pdfboxJars are the jars PDFBox's text stripper needs, in PreflightDir
// (Debian's libpdfbox2-java and libcommons-logging-java).
var pdfboxJars = []string{"pdfbox2.jar", "fontbox2.jar", "commons-logging.jar"}

// pdfboxHelper is testdata/pdfbox/Text.java, the helper that runs
// PDFBox's PDFTextStripper: beside pdfjsDir (testdata/pdfjs).
func pdfboxHelper(pdfjsDir string) string {
	return filepath.Join(filepath.Dir(pdfjsDir), "pdfbox", "Text.java")
}

// pdfboxMissing says why PDFBox cannot read here, "" when it can.
func pdfboxMissing(pdfjsDir string) string {
	if why := javaMissing(pdfboxJars, "libpdfbox2-java"); why != "" {
		return why
	}
	if _, err := os.Stat(pdfboxHelper(pdfjsDir)); err != nil {
		return "the helper " + pdfboxHelper(pdfjsDir) + " is not there"
	}
	return ""
}

// pdfboxText runs the helper (Java's source launcher compiles it) on the
// PDF at path: each page's text ended by a form feed. PDFBox's warnings
// (a glyph it cannot map) go to stderr, which is dropped.
func pdfboxText(ctx context.Context, path, pdfjsDir string, sorted bool) ([]byte, error) {
	args := []string{"-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true", "-cp", classPath(pdfboxJars), pdfboxHelper(pdfjsDir)}
	if sorted {
		args = append(args, "--sort")
	}
	out, err := exec.CommandContext(ctx, "java", append(args, path)...).Output()
	if err != nil {
		return nil, fmt.Errorf("java Text.java (PDFBox): %w", err)
	}
	return out, nil
}
