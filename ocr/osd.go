package ocr

// #include <stdlib.h>
// #include "native.h"
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// osd is a Tesseract handle initialised with the osd model and the legacy
// engine, which orientation detection needs: refbatch's eng model is
// LSTM-only, so the recognition handle cannot detect orientation itself.
// A child makes at most one, the first time a page needs it.
type osd struct {
	api *C.TessBaseAPI
}

// newOSD initialises the orientation handle.
func newOSD() (*osd, error) {
	api := C.TessBaseAPICreate()
	if api == nil {
		return nil, errors.New("creating Tesseract orientation handle")
	}
	lang := C.CString("osd")
	defer C.free(unsafe.Pointer(lang))
	if rc := C.TessBaseAPIInit2(api, nil, lang, C.OEM_TESSERACT_ONLY); rc != 0 {
		C.TessBaseAPIDelete(api)
		return nil, fmt.Errorf("initialising Tesseract orientation detection (is osd.traineddata installed?): code %d", int(rc))
	}
	// Quiet, for the same reason as the recognition handle.
	name, value := C.CString("debug_file"), C.CString("/dev/null")
	defer C.free(unsafe.Pointer(name))
	defer C.free(unsafe.Pointer(value))
	C.TessBaseAPISetVariable(api, name, value)
	return &osd{api: api}, nil
}

// detect returns the clockwise rotation, in degrees (0, 90, 180 or 270), by
// which img's text is turned, and Tesseract's confidence in it (about 15 and
// up is sure; under 2 is a guess). ok is false when the image holds too
// little text to decide.
func (o *osd) detect(img *grayImage, dpi int) (deg int, conf float64, ok bool) {
	if img.w == 0 || img.h == 0 {
		return 0, 0, false
	}
	var d C.int
	var c C.float
	if C.ocr_osd_detect(o.api, (*C.l_uint8)(unsafe.Pointer(&img.pix[0])), C.l_int32(img.w), C.l_int32(img.h),
		C.int(dpi), &d, &c) == 0 {
		return 0, 0, false
	}
	return int(d), float64(c), true
}

func (o *osd) close() {
	if o != nil && o.api != nil {
		C.TessBaseAPIEnd(o.api)
		C.TessBaseAPIDelete(o.api)
		o.api = nil
	}
}
