package admit

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
)

// TestPageTextDrawnBy: each stream is counted on the pages that draw it,
// through their contents, their own or inherited resources and the forms
// those forms name, once each; images and forms nobody names are on no
// page. A page over maxPageText is a text bomb, and a page at it is not.
func TestPageTextDrawnBy(t *testing.T) {
	t.Parallel()
	form := func(res string) string {
		return stream("/Type /XObject /Subtype /Form /BBox [0 0 1 1] /Resources "+res, nil)
	}
	pdf := buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R 2 0 R] /Count 2 /MediaBox [0 0 612 792] /Resources << /XObject << /Fm1 6 0 R >> >> >>",
		"<< /Type /Page /Parent 2 0 R /Contents 5 0 R /Resources << /XObject << /Fm2 7 0 R /Im 8 0 R /X 99 /Cat 1 0 R >> >> >>",
		"<< /Type /Page /Parent 2 0 R /Contents [5 0 R 9 0 R] >>",
		stream("", nil),
		form("<< /XObject << /Fm3 10 0 R >> >>"),
		form("<< /XObject << /Fm2 7 0 R >> >>"),
		stream("/Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8", []byte{0}),
		stream("", nil),
		form("<< /XObject << /Fm1 6 0 R /Fm4 11 0 R >> >>"),
		form("<< >>"),
		form("<< >>"),
	}, "")
	ctx, err := pdfcpu.Read(bytes.NewReader(pdf), pdfcpuConfig())
	if err != nil {
		t.Fatal(err)
	}
	pt := newPageText(ctx.XRefTable)
	var got []string
	for n, pages := range pt.drawBy {
		got = append(got, fmt.Sprintf("%d:%v", n, pages))
	}
	want := []string{"5:[0 1]", "7:[0]", "9:[1]", "6:[1]", "10:[1]", "11:[1]"}
	slices.Sort(want)
	slices.Sort(got)
	if len(pt.shown) != 2 || !slices.Equal(got, want) {
		t.Fatalf("%d pages, drawn by %q; want 2 pages, %q", len(pt.shown), got, want)
	}
	if err := pt.add(5, maxPageText-1); err != nil {
		t.Fatalf("a page under the cap: %v", err)
	}
	if err := pt.add(7, 1); err != nil {
		t.Fatalf("a page at the cap: %v", err)
	}
	err = pt.add(9, 2)
	if r, ok := IsRejection(err); !ok || !strings.Contains(r.Detail, "page 2 shows more than 2 MiB of text") {
		t.Errorf("a page over the cap: %v; want page 2 named", err)
	}
}
