package export

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/batch/export/pdfcheck"
)

// TestPDFA: --pdfa's incremental update passes the PDF/A checker, keeps
// the source's bytes and renders its pages identically; the metadata says
// the title, producer and run's time in both Info and XMP. A source that
// cannot conform without a rewrite gets the plain PDF and a reason, and
// the checker fails that PDF (and the plain one) as PDF/A.
func TestPDFA(t *testing.T) {
	t.Parallel()
	if _, err := glyphlessTTF(); err != nil {
		t.Skip(err)
	}
	src, pages := samplePages(t)
	meta := testProvenance()
	meta.SourceID, meta.ReadAt = "R-0001", time.Date(2026, 12, 2, 8, 30, 0, 0, time.UTC)
	out, notPDFA, err := SearchablePDF(src, pages, meta, PDFOptions{PDFA: true})
	if err != nil || notPDFA != "" {
		t.Fatalf("SearchablePDF: %v, not PDF/A: %q", err, notPDFA)
	}
	if p := pdfcheck.PDFA(out); len(p) > 0 {
		t.Errorf("PDF/A clauses broken: %v", p)
	}
	if !bytes.HasPrefix(out, src) {
		t.Errorf("the PDF/A does not begin with the source")
	}
	for _, want := range []string{"<pdfaid:part>2</pdfaid:part>", "<dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">R-0001</rdf:li>",
		"<xmp:CreateDate>2026-12-02T08:30:00Z</xmp:CreateDate>", "/CreationDate(D:20261202083000Z)", "/Title(R-0001)", "/GTS_PDFA1"} {
		if !bytes.Contains(out[len(src):], []byte(want)) {
			t.Errorf("the update has no %s", want)
		}
	}
	if pdfcheck.Missing() == "" {
		r, err := pdfcheck.Check(context.Background(), t.TempDir(), src, out, pages)
		if err != nil {
			t.Fatal(err)
		}
		if r.IdenticalPages != r.Pages || !r.QPDFOK() || !r.ImagesIdentical {
			t.Errorf("%d of %d pages identical, qpdf %d, images identical %v", r.IdenticalPages, r.Pages, r.QPDF, r.ImagesIdentical)
		}
	}

	// The plain searchable PDF is no PDF/A, and the checker says so.
	plain, _, err := SearchablePDF(src, pages, meta, PDFOptions{Title: "another title"})
	if err != nil {
		t.Fatal(err)
	}
	if p := pdfcheck.PDFA(plain); !strings.Contains(strings.Join(p, "\n"), "6.6.4") || !strings.Contains(strings.Join(p, "\n"), "6.2.3") {
		t.Errorf("the plain PDF passes as PDF/A: %v", p)
	}
	if !bytes.Contains(plain[len(src):], []byte("/Title(another title)")) {
		t.Errorf("the title asked for is not the PDF's")
	}

	// A header without its binary comment (same length, so the offsets
	// hold) cannot be fixed by an update.
	bad := bytes.Clone(src)
	copy(bad[bytes.IndexByte(bad, '\n')+1:], "%abcd")
	out, notPDFA, err = SearchablePDF(bad, pages, meta, PDFOptions{PDFA: true})
	if err != nil || !strings.Contains(notPDFA, "header") {
		t.Fatalf("SearchablePDF: %v, not PDF/A: %q; want a reason naming the header", err, notPDFA)
	}
	if p := pdfcheck.PDFA(out); len(p) == 0 {
		t.Errorf("the checker passes a PDF whose header has no binary comment")
	}
}

// TestPDFAObstacles: what a source may hold that an update cannot make
// PDF/A is found.
func TestPDFAObstacles(t *testing.T) {
	t.Parallel()
	lzw := types.StreamDict{Dict: types.Dict{}, FilterPipeline: []types.PDFFilter{{Name: "LZWDecode"}}}
	ext := types.StreamDict{Dict: types.Dict{"F": types.StringLiteral("x.bin")}}
	img := types.StreamDict{Dict: types.Dict{"Type": types.Name("XObject"), "Subtype": types.Name("Image"), "Interpolate": types.Boolean(true)}}
	for _, tc := range []struct {
		sd   types.StreamDict
		want string
	}{{lzw, "LZWDecode"}, {ext, "external"}, {img, "interpolation"}} {
		if got := streamObstacle(tc.sd); !strings.Contains(got, tc.want) {
			t.Errorf("streamObstacle = %q, want %q", got, tc.want)
		}
	}
	for _, tc := range []struct {
		d    types.Dict
		want string
	}{
		{types.Dict{"S": types.Name("JavaScript"), "JS": types.StringLiteral("x")}, "JavaScript"},
		{types.Dict{"S": types.Name("Launch")}, "Launch"},
		{types.Dict{"Type": types.Name("Annot"), "Subtype": types.Name("Text"), "Rect": types.Array{}}, "not printed"},
	} {
		if got := dictObstacle(nil, tc.d); !strings.Contains(got, tc.want) {
			t.Errorf("dictObstacle(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
