package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/batch/eval"
	"github.com/refbatch/refbatch/ocr"
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
		Path:        exe,
		Env:         []string{"EXPORT_TEST_CHILD=1"},
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

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make deps installs poppler-utils and qpdf)", tool)
		}
	}
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

// exportCase is one source for the searchable PDF's acceptance test.
type exportCase struct {
	name string
	path string                       // the source, relative to the package
	dpi  int                          // OCR resolution
	edit func([]byte) ([]byte, error) // makes the source from path's bytes, or nil
}

// TestSearchablePDF is acceptance 1 and 2 of issue #16 on upright,
// /Rotate'd (with a CropBox), turned-in-the-image and skewed pages.
func TestSearchablePDF(t *testing.T) {
	need(t, "pdftotext", "pdftoppm", "pdfimages", "qpdf")
	if testing.Short() {
		t.Skip("runs Tesseract")
	}
	real := "../../../shared/corpus/real/"
	cases := []exportCase{
		{"sample upright", "../../testdata/sample/docs/R-0001.pdf", 100, nil},
		{"sample /Rotate 90 cropped", "../../testdata/sample/docs/R-0003.pdf", 150, rotateAndCrop(90)},
		{"sample /Rotate 270", "../../testdata/sample/docs/R-0005.pdf", 150, rotateAndCrop(270)},
		{"cardinal turned in the image", real + "cardinal.pdf", 150, keepPages("3", "4")},
		{"skew", real + "skew.pdf", 150, nil},
		{"rotated_skew /Rotate 90 and skewed", real + "rotated_skew.pdf", 150, nil},
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
	out, err := SearchablePDF(src, pages, meta)
	if err != nil {
		t.Fatalf("SearchablePDF: %v", err)
	}
	if again, _ := SearchablePDF(src, pages, meta); !bytes.Equal(again, out) {
		t.Errorf("a second export differs from the first")
	}
	if !bytes.HasPrefix(out, src) {
		t.Errorf("the output does not begin with the source's bytes")
	}
	dir := t.TempDir()
	in, res := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(in, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(res, out, 0o600); err != nil {
		t.Fatal(err)
	}

	// Acceptance 2: qpdf --check passes (no worse than the source, which
	// may already warn), pdfimages -list and the 72 dpi renders unchanged.
	qin, qout := qpdfCheck(in), qpdfCheck(res)
	if qout != 0 && qout != qin {
		t.Errorf("qpdf --check exits %d (the source: %d)", qout, qin)
	}
	if a, b := run(t, "pdfimages", "-list", in), run(t, "pdfimages", "-list", res); !bytes.Equal(a, b) {
		t.Errorf("pdfimages -list differs:\n%s\nafter:\n%s", a, b)
	}
	run(t, "pdftoppm", "-r", "72", in, filepath.Join(dir, "a"))
	run(t, "pdftoppm", "-r", "72", res, filepath.Join(dir, "b"))
	for i := range pages {
		name := fmt.Sprintf("-%0*d.ppm", len(strconv.Itoa(len(pages))), i+1)
		a, errA := os.ReadFile(filepath.Join(dir, "a"+name))
		b, errB := os.ReadFile(filepath.Join(dir, "b"+name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("page %d: the 72 dpi render differs from the source's (%v, %v)", i+1, errA, errB)
		}
	}

	// Acceptance 1: the text, in content-stream order, is the artifact's.
	raw := strings.Split(string(run(t, "pdftotext", "-raw", res, "-")), "\f")
	var dist, n int
	for i, p := range pages {
		if p.TextSource != ocr.TextFromOCR || i >= len(raw) {
			continue
		}
		cer := eval.CER(raw[i], p.Text)
		dist, n = dist+cer.Distance, n+cer.N
	}
	cer := 0.0
	if n > 0 {
		cer = float64(dist) / float64(n)
	}
	// pdftotext's default (layout) mode too, on pages neither turned nor
	// skewed: on the others it reorders words, as it does OCRmyPDF's.
	layout := strings.Split(string(run(t, "pdftotext", res, "-")), "\f")
	frames, err := ReadFrames(src)
	if err != nil {
		t.Fatal(err)
	}
	// In layout mode poppler reads a table column by column, so the order
	// may differ; every word must still be there (CER over the words
	// sorted), and the CER in reading order is reported.
	var ldist, ln, sdist int
	for i, p := range pages {
		if p.TextSource != ocr.TextFromOCR || p.Rotation != 0 || p.SkewDegrees != 0 || frames[i].Rotate != 0 || i >= len(layout) {
			continue
		}
		c := eval.CER(layout[i], p.Text)
		ldist, ln = ldist+c.Distance, ln+c.N
		sdist += eval.CER(sortedWords(layout[i]), sortedWords(p.Text)).Distance
	}
	if ln > 0 {
		t.Logf("upright pages, pdftotext default mode: CER %.4f (%d/%d), over the words sorted %.4f",
			float64(ldist)/float64(ln), ldist, ln, float64(sdist)/float64(ln))
		if sdist > ln/100 {
			t.Errorf("default mode: CER over sorted words %.4f on upright pages, want at most 0.01", float64(sdist)/float64(ln))
		}
	}
	onInk, words := wordsOnInk(t, dir, res, in, pages)
	share := 0.0
	if words > 0 {
		share = float64(onInk) / float64(words)
	}
	t.Logf("%d pages (rotation %v, skew %v): pdftotext -raw CER %.4f (%d/%d); words on ink %.4f (%d/%d)",
		len(pages), pageRotations(pages), pageSkews(pages), cer, dist, n, share, onInk, words)
	if cer > 0.01 {
		t.Errorf("CER %.4f, want at most 0.01", cer)
	}
	if words == 0 || share < 0.95 {
		t.Errorf("%d of %d words on ink, want at least 95%%", onInk, words)
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

func qpdfCheck(path string) int {
	err := exec.Command("qpdf", "--check", path).Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

var (
	pageRe = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	wordRe = regexp.MustCompile(`<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">`)
)

// inkDPI is the resolution the original pages are rendered at to look
// for ink under the words.
const inkDPI = 100

// wordsOnInk counts the words pdftotext -bbox finds on the OCR'd pages of
// the PDF at path, and those whose box lies on ink in the original page
// (the source at orig) rendered by pdftoppm:
// at least 3% of the box's pixels dark, in at least half of its rows and
// half of its columns, so that a box off by half a line or half a word
// does not count.
func wordsOnInk(t *testing.T, dir, path, orig string, pages []ocr.PageResult) (onInk, words int) {
	html := string(run(t, "pdftotext", "-bbox", path, "-"))
	prefix := filepath.Join(dir, "ink")
	run(t, "pdftoppm", "-r", strconv.Itoa(inkDPI), "-gray", "-png", orig, prefix)
	for i, chunk := range strings.Split(html, "<page ")[1:] {
		if i >= len(pages) || pages[i].TextSource != ocr.TextFromOCR {
			continue
		}
		name := fmt.Sprintf("%s-%0*d.png", prefix, len(strconv.Itoa(len(pages))), i+1)
		img := loadGray(t, name)
		if pageRe.FindStringSubmatch("<page "+chunk) == nil {
			t.Fatalf("page %d: no page size in pdftotext -bbox", i+1)
		}
		for _, m := range wordRe.FindAllStringSubmatch(chunk, -1) {
			var b [4]float64
			for k := range b {
				b[k], _ = strconv.ParseFloat(m[k+1], 64)
				b[k] *= inkDPI / 72.0
			}
			words++
			if onInkBox(img, b) {
				onInk++
			}
		}
	}
	return onInk, words
}

func loadGray(t *testing.T, name string) *image.Gray {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := img.(*image.Gray); ok {
		return g
	}
	b := img.Bounds()
	g := image.NewGray(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g.Set(x, y, img.At(x, y))
		}
	}
	return g
}

// onInkBox: see wordsOnInk. Ink is darker than 50% gray.
func onInkBox(img *image.Gray, b [4]float64) bool {
	r := image.Rect(int(b[0]), int(b[1]), int(b[2]+0.999), int(b[3]+0.999)).Intersect(img.Bounds())
	if r.Empty() {
		return false
	}
	rows, cols := make([]bool, r.Dy()), make([]bool, r.Dx())
	dark := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.GrayAt(x, y).Y < 128 {
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

func sortedWords(s string) string {
	w := strings.Fields(s)
	slices.Sort(w)
	return strings.Join(w, " ")
}
