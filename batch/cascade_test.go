package batch

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"image"
	"image/draw"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/batchtest"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/ocr"
	"github.com/refbatch/refbatch/ocr/probe"
)

// TestArtifactRecordsCascade: every page of an artifact says how it was
// read: the resolution of its first reading and whether it was read again
// (at 100 dpi the page's 7 pt print is small, so it is) under --cascade,
// or, by default (the cascade off), neither; the run's settings record
// the cascade.
func TestArtifactRecordsCascade(t *testing.T) {
	doc := smallPrint(t)
	for _, cascade := range []bool{true, false} {
		out := t.TempDir()
		o := testOptions(t, writeManifest(t, t.TempDir(), [][4]string{{doc.sourceID, doc.path, doc.participantID, doc.date}}), out, "")
		o.DPI, o.FirstDPI, o.Cascade = 200, 100, cascade
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Report.Run.Settings["cascade"], fmt.Sprint(cascade); got != want || res.Report.Run.Settings["first_dpi"] != "100" {
			t.Errorf("settings record cascade %q, first_dpi %q; want %q, 100", got, res.Report.Run.Settings["first_dpi"], want)
		}
		var pages []ocr.PageResult
		err = audit.ReadArtifacts(layout.Place{Out: out}, nil, func(_ string, a *layout.Artifact) error {
			pages = append(pages, a.Pages...)
			return nil
		})
		if err != nil || len(pages) == 0 {
			t.Fatalf("reading the artifact: %v (%d pages)", err, len(pages))
		}
		for _, p := range pages {
			t.Logf("cascade %t: page %d at %d dpi, first %d, second pass %t (%s)", cascade, p.Index, p.DPI, p.FirstDPI, p.SecondPass, p.CascadeReason)
			noCascade := !cascade
			switch {
			case noCascade && (p.FirstDPI != 0 || p.SecondPass || p.DPI != 200):
				t.Errorf("page %d without the cascade: first %d, second pass %t, dpi %d", p.Index, p.FirstDPI, p.SecondPass, p.DPI)
			case !noCascade && p.Blank:
			case !noCascade && (p.FirstDPI != 100 || !p.SecondPass || p.CascadeReason == ""):
				t.Errorf("page %d: first %d, second pass %t (%q); want 100, read again for a reason", p.Index, p.FirstDPI, p.SecondPass, p.CascadeReason)
			}
		}
	}
}

// smallPrint is a one-page scan of three lines of 7 pt print, drawn at
// 300 dpi with no text layer: small at 100 dpi, and a fraction of a sample
// document's recognition.
func smallPrint(t *testing.T) sampleRow {
	t.Helper()
	d := sampleRow{"S-1", "P-123456", "2024-03-14", filepath.Join(t.TempDir(), "S-1.pdf")}
	const dpi, wPt, hPt = 300, 288, 72
	img := image.NewGray(image.Rect(0, 0, wPt*dpi/72, hPt*dpi/72))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 7, DPI: dpi})
	if err != nil {
		t.Fatal(err)
	}
	defer face.Close()
	dr := font.Drawer{Dst: img, Src: image.Black, Face: face}
	for i, line := range []string{"Referral to the clinic", "Participant ID: " + d.participantID, "Referral date: " + d.date} {
		dr.Dot = fixed.P(dpi/4, dpi/4+(i+1)*9*dpi/72)
		dr.DrawString(line)
	}
	pdf := probe.ClassicPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>", wPt, hPt),
		batchtest.Deflated(fmt.Appendf(nil, "q %d 0 0 %d 0 0 cm /Im0 Do Q\n", wPt, hPt)),
		imageObject(img),
	)
	if err := os.WriteFile(d.path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}

// imageObject is img as a compressed 8-bit grey image XObject.
func imageObject(img *image.Gray) string {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	w.Write(img.Pix)
	w.Close()
	return fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream",
		img.Rect.Dx(), img.Rect.Dy(), z.Len(), z.Bytes())
}
