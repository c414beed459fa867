package export

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
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
	// The text layer's font and streams, read by the second opinion.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "R-0001.pdf"), out, 0o600); err != nil {
		t.Fatal(err)
	}
	preflightAll(t, dir, []string{filepath.Join(dir, "R-0001.pdf")})
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
		{types.Dict{"Type": types.Name("Annot"), "Subtype": types.Name("Widget"), "Rect": types.Array{}, "F": types.Integer(4),
			"AP": types.Dict{"N": types.Dict{"Off": types.Integer(0)}, "D": types.Dict{}}}, "a D appearance"},
		{types.Dict{"Type": types.Name("Annot"), "Subtype": types.Name("Text"), "Rect": types.Array{}, "F": types.Integer(4),
			"AP": types.Dict{"N": types.Dict{"Off": types.Integer(0)}}}, "set of states"},
		{types.Dict{"Type": types.Name("XObject"), "Subtype": types.Name("Image"), "ColorSpace": types.Name("DeviceCMYK")}, "DeviceCMYK as an image's"},
		{types.Dict{"ColorSpace": types.Dict{"CS0": types.Name("DeviceCMYK")}}, "in a resource dictionary"},
	} {
		if got := dictObstacle(new(model.Context), tc.d); !strings.Contains(got, tc.want) {
			t.Errorf("dictObstacle(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	for _, cs := range []types.Array{
		{types.Name("DeviceN"), types.Array{types.Name("Spot")}, types.Name("DeviceCMYK"), types.Dict{}},
		{types.Name("Separation"), types.Name("Spot"), types.Name("DeviceCMYK"), types.Dict{}},
		{types.Name("Indexed"), types.Name("DeviceCMYK"), types.Integer(0), types.StringLiteral("")},
	} {
		if got := arraySpaceObstacle(cs); !strings.Contains(got, "DeviceCMYK") {
			t.Errorf("arraySpaceObstacle(%v) = %q, want DeviceCMYK", cs, got)
		}
	}
	if got := arraySpaceObstacle(types.Array{types.Name("Separation"), types.Name("Spot"), types.Name("DeviceRGB"), types.Dict{}}); got != "" {
		t.Errorf("a Separation with an RGB alternate: %q", got)
	}
}

// TestPDFAMendsStreams: a source whose streams have no end of line
// before endstream, or a CR alone, is made PDF/A by writing those streams
// again with the same data, framed as 6.1.7.1 asks; the file still begins
// with the source and renders as it. One whose Length does not reach
// endstream cannot be mended, and gets the plain PDF and a reason.
func TestPDFAMendsStreams(t *testing.T) {
	t.Parallel()
	if _, err := glyphlessTTF(); err != nil {
		t.Skip(err)
	}
	src, pages := samplePages(t)
	// Same lengths, so that the offsets hold.
	for name, edit := range map[string]func([]byte) []byte{
		"no end of line": func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\nendstream\n"), []byte("endstream\n\n")) },
		"a CR alone":     func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\nendstream\n"), []byte("\rendstream\n")) },
	} {
		t.Run(name, func(t *testing.T) {
			bad := edit(bytes.Clone(src))
			if p := pdfcheck.PDFA(bad); !strings.Contains(strings.Join(p, "\n"), "6.1.7.1") {
				t.Fatalf("the edited source breaks no 6.1.7.1: %q", p)
			}
			out, notPDFA, err := SearchablePDF(bad, pages, testProvenance(), PDFOptions{PDFA: true})
			if err != nil || notPDFA != "" {
				t.Fatalf("SearchablePDF: %v, not PDF/A: %q", err, notPDFA)
			}
			if p := pdfcheck.PDFA(out); len(p) > 0 {
				t.Errorf("PDF/A clauses broken: %v", p)
			}
			if pdfcheck.Missing() == "" {
				r, err := pdfcheck.Check(context.Background(), t.TempDir(), bad, out, pages)
				if err != nil {
					t.Fatal(err)
				}
				if !r.Prefix || r.IdenticalPages != r.Pages || !r.QPDFOK() || !r.ImagesIdentical {
					t.Errorf("prefix %v, %d of %d pages identical, qpdf %d, images identical %v", r.Prefix, r.IdenticalPages, r.Pages, r.QPDF, r.ImagesIdentical)
				}
			}
		})
	}
	// A Length one short of its data: which bytes are the data is a guess.
	short := bytes.Clone(src)
	i := bytes.Index(short, []byte("\nendstream"))
	copy(short[i-1:], "\n\n")
	i = bytes.LastIndex(short[:i], []byte("/Length "))
	n := i + len("/Length ")
	j := n + bytes.IndexAny(short[n:], " />\n")
	length, err := strconv.Atoi(string(short[n:j]))
	if err != nil || len(strconv.Itoa(length-1)) != j-n {
		t.Skipf("the sample's first stream's Length %q cannot be shortened in place", short[n:j])
	}
	copy(short[n:j], strconv.Itoa(length-1))
	_, notPDFA, err := SearchablePDF(short, pages, testProvenance(), PDFOptions{PDFA: true})
	if err != nil || !strings.Contains(notPDFA, "Length") {
		t.Errorf("SearchablePDF: %v, not PDF/A: %q; want a reason naming the Length", err, notPDFA)
	}
}

// TestPDFAWords: issue 51's refusals are said in words, not as the
// technical reason alone.
func TestPDFAWords(t *testing.T) {
	t.Parallel()
	for reason, want := range map[string]string{
		"object 11: DeviceCMYK as a DeviceN colour space's alternate, which an sRGB output intent does not cover": "printing colours",
		"object 5: an annotation has a D appearance besides its normal one":                                       "pressed or pointed at",
		"object 3: a stream's Length does not match its data":                                                     "declared length",
	} {
		if why, todo := PDFAWords(reason); !strings.Contains(why, want) || todo == "" || strings.Contains(why, "holds something PDF/A forbids") {
			t.Errorf("PDFAWords(%q) = %q, %q; want %q", reason, why, todo, want)
		}
	}
}
