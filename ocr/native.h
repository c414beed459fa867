// Helpers for the Leptonica and Tesseract C APIs that refbatch calls
// directly: moving gray pages between Go memory and Leptonica's Pix,
// estimating skew, rotating, and orientation detection.

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
l_int32 ocr_despeckle(l_uint8 *px, l_int32 w, l_int32 h, l_int32 thresh,
		l_int32 maxw, l_int32 maxh, l_uint8 paper);
