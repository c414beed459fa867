package ocr

// #cgo LDFLAGS: -lleptonica -ltesseract -lm
// #include <stdlib.h>
// #include "native.h"
import "C"

import (
	"errors"
	"strings"
	"unsafe"
)

// leptonicaVersion returns the linked Leptonica's version ("1.82.0"), which
// neither gosseract nor Tesseract's version string exposes.
func leptonicaVersion() string {
	p := C.getLeptonicaVersion()
	if p == nil {
		return ""
	}
	defer C.lept_free(unsafe.Pointer(p))
	return strings.TrimPrefix(C.GoString(p), "leptonica-")
}

func init() {
	// Leptonica prints its warnings to stderr, which carries a child's
	// death evidence to the parent; keep them out, but not its errors,
	// among which is the evidence of an allocation failure.
	C.setMsgSeverity(C.L_SEVERITY_ERROR)
}

// findSkew estimates the angle of img's text lines in degrees, searching
// ±maxDeg, with Leptonica's sweep-and-search on a binarised copy
// (pixFindSkewSweepAndSearchScore, sweeping at 4× and searching at 2×
// reduction). conf is Leptonica's confidence: the ratio of the best score to
// the worst one; Leptonica itself trusts an angle only from 3.0 on.
func findSkew(img *grayImage, thresh int, maxDeg float64) (angle, conf float64) {
	if img.w < 8 || img.h < 8 {
		return 0, 0
	}
	var a, c C.l_float32
	if C.ocr_find_skew((*C.l_uint8)(unsafe.Pointer(&img.pix[0])), C.l_int32(img.w), C.l_int32(img.h),
		C.l_int32(thresh), C.l_float32(maxDeg), &a, &c) != 0 {
		// Leptonica fails when the image holds too little to measure
		// (a blank page); that is no skew, not an error.
		return 0, 0
	}
	return float64(a), float64(c)
}

// rotateGray returns img rotated by deg degrees (positive is clockwise)
// with area mapping, on a canvas enlarged so that no pixel is lost; the
// border and corners brought in are the gray value fill, which should be
// the paper's (see paperLevel).
func rotateGray(img *grayImage, deg float64, fill uint8) (*grayImage, error) {
	pix := C.ocr_rotate((*C.l_uint8)(unsafe.Pointer(&img.pix[0])), C.l_int32(img.w), C.l_int32(img.h),
		C.l_float32(deg), C.l_uint8(fill))
	if pix == nil {
		return nil, errors.New("leptonica could not rotate the page")
	}
	defer C.pixDestroy(&pix)
	out := newGrayImage(int(C.pixGetWidth(pix)), int(C.pixGetHeight(pix)))
	C.ocr_pix_gray(pix, (*C.l_uint8)(unsafe.Pointer(&out.pix[0])))
	return out, nil
}

// orientDetect runs Leptonica's text orientation test (pixOrientDetect) on
// img, rendered at dpi, binarised at thresh. The test is tuned for about
// 150 ppi and gives nothing useful far from it either way, so a page of
// 225 dpi or more is reduced by 2 first. up is positive for upright text
// and negative for text upside down; left is positive or negative for text
// turned by 90 degrees one way or the other; both are near 0 when there is
// too little text to tell.
func orientDetect(img *grayImage, dpi, thresh int) (up, left float64) {
	if img.w < 8 || img.h < 8 {
		return 0, 0
	}
	reduce := C.int(0)
	if dpi >= 225 {
		reduce = 1
	}
	var u, l C.l_float32
	if C.ocr_orient_detect((*C.l_uint8)(unsafe.Pointer(&img.pix[0])), C.l_int32(img.w), C.l_int32(img.h),
		C.l_int32(thresh), reduce, &u, &l) != 0 {
		return 0, 0
	}
	return float64(u), float64(l)
}

// countGlyphs counts the connected components of img's pixels darker
// than thresh (8-connected, with Leptonica) whose bounding box is from
// minH to maxH pixels high, the height of printed characters and words:
// specks are lower, and rules too; pictures are higher. It returns -1 when
// Leptonica fails.
func countGlyphs(img *grayImage, thresh, minH, maxH int) int {
	if img.w < 1 || img.h < 1 {
		return 0
	}
	return int(C.ocr_glyphs((*C.l_uint8)(unsafe.Pointer(&img.pix[0])), C.l_int32(img.w), C.l_int32(img.h),
		C.l_int32(thresh), C.l_int32(minH), C.l_int32(maxH)))
}

// despeckle paints paper over every connected component of img's pixels
// darker than thresh whose bounding box is at most maxW by maxH pixels,
// in place, and returns how many pixels it painted (-1 when Leptonica
// fails, leaving img as it was).
func despeckle(img *grayImage, thresh, maxW, maxH int, paper uint8) int {
	if img.w < 1 || img.h < 1 {
		return 0
	}
	return int(C.ocr_despeckle((*C.l_uint8)(unsafe.Pointer(&img.pix[0])), C.l_int32(img.w), C.l_int32(img.h),
		C.l_int32(thresh), C.l_int32(maxW), C.l_int32(maxH), C.l_uint8(paper)))
}

// components returns the bounding boxes (x0, y0, x1, y1, the ends
// exclusive) of the 8-connected components of mask's non-zero bytes (w×h,
// rows packed); nil when there are none or Leptonica fails.
func components(mask []byte, w, h int) [][4]int {
	if w < 1 || h < 1 {
		return nil
	}
	var n C.l_int32
	p := C.ocr_components((*C.l_uint8)(unsafe.Pointer(&mask[0])), C.l_int32(w), C.l_int32(h), &n)
	if p == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(p))
	raw := unsafe.Slice((*C.l_int32)(p), 4*int(n))
	out := make([][4]int, n)
	for i := range out {
		x, y := int(raw[4*i]), int(raw[4*i+1])
		out[i] = [4]int{x, y, x + int(raw[4*i+2]), y + int(raw[4*i+3])}
	}
	return out
}
