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
		var c bytes.Buffer
		fmt.Fprintf(&c, "BT 3 Tr /F1 1 Tf 72 72 Td (form %d) Tj\n", i)
		chunk := "(" + strings.Repeat("a ", 500) + ") Tj\n"
		for range each / 1000 {
			c.WriteString(chunk)
		}
		c.WriteString("ET\n")
		objs = append(objs, strings.Replace(deflated(c.Bytes()), "<< /Length",
			"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Length", 1))
	}
	return pdfFile(objs...)
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
