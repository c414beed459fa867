package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/batch/export/pdfcheck"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/page"
)

// TestMain doubles the test binary as the OCR worker child and as the
// export's PDF child.
func TestMain(m *testing.M) {
	switch os.Getenv("EXPORT_TEST_CHILD") {
	case "1":
		os.Exit(ocr.ServeMain())
	case "render":
		os.Exit(ServeMain())
	}
	api.DisableConfigDir()
	os.Exit(m.Run())
}

// readPages OCRs every page of src with the real worker at dpi.
func readPages(t *testing.T, src []byte, dpi int) []ocr.PageResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := ocr.StartWorker(ctx, ocr.WorkerConfig{
		Command:     child.Command{Path: exe, Env: []string{"EXPORT_TEST_CHILD=1"}},
		Policy:      page.Policy{Lang: "eng", DPI: dpi, MinDPI: dpi, MaxPagePixels: 50e6},
		MemoryLimit: ocr.DefaultMemoryLimit,
	})
	if err != nil {
		t.Skipf("no OCR worker: %v", err)
	}
	defer w.Close()
	n, err := w.Open(ctx, src)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	pages := make([]ocr.PageResult, n)
	for i := range n {
		if pages[i], err = w.Page(ctx, i, dpi, 2*time.Minute); err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
	}
	return pages
}

// exportCase is one source for the searchable PDF's acceptance test.
type exportCase struct {
	name string
	path string                       // the source, relative to the package
	dpi  int                          // OCR resolution
	edit func([]byte) ([]byte, error) // makes the source from path's bytes, or nil
}

// TestSearchablePDF is acceptance 1 and 2 of issue #16 on upright,
// /Rotate'd (with a CropBox), turned-in-the-image and skewed pages, and on
// sources whose cross-reference section is damaged.
func TestSearchablePDF(t *testing.T) {
	if tool := pdfcheck.Missing(); tool != "" {
		t.Skipf("%s is not installed (make deps installs poppler-utils and qpdf)", tool)
	}
	if testing.Short() {
		t.Skip("runs Tesseract")
	}
	real := "../../../shared/corpus/real/"
	if d := os.Getenv("REFBATCH_SHARED_DIR"); d != "" {
		real = filepath.Join(d, "corpus", "real") + "/"
	}
	cases := []exportCase{
		{"sample upright", "../../testdata/sample/docs/R-0001.pdf", 100, nil},
		{"sample /Rotate 90 cropped", "../../testdata/sample/docs/R-0003.pdf", 150, rotateAndCrop(90)},
		{"sample /Rotate 270", "../../testdata/sample/docs/R-0005.pdf", 150, rotateAndCrop(270)},
		{"cardinal turned in the image", real + "cardinal.pdf", 150, keepPages("3", "4")},
		{"skew", real + "skew.pdf", 150, nil},
		{"rotated_skew /Rotate 90 and skewed", real + "rotated_skew.pdf", 150, nil},
		{"eval turned 180° in the image and skewed", "../../testdata/eval/docs/R-0010.pdf", 150, nil},
		{"eval xref offsets off", "../../testdata/eval/docs/R-0031.pdf", 150, nil},
		{"eval startxref into an object", "../../testdata/eval/docs/R-0032.pdf", 150, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(tc.path)
			if errors.Is(err, os.ErrNotExist) {
				t.Skipf("%s is absent", tc.path)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				if src, err = tc.edit(src); err != nil {
					t.Fatal(err)
				}
			}
			checkSearchable(t, src, readPages(t, src, tc.dpi))
		})
	}
}

func checkSearchable(t *testing.T, src []byte, pages []ocr.PageResult) {
	srcSum := sha256.Sum256(src)
	meta := Provenance{SourceSHA256: hex.EncodeToString(srcSum[:]), ArtifactSHA256: strings.Repeat("ab", 32),
		Engines: map[string]string{"tesseract": "5", "mupdf": "1"}, PolicyVersion: "test", Producer: "refbatch test"}
	// As PDF/A-2b (issue 33): the checks below hold of it too.
	opt := PDFOptions{PDFA: true}
	out, notPDFA, err := SearchablePDF(src, pages, meta, opt)
	if err != nil {
		t.Fatalf("SearchablePDF: %v", err)
	}
	if again, _, _ := SearchablePDF(src, pages, meta, opt); !bytes.Equal(again, out) {
		t.Errorf("a second export differs from the first")
	}
	if notPDFA != "" {
		t.Logf("not PDF/A: %s", notPDFA)
	} else if p := pdfcheck.PDFA(out); len(p) > 0 {
		t.Errorf("PDF/A clauses broken: %v", p)
	}
	// Acceptance 1 and 2, as refbench export-check measures them over a
	// whole batch.
	dir := t.TempDir()
	r, err := pdfcheck.Check(context.Background(), dir, src, out, pages)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages (rotation %v, skew %v): pdftotext -raw CER %.4f (%d/%d); words on ink %.4f (%d/%d)",
		len(pages), pageRotations(pages), pageSkews(pages), r.CER(), r.CERDistance, r.CERN, r.InkShare(), r.OnInk, r.Words)
	for _, p := range r.Problems() {
		t.Error(p)
	}
	if r.Words == 0 {
		t.Errorf("no word on ink to measure")
	}

	checkReaders(t, dir, src, pages)
}

// checkReaders is issue 33's and issue 50's acceptance on the PDF
// checkSearchable wrote. On the upright pages (neither turned nor
// skewed, no /Rotate) every reader finds at least pdfcheck.MinPhrases of
// the artifact's phrases and has every word (character error over the
// words sorted at most 1%), and each but poppler's default mode, which
// reads a table column by column, reads in order (CER at most 1%). The
// figures on the other pages are logged (refbench export-check holds
// them to their lines over a batch). Each reader reads the PDF once
// (pdf.js and PDFBox cost most of a CPU-second a start): the upright
// pages and the others are counted from the same text.
func checkReaders(t *testing.T, dir string, src []byte, pages []ocr.PageResult) {
	res := filepath.Join(dir, "out.pdf")
	frames, err := ReadFrames(src)
	if err != nil {
		t.Fatal(err)
	}
	upright := func(i int) bool { return pdfcheck.Upright(pages[i]) && frames[i].Rotate == 0 }
	read := false
	for _, reader := range pdfcheck.Readers {
		if why := pdfcheck.ReaderAvailable(reader, pdfcheck.PDFJSDir("../..")); why != "" {
			t.Logf("%s: skipped, %s", reader, why)
			continue
		}
		texts, err := pdfcheck.Extract(context.Background(), reader, res, dir, pdfcheck.PDFJSDir("../.."))
		if err != nil {
			t.Fatal(err)
		}
		read = read || reader == pdfcheck.ReaderPdftotext
		for _, up := range []bool{true, false} {
			f := pdfcheck.Measure(texts, pages, func(i int) bool { return upright(i) == up })
			if f.CER.N == 0 {
				continue
			}
			t.Logf("%s, upright %v: phrases %.4f (%d/%d), CER over sorted words %.4f, CER %.4f (%d/%d)", reader, up,
				f.Phrases.Rate(), f.Phrases.Found, f.Phrases.Of, f.Sorted.Rate(), f.CER.Rate(), f.CER.Distance, f.CER.N)
			if !up {
				continue
			}
			if f.Phrases.Rate() < pdfcheck.MinPhrases {
				t.Errorf("%s: %.4f of the phrases on upright pages, want at least %.2f", reader, f.Phrases.Rate(), pdfcheck.MinPhrases)
			}
			if f.Sorted.Rate() > pdfcheck.MaxSortedCER {
				t.Errorf("%s: CER over sorted words %.4f on upright pages, want at most %.2f", reader, f.Sorted.Rate(), pdfcheck.MaxSortedCER)
			}
			if reader != pdfcheck.ReaderPdftotext && f.CER.Rate() > pdfcheck.MaxCER {
				t.Errorf("%s: CER %.4f on upright pages, want at most %.2f", reader, f.CER.Rate(), pdfcheck.MaxCER)
			}
		}
	}
	if !read { // pdftotext is one of pdfcheck.Tools: Check has run it
		t.Fatal("pdftotext did not read the PDF")
	}
}

func pageRotations(pages []ocr.PageResult) []int {
	var out []int
	for _, p := range pages {
		out = append(out, p.Rotation)
	}
	return out
}

func pageSkews(pages []ocr.PageResult) []float64 {
	var out []float64
	for _, p := range pages {
		out = append(out, p.SkewDegrees)
	}
	return out
}

// rotateAndCrop returns an edit that gives every page /Rotate deg and a
// CropBox 20 points in from the MediaBox, to test both.
func rotateAndCrop(deg int) func([]byte) ([]byte, error) {
	return func(src []byte) ([]byte, error) {
		ctx, err := readPDF(src)
		if err != nil {
			return nil, err
		}
		for i := 1; i <= ctx.PageCount; i++ {
			d, _, attrs, err := ctx.PageDict(i, false)
			if err != nil {
				return nil, err
			}
			mb := attrs.MediaBox
			d["Rotate"] = types.Integer(deg)
			d["CropBox"] = types.NewNumberArray(mb.LL.X+20, mb.LL.Y+20, mb.UR.X-20, mb.UR.Y-20)
		}
		var buf bytes.Buffer
		if err := api.WriteContext(ctx, &buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
}

// keepPages returns an edit that keeps only the pages named.
func keepPages(pages ...string) func([]byte) ([]byte, error) {
	return func(src []byte) ([]byte, error) {
		var buf bytes.Buffer
		err := api.Collect(bytes.NewReader(src), &buf, pages, nil)
		return buf.Bytes(), err
	}
}
