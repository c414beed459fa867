package ocr

/*
#include <stdlib.h>
#include <string.h>

// MuPDF's own declarations of the calls below, as go-fitz's MuPDF (1.24)
// has them. go-fitz links MuPDF into the binary but does not install its
// headers where this package can include them; the types are opaque
// here but for the three small geometry structs, which MuPDF has kept
// unchanged since 1.14.
typedef struct fz_context fz_context;
typedef struct fz_document fz_document;
typedef struct fz_page fz_page;
typedef struct fz_pixmap fz_pixmap;
typedef struct fz_device fz_device;
typedef struct fz_colorspace fz_colorspace;
typedef struct fz_separations fz_separations;
typedef struct fz_cookie fz_cookie;
typedef struct { float x0, y0, x1, y1; } fz_rect;
typedef struct { int x0, y0, x1, y1; } fz_irect;
typedef struct { float a, b, c, d, e, f; } fz_matrix;

fz_rect fz_bound_page(fz_context *ctx, fz_page *page);
fz_matrix fz_scale(float sx, float sy);
fz_rect fz_transform_rect(fz_rect rect, fz_matrix m);
fz_irect fz_round_rect(fz_rect rect);
fz_colorspace *fz_device_rgb(fz_context *ctx);
fz_pixmap *fz_new_pixmap_with_bbox(fz_context *ctx, fz_colorspace *cs, fz_irect bbox, fz_separations *seps, int alpha);
fz_pixmap *fz_new_pixmap_with_bbox_and_data(fz_context *ctx, fz_colorspace *cs, fz_irect bbox, fz_separations *seps, int alpha, unsigned char *samples);
void fz_clear_pixmap_with_value(fz_context *ctx, fz_pixmap *pix, int value);
fz_device *fz_new_draw_device(fz_context *ctx, fz_matrix transform, fz_pixmap *dest);
void fz_enable_device_hints(fz_context *ctx, fz_device *dev, int hints);
void fz_close_device(fz_context *ctx, fz_device *dev);
void fz_drop_device(fz_context *ctx, fz_device *dev);
void fz_drop_pixmap(fz_context *ctx, fz_pixmap *pix);
void fz_drop_page(fz_context *ctx, fz_page *page);
unsigned char *fz_pixmap_samples(fz_context *ctx, const fz_pixmap *pix);
int fz_pixmap_stride(fz_context *ctx, const fz_pixmap *pix);

// go-fitz's wrappers, which catch MuPDF's errors where the bare calls
// would end the process.
fz_page *load_page(fz_context *ctx, fz_document *doc, int number);
int run_page_contents(fz_context *ctx, fz_page *page, fz_device *dev, fz_matrix transform, fz_cookie *cookie);

enum { FZ_NO_CACHE = 2 };

// rb_paper sets white, in 256ths, to what scales each channel of the
// page's w×h RGBA pixels (stride bytes a row) so that its paper is
// white: the paper is each channel's median over a grid of about 128
// pixels across, since most of a page is paper. Colour is seen against
// the paper, as a person sees it: on yellowed or tinted paper the edges
// of black print take the paper's tint, and are no coloured ink.
static void rb_paper(const unsigned char *rgba, int stride, int w, int h, int white[3]) {
	unsigned counts[3][256];
	memset(counts, 0, sizeof counts);
	int s = w / 128 > 1 ? w / 128 : 1;
	unsigned n = 0;
	for (int y = 0; y < h; y += s) {
		const unsigned char *row = rgba + (long long)y * stride;
		for (int x = 0; x < w; x += s, n++)
			for (int c = 0; c < 3; c++)
				counts[c][row[4 * x + c]]++;
	}
	for (int c = 0; c < 3; c++) {
		unsigned seen = 0;
		int v = 0;
		while (v < 255 && 2 * (seen + counts[c][v]) <= n)
			seen += counts[c][v++];
		white[c] = 255 * 256 / (v < 64 ? 64 : v);
	}
}

// rb_hue writes into hrow, a row of the hue plane (see huePlane: two
// bytes for each step×step block of pixels, hue and chroma), the colour of the
// ink of row, a row of w RGBA pixels whose gray values are in dst, each
// channel scaled by white (see rb_paper): a block keeps the hue and
// chroma (its largest channel less its smallest) of its most coloured
// pixel of chroma 16 or more and gray value 215 or less, darker than
// paper. It returns the number of pixels of chroma 64 or more among them.
static long long rb_hue(const unsigned char *row, const unsigned char *dst, int w, int step, const int white[3], unsigned char *hrow) {
	enum { least = 16, luma = 215, strong = 64 };
	long long n = 0;
	for (int x = 0; x < w; x++) {
		if (dst[x] > luma)
			continue;
		int r = row[4 * x] * white[0] >> 8, g = row[4 * x + 1] * white[1] >> 8, b = row[4 * x + 2] * white[2] >> 8;
		r = r > 255 ? 255 : r;
		g = g > 255 ? 255 : g;
		b = b > 255 ? 255 : b;
		int mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
		int mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
		int c = mx - mn;
		unsigned char *cell = hrow + 2 * (x / step);
		if (c < least || c <= cell[1])
			continue;
		int deg = mx == r ? 60 * (g - b) / c : mx == g ? 120 + 60 * (b - r) / c : 240 + 60 * (r - g) / c;
		if (deg < 0)
			deg += 360;
		cell[0] = 1 + deg * 254 / 360;
		cell[1] = c;
		n += c >= strong;
	}
	return n;
}

// rb_gray writes the w×h RGBA pixels at rgba (stride bytes a row) into
// gray in ITU-R 601 luma, the weights image/color uses, and adds the
// count of each value to hist. The pixmap is opaque white underneath, so
// alpha is ignored. A row is turned gray first and counted after, in
// four tables taken in turn: a page is mostly one paper value, and one
// table would have each count wait on the one before (a third of the
// function's time on a white page). When hue is not NULL, the hue plane
// of the page (2 bytes a block of step×step pixels, see rb_hue), against
// its paper (rb_paper), is written there
// and the number of strongly coloured pixels added to *coloured.
__attribute__((optimize("tree-vectorize")))
static void rb_gray(const unsigned char *rgba, int stride, int w, int h, unsigned char *gray, long long *hist, unsigned char *hue, int step, long long *coloured) {
	unsigned counts[4][256];
	if (w <= 0 || h <= 0)
		return;
	memset(counts, 0, sizeof counts);
	int white[3];
	if (hue != NULL)
		rb_paper(rgba, stride, w, h, white);
	for (int y = 0; y < h; y++) {
		const unsigned char *row = rgba + (long long)y * stride;
		unsigned char *dst = gray + (long long)y * w;
		for (int x = 0; x < w; x++) {
			unsigned r = row[4 * x], g = row[4 * x + 1], b = row[4 * x + 2];
			dst[x] = (19595 * r + 38470 * g + 7471 * b + (1u << 15)) >> 16;
		}
		if (hue != NULL) {
			int hw = (w + step - 1) / step;
			unsigned char *hrow = hue + (long long)(y / step) * 2 * hw;
			if (y % step == 0)
				memset(hrow, 0, 2 * (size_t)hw);
			*coloured += rb_hue(row, dst, w, step, white, hrow);
		}
		int x = 0;
		for (; x + 4 <= w; x += 4) {
			counts[0][dst[x]]++;
			counts[1][dst[x + 1]]++;
			counts[2][dst[x + 2]]++;
			counts[3][dst[x + 3]]++;
		}
		for (; x < w; x++)
			counts[0][dst[x]]++;
	}
	for (int v = 0; v < 256; v++)
		hist[v] += (long long)counts[0][v] + counts[1][v] + counts[2][v] + counts[3][v];
}

// rb_load loads page n and gives its box in pixels at dpi; NULL when
// MuPDF cannot load it.
static fz_page *rb_load(fz_context *ctx, fz_document *doc, int n, float dpi, fz_irect *box) {
	fz_page *page = load_page(ctx, doc, n);
	if (page == NULL)
		return NULL;
	*box = fz_round_rect(fz_transform_rect(fz_bound_page(ctx, page), fz_scale(dpi / 72, dpi / 72)));
	return page;
}

// rb_draw draws page at dpi exactly as go-fitz's ImageDPI does (RGBA
// over opaque white, MuPDF's store bypassed), in samples when it is not
// NULL (4 bytes a pixel of box), then turns it gray into gray (box's
// width × height bytes) with rb_gray, and its hue plane into hue when
// it is not NULL, and drops page. It returns 0, or 1
// when the pixmap could not be made and 2 when the page's contents could
// not be run. As in ImageDPI, a pixmap or device MuPDF cannot allocate
// ends the process: the worker, whose death its pool reports.
static int rb_draw(fz_context *ctx, fz_page *page, float dpi, fz_irect box, unsigned char *samples, unsigned char *gray, long long *hist, unsigned char *hue, int step, long long *coloured) {
	int w = box.x1 - box.x0, h = box.y1 - box.y0, rc = 0;
	fz_matrix ctm = fz_scale(dpi / 72, dpi / 72), identity = {1, 0, 0, 1, 0, 0};
	fz_pixmap *pix = samples != NULL
		? fz_new_pixmap_with_bbox_and_data(ctx, fz_device_rgb(ctx), box, NULL, 1, samples)
		: fz_new_pixmap_with_bbox(ctx, fz_device_rgb(ctx), box, NULL, 1);
	if (pix == NULL) {
		fz_drop_page(ctx, page);
		return 1;
	}
	fz_clear_pixmap_with_value(ctx, pix, 0xff);
	fz_device *dev = fz_new_draw_device(ctx, ctm, pix);
	fz_enable_device_hints(ctx, dev, FZ_NO_CACHE);
	if (!run_page_contents(ctx, page, dev, identity, NULL))
		rc = 2;
	fz_close_device(ctx, dev);
	fz_drop_device(ctx, dev);
	if (rc == 0)
		rb_gray(fz_pixmap_samples(ctx, pix), fz_pixmap_stride(ctx, pix), w, h, gray, hist, hue, step, coloured);
	fz_drop_pixmap(ctx, pix);
	fz_drop_page(ctx, page);
	return rc;
}
*/
import "C"

import (
	"reflect"
	"unsafe"

	"github.com/gen2brain/go-fitz"
)

// fitzHandles are the offsets of a fitz.Document's MuPDF context and
// document, found by name, and whether both were found.
var fitzHandles = func() (h struct {
	ctx, doc uintptr
	ok       bool
}) {
	t := reflect.TypeFor[fitz.Document]()
	ctx, ok1 := t.FieldByName("ctx")
	doc, ok2 := t.FieldByName("doc")
	h.ctx, h.doc = ctx.Offset, doc.Offset
	h.ok = ok1 && ok2 && ctx.Type.Kind() == reflect.Pointer && doc.Type.Kind() == reflect.Pointer
	return h
}()

// rgbaToGray is rb_gray over Go memory: grayImage.fromRGBA's conversion,
// the same code as the worker's render, with the hue plane into hue when
// it is not nil.
func rgbaToGray(rgba []byte, stride, w, h int, gray []byte, hist *[256]int, hue *huePlane) {
	if w == 0 || h == 0 {
		return
	}
	out, step, coloured := hue.prepare(w, h)
	C.rb_gray((*C.uchar)(unsafe.Pointer(&rgba[0])), C.int(stride), C.int(w), C.int(h),
		(*C.uchar)(unsafe.Pointer(&gray[0])), (*C.longlong)(unsafe.Pointer(&hist[0])), out, step, coloured)
}

// keptPixmap is the most pixmap memory a worker keeps from page to page:
// a Letter or A4 page at 300 dpi, with room. Drawn into fresh memory,
// each page's 34 MB pixmap was 8,200 page faults the kernel mapped and
// cleared, most of a worker's system time; a larger page gets memory of
// its own, given back once drawn.
const keptPixmap = 48 << 20

// pixmapMemory is C memory for the pixmaps pages are drawn in, kept
// between pages up to keptPixmap bytes.
type pixmapMemory struct {
	p unsafe.Pointer
	n int
}

// get returns n bytes of it, or nil when n is over keptPixmap (or m is
// nil) and MuPDF is to allocate the pixmap itself.
func (m *pixmapMemory) get(n int) unsafe.Pointer {
	if m == nil || n > keptPixmap {
		return nil
	}
	if m.n < n {
		m.free()
		m.p = C.malloc(C.size_t(n))
		if m.p == nil {
			return nil
		}
		m.n = n
	}
	return m.p
}

func (m *pixmapMemory) free() {
	C.free(m.p)
	m.p, m.n = nil, 0
}

// renderGray draws page index of doc at dpi into g, its hue plane into
// hue (nil: none), the pixmap in mem (nil: memory of its own), and
// returns the histogram of its gray values. The pixels are the ones
// go-fitz's ImageDPI gives, turned gray as grayImage.fromRGBA turns
// them, but without ImageDPI's two Go copies of MuPDF's RGBA pixmap (34
// MB each for a Letter page at 300 dpi): those were garbage the moment
// the page was gray, and the worker's heap kept the room for them beside
// Tesseract's. go-fitz has no call that draws into a caller's buffer, so
// this reaches its document's MuPDF handles by field name; when a
// go-fitz release renames them, it falls back to ImageDPI.
func renderGray(doc *fitz.Document, index, dpi int, g *grayImage, hue *huePlane, mem *pixmapMemory) (hist [256]int, err error) {
	if !fitzHandles.ok {
		img, err := doc.ImageDPI(index, float64(dpi))
		if err != nil {
			return hist, err
		}
		return g.fromRGBAHue(img, hue), nil
	}
	base := unsafe.Pointer(doc)
	ctx := *(**C.fz_context)(unsafe.Add(base, fitzHandles.ctx))
	d := *(**C.fz_document)(unsafe.Add(base, fitzHandles.doc))
	var box C.fz_irect
	page := C.rb_load(ctx, d, C.int(index), C.float(dpi), &box)
	if page == nil {
		return hist, fitz.ErrLoadPage
	}
	w, h := int(box.x1-box.x0), int(box.y1-box.y0)
	g.resize(w, h)
	var out *C.uchar
	if len(g.pix) > 0 {
		out = (*C.uchar)(unsafe.Pointer(&g.pix[0]))
	}
	samples := (*C.uchar)(mem.get(4 * w * h))
	hueOut, step, coloured := hue.prepare(w, h)
	switch C.rb_draw(ctx, page, C.float(dpi), box, samples, out, (*C.longlong)(unsafe.Pointer(&hist[0])), hueOut, step, coloured) {
	case 1:
		return hist, fitz.ErrCreatePixmap
	case 2:
		return hist, fitz.ErrRunPageContents
	}
	return hist, nil
}

// prepare sizes p for a render of w×h pixels in blocks of its step and
// clears its count, and returns where rb_gray is to write it: NULL for a
// nil p.
func (p *huePlane) prepare(w, h int) (*C.uchar, C.int, *C.longlong) {
	if p == nil || w <= 0 || h <= 0 {
		return nil, 1, nil
	}
	p.resize(w, h)
	p.coloured = 0
	return (*C.uchar)(unsafe.Pointer(&p.pix[0])), C.int(p.step), (*C.longlong)(unsafe.Pointer(&p.coloured))
}
