package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr/page"
)

// textPDF is a one-page PDF of w×h points holding lines of Helvetica.
func textPDF(w, h float64, lines ...string) []byte {
	var content bytes.Buffer
	for i, l := range lines {
		fmt.Fprintf(&content, "BT /F1 12 Tf 12 %.2f Td (%s) Tj ET\n", h-20-float64(i)*16, l)
	}
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>", w, h))
	obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.Bytes()))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// TestPageAdmittedAtTheMinimumDPI: a page whose box is not whole points,
// under a pixel cap it meets only at the minimum DPI. Admission fits it
// there from its exact box; the worker, left to size it from MuPDF's bound
// (whole points, plus one), found it over the cap and rejected it
// page_too_large after admission had passed it. It renders at the DPI
// admission gave it.
func TestPageAdmittedAtTheMinimumDPI(t *testing.T) {
	dir := t.TempDir()
	const w, h = 288.48, 108.48
	path := filepath.Join(dir, "fractional.pdf")
	pdf := textPDF(w, h, "Referral to the respiratory clinic", "Participant ID: P-123456", "Referral date: 2024-03-14")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t, writeManifest(t, dir, [][4]string{{"F-1", path, "P-123456", "2024-03-14"}}), filepath.Join(dir, "out"), "")
	o.Policy = page.Policy{DPI: 300, MaxPagePixels: int64(page.Pixels(w, h, page.DefaultMinDPI))}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	row := reportRows(t, res.Report)[0]
	if row.State == "rejected" || row.Artifact == "" {
		t.Fatalf("the page admission fitted ended %s/%s", row.State, row.Reason)
	}
	b, err := os.ReadFile(filepath.Join(o.Out, row.Artifact))
	if err != nil {
		t.Fatal(err)
	}
	var art layout.Artifact
	if err := json.Unmarshal(b, &art); err != nil {
		t.Fatal(err)
	}
	p := art.Pages[0]
	if p.DPI != page.DefaultMinDPI || int64(p.Width)*int64(p.Height) > o.MaxPagePixels {
		t.Errorf("page rendered %d×%d at %d dpi; want %d dpi, within %d pixels", p.Width, p.Height, p.DPI, page.DefaultMinDPI, o.MaxPagePixels)
	}
}
