package export

// This file stands in for the searchable PDF and the page geometry until
// they land (geometry.go and pdf.go); it is deleted then. Its DisplayedBox
// and its ReadFrames (MediaBox only) are exact for an upright, straight page (Rotation 0, SkewDegrees 0) with
// no /Rotate, which is what the tests of this package use.

import (
	"bytes"
	"errors"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/refbatch/refbatch/ocr"
)

// Box is a word box on the page as a viewer displays it (after /Rotate), in
// PDF points, origin top left.
type Box struct{ X0, Y0, X1, Y1 float64 }

// PageFrame is what a page's geometry needs, read from the source PDF.
type PageFrame struct {
	// Width and Height of the page as displayed (after /Rotate), in points.
	Width, Height float64
}

// ErrNoPDF says the searchable PDF is not built into this refbatch: export
// reports each document it could not make a PDF of as export_failed.
var ErrNoPDF = errors.New("the searchable PDF is not built into this refbatch yet")

// DisplayedBox maps a word's canvas-pixel box onto the displayed page.
func DisplayedBox(p ocr.PageResult, frame PageFrame, canvasBox [4]int) Box {
	s := 72 / float64(p.DPI)
	return Box{float64(canvasBox[0]) * s, float64(canvasBox[1]) * s, float64(canvasBox[2]) * s, float64(canvasBox[3]) * s}
}

// ReadFrames reads the frame of every page of a PDF.
func ReadFrames(pdf []byte) ([]PageFrame, error) {
	dims, err := api.PageDims(bytes.NewReader(pdf), model.NewDefaultConfiguration())
	if err != nil {
		return nil, err
	}
	frames := make([]PageFrame, len(dims))
	for i, d := range dims {
		frames[i] = PageFrame{Width: d.Width, Height: d.Height}
	}
	return frames, nil
}

// SearchablePDF adds an invisible text layer to the OCR'd pages of src.
func SearchablePDF(src []byte, pages []ocr.PageResult, meta Provenance) ([]byte, error) {
	return nil, ErrNoPDF
}
