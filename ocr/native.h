// Helpers for the Leptonica and Tesseract C APIs that refbatch calls
// directly: moving gray pages between Go memory and Leptonica's Pix,
// estimating skew, rotating, orientation detection, and the connected
// components of ink.

#include <leptonica/allheaders.h>
#include <tesseract/capi.h>

PIX *ocr_gray_pix(const l_uint8 *px, l_int32 w, l_int32 h);
void ocr_pix_gray(PIX *pix, l_uint8 *dst);
int ocr_find_skew(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh,
		l_float32 range, l_float32 *angle, l_float32 *conf);
PIX *ocr_rotate(const l_uint8 *px, l_int32 w, l_int32 h, l_float32 deg, l_uint8 fill);
int ocr_osd_detect(TessBaseAPI *api, const l_uint8 *px, l_int32 w, l_int32 h,
		int dpi, int *deg, float *conf);
int ocr_orient_detect(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh, int reduce,
		l_float32 *upconf, l_float32 *leftconf);
l_int32 ocr_glyphs(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh,
		l_int32 minh, l_int32 maxh);
l_int32 *ocr_components(const l_uint8 *mask, l_int32 w, l_int32 h, l_int32 *n);
void ocr_min_reduce2(const l_uint8 *px, l_int32 w, l_int32 h, l_uint8 *dst);
void ocr_ink_mask(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 tile, l_int32 tx,
		const l_int32 *levels, l_int32 contrast, l_uint8 *mask);
void ocr_tile_levels(const l_uint8 *px, l_int32 w, l_int32 h, l_int32 tile, l_float32 share, l_int32 *levels);
void ocr_drop_rules(l_uint8 *mask, l_int32 w, l_int32 h, l_int32 min_len);
l_int32 ocr_despeckle(l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh,
		l_int32 maxw, l_int32 maxh, l_uint8 paper);
