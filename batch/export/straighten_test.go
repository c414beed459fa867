package export

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/batch/export/pdfcheck"
)

// TestStraighten is export --straighten on a small page skewed by two
// degrees, read at 100 dpi: straightened, default pdftotext finds at
// least MinPhrasesTurned of its phrases, the words lie on the PDF's own
// ink, qpdf --check and the PDF/A clauses pass; without it, the page
// renders as the source's, pixel for pixel.
func TestStraighten(t *testing.T) {
	if tool := pdfcheck.Missing(); tool != "" {
		t.Skipf("%s is not installed (make deps installs poppler-utils and qpdf)", tool)
	}
	if testing.Short() {
		t.Skip("runs Tesseract")
	}
	t.Parallel()
	// The sample's one page of prose, no table: poppler's default mode
	// reads a table column by column on an upright page too.
	orig, err := os.ReadFile("../../testdata/sample/docs/R-0004.pdf")
	if err != nil {
		t.Fatal(err)
	}
	src, err := skewPages(orig, 2)
	if err != nil {
		t.Fatal(err)
	}
	pages := readPages(t, src, 100)
	if math.Abs(pages[0].SkewDegrees) < 1 {
		t.Fatalf("the page was not deskewed (skew %.2f°): nothing to straighten", pages[0].SkewDegrees)
	}
	sum := sha256.Sum256(src)
	meta := Provenance{SourceSHA256: hex.EncodeToString(sum[:]), ArtifactSHA256: strings.Repeat("ab", 32), Producer: "refbatch test"}
	for _, straight := range []bool{false, true} {
		opt := PDFOptions{PDFA: true, Straighten: straight}
		r, err := searchable(src, pages, meta, &opt)
		if err != nil {
			t.Fatalf("straighten %v: %v", straight, err)
		}
		if again, _ := searchable(src, pages, meta, &opt); !bytes.Equal(again.PDF, r.PDF) {
			t.Errorf("straighten %v: a second export differs from the first", straight)
		}
		if want := map[bool]int{false: 0, true: 1}[straight]; len(r.Straightened) != want {
			t.Fatalf("straighten %v: pages straightened %v, want %d", straight, r.Straightened, want)
		}
		if r.NotPDFA != "" {
			t.Errorf("straighten %v: not PDF/A: %s", straight, r.NotPDFA)
		} else if p := pdfcheck.PDFA(r.PDF); len(p) > 0 {
			t.Errorf("straighten %v: PDF/A clauses broken: %v", straight, p)
		}
		dir := t.TempDir()
		res, err := pdfcheck.CheckWith(context.Background(), dir, src, r.PDF, pages, pdfcheck.Options{Straightened: r.Straightened})
		if err != nil {
			t.Fatal(err)
		}
		// Problems covers qpdf --check, the 72 dpi renders of the pages
		// not straightened (all, by default), pdfimages and words on ink.
		for _, p := range res.Problems() {
			t.Errorf("straighten %v: %s", straight, p)
		}
		if !straight && (res.IdenticalPages != 1 || !res.ImagesIdentical) {
			t.Errorf("by default the page renders as the source's: %d identical, images the same %v", res.IdenticalPages, res.ImagesIdentical)
		}
		texts, err := pdfcheck.Extract(context.Background(), pdfcheck.ReaderPdftotext, filepath.Join(dir, "out.pdf"), dir, "")
		if err != nil {
			t.Fatal(err)
		}
		f := pdfcheck.Measure(texts, pages, nil)
		t.Logf("straighten %v: pdftotext phrases %.4f (%d/%d), CER over sorted words %.4f, CER %.4f; words on ink %d/%d",
			straight, f.Phrases.Rate(), f.Phrases.Found, f.Phrases.Of, f.Sorted.Rate(), f.CER.Rate(), res.OnInk, res.Words)
		if straight && f.Phrases.Rate() < pdfcheck.MinPhrasesTurned {
			t.Errorf("straightened, pdftotext finds %.4f of the phrases, want at least %.2f", f.Phrases.Rate(), pdfcheck.MinPhrasesTurned)
		}
	}
}

// skewPages draws every page of src turned by deg degrees
// (counterclockwise) about its centre, as a scanner that fed the sheet
// askew would: the page's content between a rotation and its end, by an
// incremental update.
func skewPages(src []byte, deg float64) ([]byte, error) {
	ctx, err := readPDF(src)
	if err != nil {
		return nil, err
	}
	prev, xrefStream, err := lastXRef(src)
	if err != nil {
		return nil, err
	}
	u := newUpdate(src, ctx.MaxObjNr+1)
	sin, cos := math.Sincos(deg * math.Pi / 180)
	for n := 1; n <= ctx.PageCount; n++ {
		d, ref, attrs, err := ctx.PageDict(n, false)
		if err != nil {
			return nil, err
		}
		contents, err := pageContents(ctx, d)
		if err != nil {
			return nil, err
		}
		mb := attrs.MediaBox
		cx, cy := (mb.LL.X+mb.UR.X)/2, (mb.LL.Y+mb.UR.Y)/2
		turn := Matrix{cos, sin, -sin, cos, cx - cos*cx + sin*cy, cy - sin*cx - cos*cy}
		var open bytes.Buffer
		open.WriteString("q")
		for _, v := range turn {
			open.WriteString(" " + num(v))
		}
		open.WriteString(" cm\n")
		page := types.Dict{}
		for k, v := range d {
			page[k] = v
		}
		page["Contents"] = append(append(types.Array{u.stream(types.Dict{}, open.Bytes())}, contents...), u.stream(types.Dict{}, []byte("Q\n")))
		u.object(ref.ObjectNumber.Value(), ref.GenerationNumber.Value(), page.PDFString())
	}
	trailer := types.Dict{"Root": *ctx.Root, "Prev": types.Integer(prev)}
	if ctx.ID != nil {
		trailer["ID"] = ctx.ID
	}
	return u.finish(trailer, xrefStream), nil
}
