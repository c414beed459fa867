package ocr

// #include <stdlib.h>
// #include "native.h"
import "C"

import (
	"errors"
	"fmt"
	"image"
	"strconv"
	"unsafe"

	"github.com/otiai10/gosseract/v2"
)

// tess is the recognition handle, called through Tesseract's C API. A
// page goes to Tesseract from the Go memory it is in: gosseract takes an
// image file, and Leptonica parsing a 300 dpi page's PGM byte by byte
// cost about 0.1 s of CPU a page, a tenth of the page's reading.
type tess struct {
	api *C.TessBaseAPI
}

// newTess initialises Tesseract for lang ("eng", "eng+deu"), quiet, with
// the page segmentation refbatch reads pages with. A missing language
// fails here, at the worker's start, not on the first page.
func newTess(lang string) (*tess, error) {
	api := C.TessBaseAPICreate()
	if api == nil {
		return nil, errors.New("creating Tesseract handle")
	}
	t := &tess{api: api}
	l := C.CString(lang)
	defer C.free(unsafe.Pointer(l))
	if rc := C.TessBaseAPIInit3(api, nil, l); rc != 0 {
		t.close()
		return nil, fmt.Errorf("initialising Tesseract for language %q: code %d", lang, int(rc))
	}
	// Page segmentation: one column of text of varying sizes (PSM 4).
	// Referral pages are a letterhead, labelled fields, paragraphs and
	// small tables; automatic layout (PSM 3) splits the tables into
	// columns read one after another, and a single uniform block (PSM 6)
	// merges the letterhead and speckle into the lines. On the
	// evaluation corpus: PSM 6 5.7% CER, PSM 3 3.8%, PSM 4 3.6% (2.4%
	// with despeckling). Tesseract's warnings would only push death
	// evidence out of the parent's stderr buffer.
	for _, v := range [][2]string{
		{"tessedit_pageseg_mode", strconv.Itoa(int(gosseract.PSM_SINGLE_COLUMN))},
		{"debug_file", "/dev/null"},
	} {
		if err := t.set(v[0], v[1]); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

// set sets a Tesseract variable.
func (t *tess) set(name, value string) error {
	n, v := C.CString(name), C.CString(value)
	defer C.free(unsafe.Pointer(n))
	defer C.free(unsafe.Pointer(v))
	if C.TessBaseAPISetVariable(t.api, n, v) == 0 {
		return fmt.Errorf("setting Tesseract variable %s to %q failed", name, value)
	}
	return nil
}

// words recognises img, rendered at dpi, and returns its words in reading
// order, numbered as Tesseract's TSV output numbers them.
func (t *tess) words(img *grayImage, dpi int) ([]gosseract.BoundingBox, error) {
	if img.w == 0 || img.h == 0 {
		return nil, nil
	}
	// A Pix made from memory carries no resolution; without this
	// Tesseract guesses it from the text size.
	if err := t.set("user_defined_dpi", strconv.Itoa(dpi)); err != nil {
		return nil, err
	}
	var out *C.ocr_word
	n := int(C.ocr_recognise(t.api, (*C.l_uint8)(unsafe.Pointer(&img.pix[0])), C.l_int32(img.w), C.l_int32(img.h), &out))
	if n < 0 {
		return nil, errors.New("the recognition failed (Tesseract returned an error)")
	}
	defer C.ocr_free_words(out, C.int(n))
	boxes := make([]gosseract.BoundingBox, n)
	for i, w := range unsafe.Slice(out, n) {
		boxes[i] = gosseract.BoundingBox{
			Box:        image.Rect(int(w.x0), int(w.y0), int(w.x1), int(w.y1)),
			Word:       C.GoString(w.text),
			Confidence: float64(w.conf),
			BlockNum:   int(w.block),
			ParNum:     int(w.par),
			LineNum:    int(w.line),
			WordNum:    int(w.word),
		}
	}
	return boxes, nil
}

// clear drops the last image and its results, which Tesseract otherwise
// keeps until the next recognition: through the next page's render, when
// memory peaks, and through idle time.
func (t *tess) clear() {
	C.TessBaseAPIClear(t.api)
}

func (t *tess) close() {
	if t != nil && t.api != nil {
		C.TessBaseAPIEnd(t.api)
		C.TessBaseAPIDelete(t.api)
		t.api = nil
	}
}

// tesseractVersion is the linked Tesseract's version ("5.3.0").
func tesseractVersion() string {
	return C.GoString(C.TessVersion())
}
