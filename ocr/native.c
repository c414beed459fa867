#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "native.h"

// VECTORISE lets GCC vectorise a function's loops: integer minimums and
// comparisons, the same results in fewer instructions.
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORISE __attribute__((optimize("tree-vectorize")))
#else
#define VECTORISE
#endif

// ocr_gray_pix copies w×h gray bytes, rows packed, into a new 8 bpp Pix.
// Leptonica packs pixels into 32-bit words, most significant byte first,
// which SET_DATA_BYTE accounts for on either byte order; on a
// little-endian machine four pixels are one byte-swapped word.
VECTORISE PIX *ocr_gray_pix(const l_uint8 *px, l_int32 w, l_int32 h) {
	PIX *pix = pixCreateNoInit(w, h, 8);
	if (pix == NULL) return NULL;
	l_uint32 *data = pixGetData(pix);
	l_int32 wpl = pixGetWpl(pix);
	for (l_int32 y = 0; y < h; y++) {
		l_uint32 *line = data + (size_t)y * wpl;
		const l_uint8 *row = px + (size_t)y * w;
		l_int32 x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		for (; x + 4 <= w; x += 4) {
			l_uint32 v;
			memcpy(&v, row + x, 4);
			line[x >> 2] = __builtin_bswap32(v);
		}
#endif
		for (; x < w; x++) SET_DATA_BYTE(line, x, row[x]);
	}
	return pix;
}

// ocr_range_pix makes a 1 bpp Pix of the bytes in [lo, hi) of w×h bytes,
// rows packed (1 is black in Leptonica's binary images). Each 32-bit
// word of the Pix is made whole from its 32 bytes, most significant bit
// first as SET_DATA_BIT sets them, and stored once: setting the bits one
// at a time, a read, a write and a branch on every pixel of the page,
// was 2.5% of the CPU of reading the evaluation corpus. The 32 tests are
// made side by side into bytes of 0 or 1 (v is in [lo, hi) when v - lo,
// a byte, is under hi - lo), and each 8 of those gathered into a byte by
// one multiplication: byte k (k from 0, the lowest on a little-endian
// machine) times 0x8040201008040201 puts its 1 at bit 63 - k, and no two
// products meet below, so no carry reaches the top byte.
VECTORISE static PIX *ocr_range_pix(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 lo, l_int32 hi) {
	PIX *pix = pixCreate(w, h, 1);
	if (lo < 0) lo = 0;
	if (hi > 256) hi = 256;
	if (pix == NULL || hi <= lo) return pix;
	l_uint32 *data = pixGetData(pix);
	l_int32 wpl = pixGetWpl(pix);
	l_uint8 base = (l_uint8)lo, span = (l_uint8)(hi - lo - 1); // in when v - lo <= span
	l_uint8 in[32];
	for (l_int32 y = 0; y < h; y++) {
		l_uint32 *line = data + (size_t)y * wpl;
		const l_uint8 *row = px + (size_t)y * w;
		for (l_int32 x0 = 0; x0 < w; x0 += 32) {
			if (w - x0 >= 32) {
				for (l_int32 k = 0; k < 32; k++)
					in[k] = (l_uint8)(row[x0 + k] - base) <= span;
			} else {
				for (l_int32 k = 0; k < 32; k++)
					in[k] = x0 + k < w && (l_uint8)(row[x0 + k] - base) <= span;
			}
			l_uint32 word = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			for (l_int32 q = 0; q < 4; q++) {
				unsigned long long v;
				memcpy(&v, in + 8 * q, 8);
				word |= (l_uint32)((v * 0x8040201008040201ull) >> 56) << (24 - 8 * q);
			}
#else
			for (l_int32 k = 0; k < 32; k++)
				word |= (l_uint32)in[k] << (31 - k);
#endif
			line[x0 >> 5] = word;
		}
	}
	return pix;
}

// ocr_binary_pix makes a 1 bpp Pix of the pixels darker than thresh.
static PIX *ocr_binary_pix(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh) {
	return ocr_range_pix(px, w, h, 0, thresh);
}

// ocr_pix_gray copies an 8 bpp Pix into dst, w×h bytes, rows packed
// (ocr_gray_pix the other way).
VECTORISE void ocr_pix_gray(PIX *pix, l_uint8 *dst) {
	l_int32 w = pixGetWidth(pix), h = pixGetHeight(pix);
	l_uint32 *data = pixGetData(pix);
	l_int32 wpl = pixGetWpl(pix);
	for (l_int32 y = 0; y < h; y++) {
		l_uint32 *line = data + (size_t)y * wpl;
		l_uint8 *row = dst + (size_t)y * w;
		l_int32 x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		for (; x + 4 <= w; x += 4) {
			l_uint32 v = __builtin_bswap32(line[x >> 2]);
			memcpy(row + x, &v, 4);
		}
#endif
		for (; x < w; x++) row[x] = GET_DATA_BYTE(line, x);
	}
}

// ocr_find_skew estimates the skew of the text lines of a gray image
// binarised at thresh, sweeping ±range degrees in 1 degree steps at 4×
// reduction and refining by binary search at 2×. It returns 0 on success.
int ocr_find_skew(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh,
		l_float32 range, l_float32 *angle, l_float32 *conf) {
	PIX *pix = ocr_binary_pix(px, w, h, thresh);
	if (pix == NULL) return 1;
	l_float32 endscore = 0;
	l_ok err = pixFindSkewSweepAndSearchScore(pix, angle, conf, &endscore,
		4, 2, 0.0, range, 1.0, 0.01);
	pixDestroy(&pix);
	return err;
}

// ocr_rotate rotates a gray image by deg degrees (clockwise is positive,
// as for Leptonica's skew angle) with area mapping, on a canvas enlarged
// to the rotated page's bounding box so no pixel is lost. Everything
// brought in (the border and the corners) is fill: pixRotate can bring in
// only white or black, and white corners around grey paper make a
// global threshold, Tesseract's among them, take the paper for ink. The
// caller frees the result.
PIX *ocr_rotate(const l_uint8 *px, l_int32 w, l_int32 h, l_float32 deg, l_uint8 fill) {
	PIX *pix = ocr_gray_pix(px, w, h);
	if (pix == NULL) return NULL;
	double rad = fabs(deg) * M_PI / 180.0;
	l_int32 wnew = (l_int32)ceil(w * cos(rad) + h * sin(rad));
	l_int32 hnew = (l_int32)ceil(w * sin(rad) + h * cos(rad));
	l_int32 left = wnew > w ? (wnew - w) / 2 : 0, top = hnew > h ? (hnew - h) / 2 : 0;
	l_int32 right = wnew > w ? wnew - w - left : 0, bot = hnew > h ? hnew - h - top : 0;
	PIX *big = pixAddBorderGeneral(pix, left, right, top, bot, fill);
	pixDestroy(&pix);
	if (big == NULL) return NULL;
	PIX *rot = pixRotateAMGray(big, deg * (l_float32)(M_PI / 180.0), fill);
	pixDestroy(&big);
	return rot;
}

// ocr_osd_detect runs Tesseract's orientation detection on a gray image.
// It returns 1 when Tesseract found enough text to decide.
int ocr_osd_detect(TessBaseAPI *api, const l_uint8 *px, l_int32 w, l_int32 h,
		int dpi, int *deg, float *conf) {
	PIX *pix = ocr_gray_pix(px, w, h);
	if (pix == NULL) return 0;
	TessBaseAPISetImage2(api, pix);
	TessBaseAPISetSourceResolution(api, dpi);
	BOOL ok = TessBaseAPIDetectOrientationScript(api, deg, conf, NULL, NULL);
	// Tesseract keeps its own copies until the next image; drop them so an
	// idle handle holds no page.
	TessBaseAPIClear(api);
	pixDestroy(&pix);
	return ok ? 1 : 0;
}

// ocr_orient_detect runs Leptonica's text orientation test
// (pixOrientDetect) on the image binarised at thresh, first reduced by 2
// when reduce is not 0.
int ocr_orient_detect(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh, int reduce,
		l_float32 *upconf, l_float32 *leftconf) {
	PIX *pix = ocr_binary_pix(px, w, h, thresh);
	if (pix == NULL) return 1;
	if (reduce) {
		PIX *r = pixReduceRankBinary2(pix, 1, NULL);
		pixDestroy(&pix);
		if (r == NULL) return 1;
		pix = r;
	}
	l_ok err = pixOrientDetect(pix, upconf, leftconf, 0, 0);
	pixDestroy(&pix);
	return err;
}

// ocr_glyphs counts the 8-connected components of the pixels darker than
// thresh whose bounding box is from minh to maxh pixels high: about the
// height of a printed character or word. It returns -1 on an allocation
// failure.
l_int32 ocr_glyphs(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh,
		l_int32 minh, l_int32 maxh) {
	PIX *pix = ocr_binary_pix(px, w, h, thresh);
	if (pix == NULL) return -1;
	BOXA *boxa = pixConnCompBB(pix, 8);
	pixDestroy(&pix);
	if (boxa == NULL) return -1;
	l_int32 n = boxaGetCount(boxa), count = 0;
	for (l_int32 i = 0; i < n; i++) {
		l_int32 bh;
		if (boxaGetBoxGeometry(boxa, i, NULL, NULL, NULL, &bh) != 0) continue;
		if (bh >= minh && bh <= maxh) count++;
	}
	boxaDestroy(&boxa);
	return count;
}

// ocr_despeckle paints the paper value over every 8-connected component of
// the pixels darker than thresh whose bounding box is at most maxw wide and
// maxh high, in place. It returns how many pixels it painted, -1 on an
// allocation failure.
l_int32 ocr_despeckle(l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh,
		l_int32 maxw, l_int32 maxh, l_uint8 paper) {
	PIX *pix = ocr_binary_pix(px, w, h, thresh);
	if (pix == NULL) return -1;
	l_int32 changed = 0;
	PIX *small = pixSelectBySize(pix, maxw, maxh, 8, L_SELECT_IF_BOTH, L_SELECT_IF_LTE, &changed);
	pixDestroy(&pix);
	if (small == NULL) return -1;
	l_uint32 *data = pixGetData(small);
	l_int32 wpl = pixGetWpl(small);
	l_int32 painted = 0;
	// Specks are few: whole words without one are passed over.
	for (l_int32 y = 0; y < h; y++) {
		l_uint32 *line = data + (size_t)y * wpl;
		l_uint8 *row = px + (size_t)y * w;
		for (l_int32 x0 = 0; x0 < w; x0 += 32) {
			l_uint32 word = line[x0 >> 5];
			if (word == 0) continue;
			l_int32 n = w - x0 < 32 ? w - x0 : 32;
			for (l_int32 k = 0; k < n; k++) {
				if (word & (0x80000000u >> k)) {
					row[x0 + k] = paper;
					painted++;
				}
			}
		}
	}
	pixDestroy(&small);
	return painted;
}

// ocr_components finds the 8-connected components of a mask of w×h bytes
// (non-zero is ink) and returns their bounding boxes as x, y, w, h in a
// malloc'd array the caller frees, and their count in n. It returns NULL
// on an allocation failure, and for no component.
l_int32 *ocr_components(const l_uint8 *mask, l_int32 w, l_int32 h, l_int32 *n) {
	*n = 0;
	PIX *pix = ocr_range_pix(mask, w, h, 1, 256); // non-zero is ink
	if (pix == NULL) return NULL;
	BOXA *boxa = pixConnCompBB(pix, 8);
	pixDestroy(&pix);
	if (boxa == NULL) return NULL;
	l_int32 count = boxaGetCount(boxa);
	l_int32 *out = count > 0 ? malloc(sizeof(l_int32) * 4 * (size_t)count) : NULL;
	if (out != NULL) {
		for (l_int32 i = 0; i < count; i++) {
			boxaGetBoxGeometry(boxa, i, &out[4*i], &out[4*i+1], &out[4*i+2], &out[4*i+3]);
		}
		*n = count;
	}
	boxaDestroy(&boxa);
	return out;
}

// ocr_min_reduce2 reduces a w×h gray image by 2 into dst ((w/2)×(h/2)),
// each pixel the darkest of its 2×2 block, so thin strokes survive.
// Vectorised (cgo builds at -O2, where GCC does not vectorise it): the
// coverage step reduces and masks every page.
VECTORISE void ocr_min_reduce2(const l_uint8 *px, l_int32 w, l_int32 h, l_uint8 *dst) {
	l_int32 ow = w / 2, oh = h / 2;
	for (l_int32 y = 0; y < oh; y++) {
		const l_uint8 *a = px + (size_t)(2 * y) * w;
		const l_uint8 *b = a + w;
		l_uint8 *d = dst + (size_t)y * ow;
		for (l_int32 x = 0; x < ow; x++) {
			l_uint8 m = a[2*x] < a[2*x+1] ? a[2*x] : a[2*x+1];
			l_uint8 n = b[2*x] < b[2*x+1] ? b[2*x] : b[2*x+1];
			d[x] = m < n ? m : n;
		}
	}
}

// ocr_ink_mask sets mask (w×h bytes) to 1 where a pixel of the gray image
// is at least contrast darker than levels[tile], the paper of its
// tile×tile tile (levels has one value per tile, row by row, tx a row),
// and to 0 elsewhere.
VECTORISE void ocr_ink_mask(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 tile, l_int32 tx,
		const l_int32 *levels, l_int32 contrast, l_uint8 *mask) {
	for (l_int32 y = 0; y < h; y++) {
		const l_uint8 *row = px + (size_t)y * w;
		l_uint8 *out = mask + (size_t)y * w;
		const l_int32 *lv = levels + (size_t)(y / tile) * tx;
		for (l_int32 i = 0; i < tx; i++) {
			l_int32 x0 = i * tile, x1 = x0 + tile < w ? x0 + tile : w;
			l_int32 cut = lv[i] - contrast;
			for (l_int32 x = x0; x < x1; x++) out[x] = (l_int32)row[x] <= cut;
		}
	}
}

// ocr_tile_levels sets levels (one per tile×tile tile, row by row) to the
// gray value below which share (0 to 1) of the tile's pixels lie.
void ocr_tile_levels(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 tile, l_float32 share, l_int32 *levels) {
	l_int32 tx = (w + tile - 1) / tile, ty = (h + tile - 1) / tile;
	l_int32 *hist = calloc((size_t)tx * 256, sizeof(l_int32));
	if (hist == NULL) return;
	for (l_int32 j = 0; j < ty; j++) {
		memset(hist, 0, sizeof(l_int32) * 256 * (size_t)tx);
		l_int32 y1 = (j + 1) * tile < h ? (j + 1) * tile : h;
		for (l_int32 y = j * tile; y < y1; y++) {
			const l_uint8 *row = px + (size_t)y * w;
			for (l_int32 i = 0; i < tx; i++) {
				l_int32 *hi = hist + (size_t)i * 256;
				l_int32 x1 = (i + 1) * tile < w ? (i + 1) * tile : w;
				for (l_int32 x = i * tile; x < x1; x++) hi[row[x]]++;
			}
		}
		for (l_int32 i = 0; i < tx; i++) {
			l_int32 x1 = (i + 1) * tile < w ? (i + 1) * tile : w;
			l_int32 n = (x1 - i * tile) * (y1 - j * tile);
			l_int32 want = (l_int32)(share * n), seen = 0, v = 0;
			const l_int32 *hi = hist + (size_t)i * 256;
			for (v = 0; v < 256; v++) {
				seen += hi[v];
				if (seen > want) break;
			}
			levels[(size_t)j * tx + i] = v < 256 ? v : 255;
		}
	}
	free(hist);
}

// ocr_drop_rules clears every horizontal run of non-zero bytes min_len
// long or more from the mask (w×h bytes).
void ocr_drop_rules(l_uint8 *mask, l_int32 w, l_int32 h, l_int32 min_len) {
	for (l_int32 y = 0; y < h; y++) {
		l_uint8 *row = mask + (size_t)y * w;
		for (l_int32 x = 0; x < w;) {
			if (!row[x]) { x++; continue; }
			l_int32 end = x;
			while (end < w && row[end]) end++;
			if (end - x >= min_len) memset(row + x, 0, (size_t)(end - x));
			x = end;
		}
	}
}
