package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// formsPage is a one-page PDF whose page draws n form XObjects, each
// showing about each bytes of invisible text: every stream under the
// 2 MiB a stream may show, the page far over it.
func formsPage(n, each int) []byte {
	var page bytes.Buffer
	xobjects := ""
	for i := range n {
		fmt.Fprintf(&page, "q /X%d Do Q\n", i)
		xobjects += fmt.Sprintf(" /X%d %d 0 R", i, 6+i)
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> /XObject <<" + xobjects + " >> >> /Contents 4 0 R >>",
		deflated(page.Bytes()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	for i := range n {
		objs = append(objs, textForm(fmt.Sprintf("form %d", i), each, 5))
	}
	return pdfFile(objs...)
}

// textForm is a form XObject, its font F1 object font, that shows label
// and then about each bytes of invisible text.
func textForm(label string, each, font int) string {
	var c bytes.Buffer
	fmt.Fprintf(&c, "BT 3 Tr /F1 1 Tf 72 72 Td (%s) Tj\n", label)
	chunk := "(" + strings.Repeat("a ", 500) + ") Tj\n"
	for range each / 1000 {
		c.WriteString(chunk)
	}
	c.WriteString("ET\n")
	return strings.Replace(deflated(c.Bytes()), "<< /Length",
		fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Length", font), 1)
}

// TestTextCountAtAdmission: a page of ten form XObjects of about 1.9 MB
// of text each (each under the 2 MiB a stream may show) is refused at
// admission as a text bomb, at once; it took a run 12 to 22 s with the
// worker tree at 1.6 GiB. A page of one such form is admitted.
func TestTextCountAtAdmission(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := [][4]string{
		{"F-10", "P-000000", "2024-01-01", writeFile(t, dir, "f10.pdf", formsPage(10, 1_900_000))},
		{"F-1", "P-000000", "2024-01-01", writeFile(t, dir, "f1.pdf", formsPage(1, 1_900_000))},
	}
	out := filepath.Join(dir, "out")
	start := time.Now()
	r := refbatch(t, nil, cheapRun(out, "--workers", "1", writeRows(t, dir, rows))...)
	t.Logf("run: %v", time.Since(start))
	if r.code != 0 && r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, lastLines(r.stderr, 10))
	}
	states := rowStates(t, out)
	if states["F-10"] != "rejected/malformed_pdf" || !strings.Contains(r.stderr, "a text bomb") {
		t.Errorf("ten forms of text on a page: %s, want rejected/malformed_pdf as a text bomb\n%s", states["F-10"], lastLines(r.stderr, 10))
	}
	if strings.HasPrefix(states["F-1"], "rejected") {
		t.Errorf("one form of text on a page: %s, want it admitted", states["F-1"])
	}
}

// formsPages is a PDF of pages pages (at least 2) whose page i draws
// forms[i] form XObjects, each showing about each bytes of invisible
// text; the page tree's root holds the font, which every page inherits.
func formsPages(pages int, forms []int, each int) []byte {
	// Objects: 1 catalog, 2 pages, 3 font, then per page its dictionary
	// and its contents, then the forms.
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	var kids []string
	next := 4 + 2*pages
	var formObjs []string
	for p := range pages {
		var page bytes.Buffer
		fmt.Fprintf(&page, "BT /F1 12 Tf 72 720 Td (page %d) Tj ET\n", p+1)
		xobjects := ""
		for i := range forms[p] {
			fmt.Fprintf(&page, "q /X%d Do Q\n", i)
			xobjects += fmt.Sprintf(" /X%d %d 0 R", i, next)
			next++
			formObjs = append(formObjs, textForm(fmt.Sprintf("form %d of page %d", i, p+1), each, 3))
		}
		kids = append(kids, fmt.Sprintf("%d 0 R", 4+2*p))
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /Resources << /XObject <<%s >> /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", xobjects, 5+2*p),
			deflated(page.Bytes()))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d /MediaBox [0 0 612 792] >>", strings.Join(kids, " "), pages)
	return pdfFile(append(objs, formObjs...)...)
}

// TestTextCountPerPage: the text count at admission is a page's, not the
// document's average. A four-page document whose third page draws two
// forms of about 1.9 MB of text each (3.8 MB on the page, under the
// 8 MiB its four pages allowed on average) is refused at admission as a
// text bomb naming page 3; the same forms drawn by two pages, one each,
// are admitted.
func TestTextCountPerPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := [][4]string{
		{"T-3", "P-000000", "2024-01-01", writeFile(t, dir, "t3.pdf", formsPages(4, []int{0, 0, 2, 0}, 1_900_000))},
		{"T-23", "P-000000", "2024-01-01", writeFile(t, dir, "t23.pdf", formsPages(4, []int{0, 1, 1, 0}, 1_900_000))},
	}
	out := filepath.Join(dir, "out")
	r := refbatch(t, nil, cheapRun(out, "--workers", "1", writeRows(t, dir, rows))...)
	if r.code != 0 && r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, lastLines(r.stderr, 10))
	}
	states := rowStates(t, out)
	if states["T-3"] != "rejected/malformed_pdf" || !strings.Contains(r.stderr, "page 3 shows more than 2 MiB of text") {
		t.Errorf("two forms of text on page 3 of 4: %s, want rejected/malformed_pdf as a text bomb naming page 3\n%s", states["T-3"], lastLines(r.stderr, 10))
	}
	if strings.HasPrefix(states["T-23"], "rejected") {
		t.Errorf("one form of text on each of two pages: %s, want it admitted", states["T-23"])
	}
}
