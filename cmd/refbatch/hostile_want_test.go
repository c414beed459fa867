package main

// hostileWant is the outcome TestHostileFixtures expects of the hostile
// fixtures that admission itself must refuse, with no OCR: the images
// the renderer would allocate over the pixel cap, sized from an inline
// image's dictionary or from a codec's own header (issue 28, failure 3:
// such a page took a 2.4 GB worker).
var hostileWant = map[string]string{
	"inline-image.pdf":        "rejected/page_too_large",
	"inline-image-form.pdf":   "rejected/page_too_large",
	"inline-image-type3.pdf":  "rejected/page_too_large",
	"jbig2-page-size.pdf":     "rejected/page_too_large",
	"jpeg-frame-size.pdf":     "rejected/page_too_large",
	"jpx-image-size.pdf":      "rejected/page_too_large",
	"ccitt-columns-large.pdf": "rejected/page_too_large",
}
