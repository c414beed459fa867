package ocr

// #cgo LDFLAGS: -lleptonica
// #include <stdlib.h>
// #include <leptonica/allheaders.h>
import "C"

import (
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
