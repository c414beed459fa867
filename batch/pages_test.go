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
	"github.com/refbatch/refbatch/ocr/probe"
)

// textPDF is a one-page PDF of w×h points holding lines of Helvetica.
func textPDF(w, h float64, lines ...string) []byte {
	var content bytes.Buffer
	for i, l := range lines {
		fmt.Fprintf(&content, "BT /F1 12 Tf 12 %.2f Td (%s) Tj ET\n", h-20-float64(i)*16, l)
	}
	return probe.ClassicPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>", w, h),
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.Bytes()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	)
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
