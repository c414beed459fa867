// Package probe writes the PDFs refbatch makes itself: the probe page,
// which a run asks a fresh worker to read to tell a broken engine from
// documents that break engines, and the classic PDF files it and the tests
// are built of. It is pure Go, so that tests that only need a PDF do not
// link the engines.
package probe

import (
	"bytes"
	"fmt"
)

// PDF is a one-page PDF that refbatch makes itself and any working
// engine reads: an A4 page with a few lines of printed text (Helvetica,
// one of the fonts every PDF reader carries, so nothing is embedded). A
// run asks a fresh worker to read it when documents keep failing in the
// engines, to tell a broken engine (the probe fails too) from documents
// that break engines (the probe reads fine). An A4 page rendered at the
// run's resolution takes the memory and the steps of a real page, so an
// engine that cannot read real pages (too little memory, missing language
// data) fails it, while it costs well under a second.
//
// Its bytes never change between builds of one version: a fault
// injected for every document (ocr.FaultsEnv key *) applies to it as well.
var PDF = probePDF()

// Lines are the probe page's text: common words and every digit.
var Lines = []string{
	"Referral letter for the outpatient clinic",
	"The quick brown fox jumps over the lazy dog",
	"Please see the patient on 12 March 2024",
	"Reference 0123456789 signed by the doctor",
}

func probePDF() []byte {
	var content bytes.Buffer
	content.WriteString("BT /F1 16 Tf 20 TL 72 760 Td\n")
	for _, l := range Lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", l)
	}
	content.WriteString("ET\n")
	return OnePagePDF(content.Bytes())
}

// OnePagePDF is a PDF of one A4 page drawing content, with Helvetica as
// its font F1.
func OnePagePDF(content []byte) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	return ClassicPDF(objs...)
}

// ClassicPDF writes a PDF 1.4 file of the given objects, numbered from 1,
// the first the catalog, with a classic cross-reference table. The probe
// page is one; tests build the files they need with it.
func ClassicPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
