package main

import (
	"crypto/sha256"
	"fmt"
	"image"
	"strings"

	"github.com/refbatch/refbatch/report/outcome"
)

// makeFile returns the bytes of e's file (nil for none) and whether its
// ground truth belongs in the corpus. It may change the row's path.
func makeFile(o options, e entry, doc rendered, r *row) (data []byte, keepTruth bool, err error) {
	pdf := func(opts pdfOptions) ([]byte, error) { return writePDF(doc.Pages, opts) }
	switch e.Variant {
	case varBrokenXref:
		data, err = pdf(pdfOptions{})
		// Dropping the binary comment line after the xref was written
		// puts every offset 6 bytes past its object.
		header := len("%PDF-1.4\n")
		data = append(data[:header:header], data[header+len("%\xe2\xe3\xcf\xd3\n"):]...)
		return data, true, err
	case varBadStartxref:
		data, err = pdf(pdfOptions{})
		i := strings.LastIndex(string(data), "startxref\n")
		return append(data[:i:i], "startxref\n20\n%%EOF\n"...), true, err
	case varTextLayer, varOCRLayer, varBlankDoc, varHard, varCoverage, varHand:
		data, err = pdf(pdfOptions{})
		return data, true, err
	case varCommaPath:
		r.Path = "docs/" + e.Spec.SourceID + ", rescanned.pdf"
		data, err = pdf(pdfOptions{})
		return data, true, err
	case varELF:
		return elfExecutable(), false, nil
	case varPNG:
		data, err = pngBytes(doc.Images[0])
		return data, false, err
	case varEncrypted, varEncryptedPW:
		rev, pw := 2, ""
		if e.Variant == varEncryptedPW {
			rev, pw = 3, userPassword
		}
		// A fixed file ID, so the key and the bytes never change.
		id := sha256.Sum256([]byte("refcorpus " + e.Spec.SourceID))
		sec, err := newStdSecurity(rev, pw, "owner "+e.Spec.SourceID, id[:16])
		if err != nil {
			return nil, false, err
		}
		data, err = pdf(pdfOptions{Security: sec})
		return data, false, err
	case varPageBomb, varGiantPage:
		data, err = bombFile(e.Variant)
		return data, false, err
	case varOverCap:
		data, err = pdf(pdfOptions{})
		if err != nil {
			return nil, false, err
		}
		// The raw page is about 2 MB; pad it when the cap is higher, so
		// that the file is over the cap by a twentieth at least.
		if target := o.MaxBytes + o.MaxBytes/20; int64(len(data)) <= target {
			data, err = pdf(pdfOptions{Pad: int(target - int64(len(data)))})
		}
		return data, false, err
	case varShortRecord:
		return nil, false, nil
	case varClimbing:
		// No file is written there; see path_outside_root below.
		r.Path = "docs/../../outside.pdf"
		return nil, false, nil
	}

	if e.Render {
		data, err = pdf(pdfOptions{})
		if err != nil {
			return nil, false, err
		}
	}
	switch outcome.Reason(e.Reason) {
	case "", outcome.NoConsent, outcome.HashMismatch, outcome.MissingField, outcome.BadDate:
		keepTruth = true
	case outcome.EmptyFile:
		data = []byte{}
	case outcome.NotPDF:
		data = []byte("Referral notes\nThis is a plain text file saved under a .pdf name.\n")
	case outcome.MalformedPDF:
		// The first 40% keeps the signature and the first objects but
		// loses the xref and the trailer, as an interrupted copy would.
		data = data[:len(data)*4/10]
	case outcome.PathOutsideRoot:
		// No file is written there: the generator never writes outside
		// its output folder, and the path must be refused before any
		// look at the disk.
		r.Path = "../outside.pdf"
	case outcome.Conflict:
		r.Path = "docs/" + e.Spec.SourceID + "-rescan.pdf"
	}
	return data, keepTruth, nil
}

// checkCap makes sure the too_large input is the only file over maxBytes,
// so an evaluation run with --max-bytes maxBytes rejects it alone.
func (c *corpus) checkCap(maxBytes int64) error {
	over := map[string]bool{}
	for _, r := range c.Rows {
		if outcome.Reason(r.Reason) == outcome.TooLarge {
			over[r.Path] = true
		}
	}
	for _, f := range c.Files {
		if big := int64(len(f.Data)) > maxBytes; big != over[f.Path] {
			return fmt.Errorf("%s is %d bytes against a cap of %d, but its row does not expect that", f.Path, len(f.Data), maxBytes)
		}
	}
	return nil
}

// bombFile writes the page bomb (201 tiny pages) or the giant page (a
// 14400 pt square).
func bombFile(variant string) ([]byte, error) {
	if variant == varPageBomb {
		pages := make([]pageSpec, 201)
		for i := range pages {
			pages[i] = pageSpec{W: "72", H: "72"}
		}
		return writePDF(pages, pdfOptions{})
	}
	img := image.NewGray(image.Rect(0, 0, 200, 200))
	fill(img, 255)
	pi, err := grayFlate(img)
	if err != nil {
		return nil, err
	}
	return writePDF([]pageSpec{{W: "14400", H: "14400", Image: &pi}}, pdfOptions{})
}
