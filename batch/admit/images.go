package admit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/report/outcome"
)

// checkImages is check 9: every image the renderer could decode, at the
// size it would allocate, against the pixel cap, whether a page uses it or
// not. The renderer decodes an image at its full size whatever the page
// DPI, and sizes it from more than the image dictionary:
//
//   - image XObjects, by /Width and /Height (a stream with both and no
//     /Subtype counts too, as some producers omit it);
//   - the sizes their codecs declare in their own headers: a JBIG2 page
//     information or region segment (in the stream or its /JBIG2Globals),
//     a JPEG frame header, a JPEG 2000 ihdr box and SIZ marker, CCITT's
//     /Columns by /Rows;
//   - inline images (BI ... ID ... EI), by their /W and /H and, for DCT and
//     CCITT data, their headers, in every stream that may be drawn:
//     page contents, forms, patterns, Type 3 glyph procedures, annotation
//     appearances, soft masks, and any stream that is not known to be
//     something else.
//
// An image over the cap is page_too_large. Decoding for these checks is
// bounded: maxScanned for the file, hdrWindow per image header.
func checkImages(xt *model.XRefTable, lim Limits) error {
	nums := make([]int, 0, len(xt.Table))
	for n := range xt.Table {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	drawn, joined, files := drawnStreams(xt)
	b := &budget{left: maxScanned}
	text := &textCount{max: maxStreamText * int64(max(xt.PageCount, 1))}
	pages := newPageText(xt)
	for _, n := range nums {
		sd, ok := streamObject(xt.Table[n])
		if !ok {
			continue
		}
		image := isImage(sd.Dict)
		if image {
			if err := checkImage(xt, n, sd, lim, b); err != nil {
				return err
			}
		}
		if drawn[n] || !image && mayBeContent(sd.Dict, files[n]) {
			what := fmt.Sprintf("stream object %d", n)
			r, c, err := decode(sd.Raw, sd.FilterPipeline, b)
			if err != nil {
				return decodeRejection(what, err)
			}
			if c.name != "" {
				continue // an image codec's output is not content
			}
			shown, err := checkInline(what, r, lim)
			if err != nil {
				return err
			}
			if err := pages.add(n, shown); err != nil {
				return err
			}
			if err := text.add(shown, xt.PageCount); err != nil {
				return err
			}
		}
	}
	for _, seq := range joined {
		if err := checkJoined(xt, seq, lim, b); err != nil {
			return err
		}
	}
	return nil
}

// checkJoined checks the inline images of a page's /Contents streams
// read as one, as the renderer reads them: with a space between.
func checkJoined(xt *model.XRefTable, seq []int, lim Limits, b *budget) error {
	what := fmt.Sprintf("the content streams %d to %d", seq[0], seq[len(seq)-1])
	var rs []io.Reader
	for _, n := range seq {
		sd, ok := streamObject(xt.Table[n])
		if !ok {
			continue
		}
		r, c, err := decode(sd.Raw, sd.FilterPipeline, b)
		if err != nil {
			return decodeRejection(what, err)
		}
		if c.name == "" {
			rs = append(rs, r, strings.NewReader(" "))
		}
	}
	// Its streams' text was counted one by one.
	_, err := checkInline(what, io.MultiReader(rs...), lim)
	return err
}

// textCount is the text all the content streams of a file show, which
// may be no more than maxStreamText a page on average: each stream under
// that cap, many of them drawn on one page (form XObjects of nearly 2 MiB
// of text each) still made a worker hold gigabytes for the page. Each
// page's own count (pageText) holds it to maxPageText; this one also
// counts the streams no page draws directly (annotation appearances,
// glyph procedures, patterns, streams nothing names).
type textCount struct{ n, max int64 }

func (c *textCount) add(shown int64, pages int) error {
	c.n += shown
	if c.n <= c.max {
		return nil
	}
	return reject(outcome.MalformedPDF, "its content streams show more than %d MiB of text, more than %d MiB a page over %d pages: a text bomb",
		c.max>>20, maxStreamText>>20, max(pages, 1))
}

func streamObject(e *model.XRefTableEntry) (*types.StreamDict, bool) {
	if e == nil || e.Free {
		return nil, false
	}
	switch sd := e.Object.(type) {
	case types.StreamDict:
		return &sd, true
	case *types.StreamDict:
		return sd, true
	}
	return nil, false
}

// isImage is an image XObject, or a stream with /Width and /Height and no
// /Subtype.
func isImage(d types.Dict) bool {
	st := d.Subtype()
	_, hasW := d.Find("Width")
	_, hasH := d.Find("Height")
	return st != nil && *st == "Image" || st == nil && hasW && hasH
}

// mayBeContent reports whether a stream that no page, glyph, annotation
// or soft mask draws directly may still be drawn as content: forms and
// tiling patterns are, and so is any stream not known to be data of
// another kind (fonts, ICC profiles, functions, metadata, embedded files,
// which file says it is).
func mayBeContent(d types.Dict, file bool) bool {
	st := d.Subtype()
	if st != nil && *st == "Form" {
		return true
	}
	if _, ok := d.Find("PatternType"); ok {
		return true
	}
	if file {
		return false
	}
	if t := d.Type(); t != nil {
		switch *t {
		case "XRef", "ObjStm", "Metadata", "EmbeddedFile":
			return false
		}
	}
	if st != nil {
		switch *st {
		case "Type1C", "CIDFontType0C", "OpenType", "XML", "PS":
			return false
		}
	}
	for _, k := range []string{"Length1", "Length2", "Length3", "FunctionType", "N"} {
		if _, ok := d.Find(k); ok {
			return false
		}
	}
	return true
}

// overCap is the rejection of an image of w×h px over the pixel cap, or
// nil.
func overCap(lim Limits, what string, w, h float64) error {
	if w <= 0 || h <= 0 || w*h <= float64(lim.Page.MaxPagePixels) {
		return nil
	}
	return reject(outcome.PageTooLarge, "%s is %.0f×%.0f px, %.0f Mpx, over the %s cap",
		what, w, h, w*h/1e6, mpx(lim.Page.MaxPagePixels))
}

// checkImage checks one image XObject's dictionary size, then the size
// its codec's header declares.
func checkImage(xt *model.XRefTable, n int, sd *types.StreamDict, lim Limits, b *budget) error {
	what := fmt.Sprintf("image object %d", n)
	wObj, _ := sd.Dict.Find("Width")
	hObj, _ := sd.Dict.Find("Height")
	w, errW := xt.DereferenceNumber(wObj)
	h, errH := xt.DereferenceNumber(hObj)
	if errW == nil && errH == nil {
		if err := overCap(lim, what, w, h); err != nil {
			return err
		}
	}
	if !hasCodec(sd.FilterPipeline) {
		return nil // nothing declares a size of its own; decode nothing
	}
	r, c, err := decode(sd.Raw, sd.FilterPipeline, b)
	if err != nil {
		return decodeRejection(what, err)
	}
	limit := int64(hdrWindow)
	if len(sd.FilterPipeline) > 0 && expandFilterName(sd.FilterPipeline[0].Name) == c.name {
		limit = math.MaxInt64 // the raw bytes, already in memory
	}
	check := func(header string, hw, hh int64) error {
		return overCap(lim, what+": its "+header+" declares it", float64(hw), float64(hh))
	}
	switch c.name {
	case filter.DCT:
		err = jpegSizes(newHdrReader(r, limit), check)
	case filter.JPX:
		err = jpxSizes(newHdrReader(r, limit), check)
	case filter.JBIG2:
		err = jbig2Sizes(newHdrReader(r, limit), check)
		if err == nil {
			err = jbig2Globals(xt, c.parms, b, check)
		}
	case filter.CCITTFax:
		err = ccittSizes(filterParms(c.parms), h, check)
	}
	if errors.Is(err, errHeaderBeyond) {
		return reject(outcome.MalformedPDF, "%s: no %s header in its first %d KiB", what, codecName(c.name), hdrWindow>>10)
	}
	if err != nil {
		return decodeRejection(what, err)
	}
	return nil
}

// hasCodec reports whether a filter pipeline holds an image codec whose
// data declares its own size.
func hasCodec(filters []types.PDFFilter) bool {
	for _, f := range filters {
		switch expandFilterName(f.Name) {
		case filter.DCT, filter.JPX, filter.JBIG2, filter.CCITTFax:
			return true
		}
	}
	return false
}

// jbig2Globals checks the segments of a JBIG2 image's /JBIG2Globals
// stream, which the decoder reads before the image's own.
func jbig2Globals(xt *model.XRefTable, parms types.Dict, b *budget, check sizeCheck) error {
	o, ok := parms.Find("JBIG2Globals")
	if !ok {
		return nil
	}
	o, err := xt.Dereference(o)
	if err != nil {
		return nil
	}
	var sd *types.StreamDict
	switch g := o.(type) {
	case types.StreamDict:
		sd = &g
	case *types.StreamDict:
		sd = g
	default:
		return nil
	}
	r, c, err := decode(sd.Raw, sd.FilterPipeline, b)
	if err != nil || c.name != "" {
		return err
	}
	limit := int64(hdrWindow)
	if len(sd.FilterPipeline) == 0 {
		limit = math.MaxInt64
	}
	return jbig2Sizes(newHdrReader(r, limit), check)
}

// ccittSizes checks what a CCITT decoder allocates by: /Columns (1728 by
// default) by /Rows, or by the image's height when /Rows is absent.
func ccittSizes(parms map[string]int, height float64, check sizeCheck) error {
	cols, ok := parms["Columns"]
	if !ok {
		cols = 1728
	}
	rows := int64(parms["Rows"])
	if rows <= 0 {
		rows = int64(max(height, 1))
	}
	return check("CCITT /Columns and /Rows", int64(cols), rows)
}

// checkInline checks the inline images of a decoded content stream, and
// returns the text it shows.
func checkInline(what string, r io.Reader, lim Limits) (int64, error) {
	shown, err := inlineImages(r, func(img inlineImage, data *bufio.Reader) error {
		what := what + ": an inline image"
		if err := overCap(lim, what, img.w, img.h); err != nil {
			return err
		}
		check := func(header string, hw, hh int64) error {
			return overCap(lim, what+": its "+header+" declares it", float64(hw), float64(hh))
		}
		last := ""
		if len(img.filters) > 0 {
			last = img.filters[len(img.filters)-1]
		}
		switch {
		case last == filter.CCITTFax:
			parms := map[string]int{}
			for k, v := range img.parms {
				parms[k] = int(min(max(v, 0), math.MaxInt32))
			}
			return ccittSizes(parms, img.h, check)
		case last == filter.DCT && len(img.filters) == 1:
			err := jpegSizes(newHdrReader(data, hdrWindow), check)
			if errors.Is(err, errHeaderBeyond) {
				return reject(outcome.MalformedPDF, "%s: no JPEG header in its first %d KiB", what, hdrWindow>>10)
			}
			return err
		}
		return nil
	})
	if errors.Is(err, errTextBomb) {
		return 0, reject(outcome.MalformedPDF, "%s: %v", what, err)
	}
	if err != nil {
		if _, ok := IsRejection(err); ok {
			return 0, err
		}
		return 0, decodeRejection(what, err)
	}
	return shown, nil
}

// decodeRejection words a failure of the bounded decoding.
func decodeRejection(what string, err error) error {
	switch {
	case errors.Is(err, errOverBudget):
		return reject(outcome.MalformedPDF, "%s: content streams and image headers decode to more than %d MiB (a decompression bomb)", what, maxScanned>>20)
	case errors.Is(err, errPredictorRow):
		return reject(outcome.MalformedPDF, "%s: a predictor row over %d MiB", what, maxPredictorRow>>20)
	}
	if r, ok := IsRejection(err); ok {
		return r
	}
	return reject(outcome.MalformedPDF, "%s: %s", what, scrub(err))
}

func codecName(f string) string {
	switch f {
	case filter.DCT:
		return "JPEG"
	case filter.JPX:
		return "JPEG 2000"
	case filter.JBIG2:
		return "JBIG2 page"
	}
	return f
}
