package ocr

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/draw"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// textPage draws lines of 11 pt text on a white wIn×hIn inch page at dpi,
// the way a clean scan of a typed referral looks.
func textPage(t testing.TB, lines []string, wIn, hIn float64, dpi int) *image.Gray {
	t.Helper()
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatalf("parsing Go font: %v", err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 11, DPI: float64(dpi), Hinting: font.HintingFull})
	if err != nil {
		t.Fatalf("making font face: %v", err)
	}
	defer face.Close()

	img := image.NewGray(image.Rect(0, 0, int(wIn*float64(dpi)), int(hIn*float64(dpi))))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: img, Src: image.Black, Face: face}
	margin := dpi // one inch
	lineHeight := face.Metrics().Height.Ceil() * 3 / 2
	for i, line := range lines {
		d.Dot = fixed.P(margin, margin+(i+1)*lineHeight)
		d.DrawString(line)
	}
	return img
}

// imagePDF wraps a gray image as a one-page, image-only PDF, the shape of
// a scanner's output, with the page sized so the image is at dpi.
func imagePDF(t testing.TB, img *image.Gray, dpi int) []byte {
	return layeredPDF(t, img, dpi, nil)
}

// layeredPDF is imagePDF with an invisible text layer (text render mode 3,
// as OCRmyPDF writes it) holding layer, one line after another from the
// top of the page; no layer when layer is nil.
func layeredPDF(t testing.TB, img *image.Gray, dpi int, layer []string) []byte {
	t.Helper()
	w, h := img.Rect.Dx(), img.Rect.Dy()
	var pixels bytes.Buffer
	zw := zlib.NewWriter(&pixels)
	for y := range h {
		if _, err := zw.Write(img.Pix[y*img.Stride : y*img.Stride+w]); err != nil {
			t.Fatalf("compressing image: %v", err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("compressing image: %v", err)
	}
	wPt, hPt := float64(w)*72/float64(dpi), float64(h)*72/float64(dpi)
	content := fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im0 Do Q\n", wPt, hPt)
	if layer != nil {
		var sb strings.Builder
		fmt.Fprintf(&sb, "BT /F1 9 Tf 3 Tr 36 %.2f Td\n", hPt-36)
		for _, line := range layer {
			esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(line)
			fmt.Fprintf(&sb, "(%s) Tj 0 -12 Td\n", esc)
		}
		sb.WriteString("ET\n")
		content += sb.String()
	}

	var b bytes.Buffer
	var offsets []int
	obj := func(body string, stream []byte) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\n", len(offsets), body)
		if stream != nil {
			b.WriteString("stream\n")
			b.Write(stream)
			b.WriteString("\nendstream\n")
		}
		b.WriteString("endobj\n")
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>", nil)
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>", nil)
	obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] "+
		"/Resources << /XObject << /Im0 4 0 R >> /Font << /F1 6 0 R >> >> /Contents 5 0 R >>", wPt, hPt), nil)
	obj(fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "+
		"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>", w, h, pixels.Len()), pixels.Bytes())
	obj(fmt.Sprintf("<< /Length %d >>", len(content)), []byte(content))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", nil)
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

// participantPDF is a small page with one line to find, at 150 DPI.
func participantPDF(t testing.TB) []byte {
	img := textPage(t, []string{"Participant ID: P-123456"}, 4, 1.5, 150)
	return imagePDF(t, img, 150)
}

// letterPDF is a full US Letter page of referral-like text at dpi.
func letterPDF(t testing.TB, dpi int) []byte {
	return imagePDF(t, textPage(t, letterLines(), 8.5, 11, dpi), dpi)
}

// letterLines are the 40 lines of letterPDF.
func letterLines() []string {
	lines := []string{
		"Referral to the Department of Respiratory Medicine",
		"Participant ID: P-123456",
		"Referral date: 2024-03-14",
	}
	body := []string{
		"Thank you for seeing this patient, who has had a persistent cough",
		"for the past three months despite two courses of antibiotics.",
		"There is no history of smoking and no known occupational exposure.",
		"A chest radiograph taken last month showed no focal consolidation.",
		"Spirometry in the practice suggested a mild obstructive pattern,",
		"with partial reversibility after a bronchodilator was given.",
		"Current medication includes an inhaled corticosteroid twice daily.",
		"I would be grateful for your assessment and further investigation.",
	}
	for len(lines) < 40 {
		lines = append(lines, body[len(lines)%len(body)])
	}
	return lines
}

// corpusDir returns the real-PDF corpus beside the repository, skipping the
// test when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getting working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found")
		}
		dir = parent
	}
	corpus := filepath.Join(dir, "..", "shared", "corpus", "real")
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("real corpus not available: %v", err)
	}
	return corpus
}
