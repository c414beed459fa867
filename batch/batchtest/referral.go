package batchtest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/refbatch/refbatch/ocr/probe"
)

// Referral is a one-page document that draws lines, one under the other,
// in large print on a small page: what TinyReferral draws, with the text
// the test chooses. Real OCR reads the lines at 100 DPI in a fraction of a
// second; the finished package's stand-in engine reads them back exactly,
// with no OCR at all (DrawnText).
func Referral(lines ...string) []byte {
	var c bytes.Buffer
	c.WriteString("BT /F1 20 Tf 26 TL 18 120 Td\n")
	for _, l := range lines {
		fmt.Fprintf(&c, "(%s) Tj T*\n", escapePDF(l))
	}
	c.WriteString("ET\n")
	height := max(144, 26*len(lines)+40)
	return probe.ClassicPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 432 %d] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>", height),
		Deflated(c.Bytes()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	)
}

var pdfEscaper = strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)

func escapePDF(s string) string { return pdfEscaper.Replace(s) }

var (
	streamRe = regexp.MustCompile(`(?s)stream\r?\n(.*?)\r?\nendstream`)
	showRe   = regexp.MustCompile(`\(((?:\\.|[^\\)])*)\)\s*Tj`)
	unescape = strings.NewReplacer(`\\`, `\`, `\(`, `(`, `\)`, `)`)
)

// DrawnText returns the lines each content stream of pdf shows with Tj,
// in the order of the streams: one page's lines each for the documents
// Referral, TinyReferral and TinyDocs write. Streams that do not inflate
// are read as they are.
func DrawnText(pdf []byte) [][]string {
	var pages [][]string
	for _, m := range streamRe.FindAllSubmatch(pdf, -1) {
		content := m[1]
		if r, err := zlib.NewReader(bytes.NewReader(content)); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				content = b
			}
		}
		var lines []string
		for _, s := range showRe.FindAllSubmatch(content, -1) {
			lines = append(lines, unescape.Replace(string(s[1])))
		}
		pages = append(pages, lines)
	}
	return pages
}
