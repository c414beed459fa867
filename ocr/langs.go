package ocr

// #include <stdlib.h>
// #include "native.h"
import "C"

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"
)

// OSDLanguage is the model orientation detection loads (osd.traineddata).
const OSDLanguage = "osd"

// LanguageError says that languages a run needs have no traineddata in
// the folder Tesseract reads them from.
type LanguageError struct {
	Missing   []string // the languages asked for that the folder lacks, in the order asked
	Installed []string // the languages the folder holds, sorted
	Dir       string   // Tesseract's data folder
}

// Error names the missing languages, the folder and what it holds.
func (e *LanguageError) Error() string {
	installed := strings.Join(e.Installed, ", ")
	if installed == "" {
		installed = "none"
	}
	return fmt.Sprintf("no Tesseract data for %s in %s (installed: %s)", strings.Join(e.Missing, ", "), e.Dir, installed)
}

// errNoDataDir means Tesseract could not say where its data folder is.
var errNoDataDir = errors.New("tesseract gave no data folder")

// Languages returns the folder Tesseract reads its traineddata from and
// the languages it holds, as `tesseract --list-langs` lists them. It asks
// the library the workers use, initialised without a language (which
// loads no model: about 2 ms), so the folder is found by the library's
// own rule: TESSDATA_PREFIX when set, else the folder it was built with.
func Languages() (dir string, langs []string, err error) {
	api := C.TessBaseAPICreate()
	if api == nil {
		return "", nil, errors.New("creating a Tesseract handle")
	}
	defer C.TessBaseAPIDelete(api)
	defer C.TessBaseAPIEnd(api)
	if rc := C.TessBaseAPIInit3(api, nil, nil); rc != 0 {
		return "", nil, fmt.Errorf("initialising Tesseract without a language: code %d", int(rc))
	}
	dir = C.GoString(C.TessBaseAPIGetDatapath(api))
	if dir == "" {
		return "", nil, errNoDataDir
	}
	list := C.TessBaseAPIGetAvailableLanguagesAsVector(api)
	if list != nil {
		defer C.TessDeleteTextArray(list)
		for p := list; *p != nil; p = (**C.char)(unsafe.Add(unsafe.Pointer(p), unsafe.Sizeof(*p))) {
			langs = append(langs, C.GoString(*p))
		}
	}
	slices.Sort(langs)
	return dir, langs, nil
}

// CheckLanguages returns a *LanguageError when a language of lang
// ("eng+fra"; a "~lang", which Tesseract is told not to load, is not
// needed), or the osd model when orientation detection is on, has no
// traineddata in Tesseract's data folder: a worker would fail to start
// for lack of it, or, for one of several languages, quietly read without
// it. When the library cannot say where its data is, it returns nil and
// leaves the verdict to the workers' start.
func CheckLanguages(lang string, orientation bool) error {
	dir, installed, err := Languages()
	if err != nil {
		return nil
	}
	need := strings.Split(lang, "+")
	if orientation {
		need = append(need, OSDLanguage)
	}
	var missing []string
	for _, l := range need {
		if l == "" || strings.HasPrefix(l, "~") || slices.Contains(installed, l) || slices.Contains(missing, l) {
			continue
		}
		missing = append(missing, l)
	}
	if len(missing) > 0 {
		return &LanguageError{Missing: missing, Installed: installed, Dir: dir}
	}
	return nil
}
