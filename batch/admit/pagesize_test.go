package admit

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
)

// pageTree is a document whose page tree node (object 2) has the entries
// node and whose pages have the entries of pages, one each.
func pageTree(node string, pages ...string) []byte {
	kids := make([]string, len(pages))
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	for i, p := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", i+3)
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /Resources << >> "+p+" >>")
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d %s >>", strings.Join(kids, " "), len(pages), node)
	return buildPDF(objs, "")
}

// sizesOf reads a document with pdfcpu and sizes its pages.
func sizesOf(pdf []byte) ([]string, error) {
	ctx, err := pdfcpu.Read(bytes.NewReader(pdf), pdfcpuConfig())
	if err != nil {
		return nil, err
	}
	ps, err := pageSizes(ctx.XRefTable)
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%gx%g", p.w, p.h))
	}
	return got, err
}

// TestPageSizes: each page's size as MuPDF renders it, from boxes and
// entries set on the page or inherited from its node.
func TestPageSizes(t *testing.T) {
	t.Parallel()
	const letter = "/MediaBox [0 0 612 792]"
	for _, c := range []struct {
		name string
		pdf  []byte
		want []string
	}{
		{"a MediaBox", pageTree("", letter), []string{"612x792"}},
		{"corners in another order", pageTree("", "/MediaBox [612 792 0 0]", "/MediaBox [0 792 612 0]"), []string{"612x792", "612x792"}},
		{"a CropBox within", pageTree("", letter+" /CropBox [10 10 110 210]"), []string{"100x200"}},
		{"a CropBox across an edge", pageTree("", letter+" /CropBox [600 -10 700 100]"), []string{"12x100"}},
		{"a CropBox outside", pageTree("", letter+" /CropBox [700 0 800 100]", letter+" /CropBox [0 800 100 900]"), []string{"612x792", "612x792"}},
		{"a CropBox meeting an edge", pageTree("", letter+" /CropBox [612 0 700 100]", letter+" /CropBox [0 792 100 900]"), []string{"612x792", "612x792"}},
		{"UserUnit", pageTree("", letter+" /UserUnit 2", letter+" /UserUnit 0", letter+" /UserUnit -3"), []string{"1224x1584", "612x792", "612x792"}},
		{"Rotate", pageTree("", letter+" /Rotate 90", letter+" /Rotate 180", letter+" /Rotate 270", letter+" /Rotate -90", letter+" /Rotate 450", letter+" /Rotate 360", letter+" /Rotate 89.6"),
			[]string{"792x612", "612x792", "792x612", "792x612", "792x612", "612x792", "792x612"}},
		{"inherited boxes and Rotate", pageTree(letter+" /CropBox [0 0 100 200] /Rotate 90", "", "/Rotate 0", "/MediaBox [0 0 50 60]"),
			[]string{"200x100", "100x200", "60x50"}},
		{"UserUnit is not inherited", pageTree(letter+" /UserUnit 3", ""), []string{"612x792"}},
		{"a page with kids is a page", pageTree(letter, "/Kids [2 0 R]"), []string{"612x792"}},
	} {
		got, err := sizesOf(c.pdf)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// TestPageTreeRefused: a page tree the walk cannot size is an error that
// says why.
func TestPageTreeRefused(t *testing.T) {
	t.Parallel()
	deep := []string{"<< /Type /Catalog /Pages 2 0 R >>"}
	for i := 2; i < maxPageTreeDepth+3; i++ {
		deep = append(deep, fmt.Sprintf("<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", i+1))
	}
	deep = append(deep, "<< /Type /Page /MediaBox [0 0 612 792] >>")
	fits := slices.Clone(deep[:maxPageTreeDepth+1])
	fits = append(fits, "<< /Type /Page /MediaBox [0 0 612 792] >>")
	for _, c := range []struct {
		name string
		pdf  []byte
		want string
	}{
		{"no MediaBox", pageTree("", ""), "page 1 has no MediaBox"},
		{"a second page without one", pageTree("", "/MediaBox [0 0 1 1]", ""), "page 2 has no MediaBox"},
		{"a MediaBox of three numbers", pageTree("", "/MediaBox [0 0 612]"), "reading MediaBox: a rectangle has 3 numbers, not 4"},
		{"a CropBox of five", pageTree("/MediaBox [0 0 1 1]", "/CropBox [0 0 1 1 1]"), "reading CropBox: a rectangle has 5 numbers, not 4"},
		{"a Rotate that is a name", pageTree("/MediaBox [0 0 1 1]", "/Rotate /R"), "reading Rotate"},
		{"a UserUnit that is a name", pageTree("/MediaBox [0 0 1 1]", "/UserUnit /U"), "page 1 UserUnit"},
		{"a box of no finite size", pageTree("/MediaBox [0 0 1e308 1]", "/UserUnit 1e308"), "page 1 has a box of no finite size"},
		{"a node reached twice", pageTree("/MediaBox [0 0 1 1]", "/Type /Pages /Kids [3 0 R]"), "page tree node object 3 is reached twice"},
		{"too deep", buildPDF(deep, ""), fmt.Sprintf("page tree deeper than %d levels", maxPageTreeDepth)},
		{"as deep as may be", buildPDF(fits, ""), ""},
	} {
		_, err := sizesOf(c.pdf)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v; want …%s…", c.name, err, c.want)
		}
	}
}
