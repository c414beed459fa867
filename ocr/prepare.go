package ocr

import (
	"fmt"
	"math"
)

// The thresholds of the page steps. Each was chosen by measurement on the
// real corpus (../shared/corpus/real) and on its pages turned and skewed
// synthetically; TestMeasureSteps (OCR_MEASURE=1) reproduces the figures.
const (
	// invertDarkShare: a page with at least this share of pixels darker
	// than its Otsu threshold is white on black and is inverted.
	// jbig2_baddevicen.pdf is 92% dark; text pages are 4–18%, a full-bleed
	// photograph (lichtenstein.pdf) 81%, which inverting does no harm.
	// Tesseract 5 reads inverted lines by itself (tessedit_do_invert), as
	// well but about 1.7 times slower, so this is a saving as much as a fix.
	invertDarkShare = 0.6

	// speckPixels: marks of ink no larger than this many pixels either
	// way at 300 dpi (scaled to the render's DPI) are specks, not print,
	// and are painted over with the paper before recognition. A
	// photocopy's speckle is one or two scanner pixels, 2 to 4 at 300
	// dpi; the smallest print, a period or the dot of an i in 10 pt type,
	// is 5 or more. Tesseract reads specks as stray punctuation, and
	// dense speckle wrecks its layout analysis: on the evaluation
	// corpus's nine speckled pages the CER fell from 14% to 4.4% with it
	// (boxes up to 3: 5.8%, 4: 4.4%, 6: 4.7%, and at 6 the clean pages
	// began to lose print: 1.4% to 2.0% on the bitonal ones). It costs
	// one connected-component pass over a binarised copy of the page.
	speckPixels = 4

	// maxSkewDegrees is how far either way the skew search sweeps.
	// Leptonica scores an angle within a sweep step of the range's end
	// as unsure, so the sweep goes 2 degrees past the 15 degrees promised.
	maxSkewDegrees = 17
	// minSkewConf is Leptonica's own bar for trusting a skew angle
	// (pixDeskew's MinAllowedConfidence). Text pages score 7–80; a page
	// turned by 90 degrees, whose lines run down the page, about 1.4.
	minSkewConf = 3
	// minDeskewDegrees: smaller skews are left to Tesseract. On a clean
	// page turned by 0.5–2 degrees deskewing lowered the CER by 0.2 to
	// 0.5 points, within the noise of resampling; from 3 degrees on
	// Tesseract's own handling falls behind (CER 1.4% at 3, 3.1% at 5,
	// 9% at 8, 19% at 12 degrees; deskewed, under 0.6% at every angle).
	minDeskewDegrees = 1.0

	// minOrientConf and minOrientRatio make Leptonica's up/down and
	// left/right text test (pixOrientDetect, about 15 ms at 300 dpi) the
	// cheap test for orientation: when one of its two confidences is at
	// least minOrientConf and at least minOrientRatio times the other, it
	// has a verdict. A page it finds upright is not asked about again;
	// Tesseract's orientation detection (0.3–0.5 s) runs on the others.
	// At 300 dpi (reduced by 2) and at 150 dpi, upright text pages scored
	// 11–42 up with a ratio of 2.2 or more; the turned pages of
	// cardinal.pdf scored -17 to -35 up (180) or 11 to 35 left (90, 270).
	minOrientConf  = 8
	minOrientRatio = 2
	// minOSDConf is the orientation confidence from which Tesseract's
	// answer is acted on by itself. At 300 dpi the turned pages of
	// cardinal.pdf scored 31–35 and at 150 dpi 12–19, while pictures and
	// sparse pages scored up to 4.9 for a wrong answer. 14 is OCRmyPDF's
	// default (--rotate-pages-threshold). minAgreedOSDConf is enough when
	// Leptonica's verdict is the same turn: two tests that work
	// differently agreeing.
	minOSDConf       = 14
	minAgreedOSDConf = 6

	// credibleConf is CredibleConf, for the page steps' own counts.
	credibleConf = CredibleConf
	// maxDoubtfulShare: a recognition with fewer credible words than this
	// share of its words looks like a page read the wrong way up, and
	// gets Tesseract's orientation detection if the cheap test did not
	// already run it. Upright text pages have 56–97% credible words;
	// cardinal.pdf turned by 90, 180 or 270 degrees 5–19%.
	maxDoubtfulShare = 0.5

	// A page is blank when it has almost no ink and hardly anything the
	// size of a character: it is then not recognised at all, because
	// Tesseract reads specks as junk words. Ink is what is at least
	// blankContrast darker than the paper. On the evaluation corpus
	// (testdata/eval, at 300 dpi) pages with text had 80–480 ink pixels
	// in 10,000 and 97–585 characters, the blank pages with specks 0.8–2.3
	// and 0 or 1; a letter page holding only "Yes" has 1.0 and 3, so ink
	// alone cannot tell, and the count of characters (a connected
	// component from 1/30 to 1 inch high; about 4 ms at 300 dpi) decides
	// the pages with less ink than maxBlankInk. A page with two
	// characters is not blank.
	blankContrast = 32
	maxBlankInk   = 0.001
	minGlyphs     = 2
)

// prepared is a page made ready for recognition, and what was done to it.
type prepared struct {
	img      *grayImage
	canvas   [6]float64 // the render's pixels to img's, see Canvas
	dpi      int
	thresh   int   // Otsu threshold of img: below it is ink
	paper    uint8 // the paper's gray value, brought in by deskewing
	rotation int
	skew     float64
	inverted bool
	// despeckled counts the pixels painted over as specks.
	despeckled int
	blank      bool     // nothing to read: not prepared further nor recognised
	verdict    int      // Leptonica's orientation verdict, see orientVerdict
	osdRun     bool     // Tesseract's orientation detection has been asked
	ink        *inkLook // the coverage step's look at the ink (inkLook)
}

// prepare inverts, deskews and turns upright the rendered page in g,
// whose histogram is hist, as the configuration allows. It may change g
// in place or return another image.
func (e *engine) prepare(g *grayImage, hist [256]int, dpi int) (*prepared, error) {
	p := &prepared{img: g, canvas: identityMatrix, dpi: dpi, thresh: otsu(hist), verdict: -1}
	p.paper = paperLevel(hist, p.thresh, false)
	if !e.noInvert && darkShare(hist, p.thresh) >= invertDarkShare {
		g.invert()
		p.inverted = true
		p.paper = paperLevel(hist, p.thresh, true)
		p.thresh = 256 - p.thresh
	}
	if p.blank = isBlank(p, hist); p.blank {
		return p, nil
	}
	if !e.cfg.NoDespeckle {
		// Before deskewing, whose resampling would smear each speck into
		// a grey blot the size test no longer sees as one.
		size := max(1, (speckPixels*p.dpi+150)/300)
		p.despeckled = max(0, despeckle(p.img, p.thresh, size, size, p.paper))
	}
	if err := e.deskew(p); err != nil {
		return nil, err
	}
	if e.cfg.NoOrientation {
		return p, nil
	}
	p.verdict = orientVerdict(orientDetect(p.img, p.dpi, p.thresh))
	if p.verdict == 0 {
		return p, nil
	}
	if _, err := e.orient(p); err != nil {
		return nil, err
	}
	return p, nil
}

// deskew measures the skew of p's lines and straightens the page when it
// is skewed enough and the measurement is sure.
func (e *engine) deskew(p *prepared) error {
	if e.cfg.NoDeskew {
		return nil
	}
	angle, conf := findSkew(p.img, p.thresh, maxSkewDegrees)
	if conf < minSkewConf || math.Abs(angle) < minDeskewDegrees {
		return nil
	}
	img, err := rotateGray(p.img, angle, p.paper)
	if err != nil {
		return fmt.Errorf("deskewing by %.2f degrees: %w", angle, err)
	}
	p.canvas = thenMatrix(p.canvas, skewMatrix(p.img.w, p.img.h, img.w, img.h, angle))
	p.img = img
	p.skew += angle
	return nil
}

// paperLevel returns the gray value of the paper of a page whose
// histogram is hist and Otsu threshold thresh: the commonest value on the
// light side of the threshold, or on the dark side, inverted, for a page
// that is being inverted. Faded and yellowed scans have paper well below
// white (about 208 on the evaluation corpus's faded pages, with ink at
// 150–200), so anything added to such a page must be this colour, not
// white: deskewing's white corners, 8% of a page turned by 2.5 degrees,
// moved the Otsu threshold from 189 to 233, above the paper, and
// Tesseract, thresholding the page globally, saw it all as ink and read
// nothing.
func paperLevel(hist [256]int, thresh int, inverted bool) uint8 {
	lo, hi := thresh, 256
	if inverted {
		lo, hi = 0, thresh
	}
	best, level := -1, hi-1
	for v := lo; v < hi; v++ {
		if hist[v] > best {
			best, level = hist[v], v
		}
	}
	if inverted {
		return uint8(255 - level)
	}
	return uint8(level)
}

// isBlank reports whether p, whose histogram before any inversion is
// hist, is a blank page (see maxBlankInk).
func isBlank(p *prepared, hist [256]int) bool {
	level := int(p.paper) - blankContrast
	if level <= 0 {
		// Paper this dark leaves no room for ink darker still; let
		// Tesseract decide.
		return false
	}
	var ink, total int
	for v, n := range hist {
		if p.inverted {
			v = 255 - v
		}
		total += n
		if v < level {
			ink += n
		}
	}
	if total == 0 {
		return true
	}
	if float64(ink) >= maxBlankInk*float64(total) {
		return false
	}
	// -1, Leptonica failing, is below minGlyphs too; but a page it cannot
	// count on is better read.
	n := countGlyphs(p.img, level, max(1, p.dpi/30), p.dpi)
	return n >= 0 && n < minGlyphs
}

// orient asks Tesseract's orientation detection about p and turns the page
// upright when it is sure. It reports whether the page was turned.
func (e *engine) orient(p *prepared) (turned bool, err error) {
	p.osdRun = true
	deg, conf, ok := e.osd.detect(p.img, p.dpi)
	if !ok || deg == 0 || conf < minAgreedOSDConf || (conf < minOSDConf && deg != p.verdict) {
		return false, nil
	}
	// Tesseract reports how far the text is turned clockwise; turning the
	// page the rest of the way round puts it upright.
	turn := (360 - deg) % 360
	p.canvas = thenMatrix(p.canvas, turnMatrix(p.img.w, p.img.h, turn))
	p.img = p.img.rotate(turn)
	p.rotation = (p.rotation + turn) % 360
	if turn != 180 {
		// Lines that ran down the page gave no skew reading before.
		if err := e.deskew(p); err != nil {
			return false, err
		}
	}
	return true, nil
}

// orientVerdict turns Leptonica's up and left confidences into the
// clockwise turn of the page's text in degrees, as Tesseract reports it
// (0, 90, 180 or 270), or -1 when neither confidence is clear enough.
func orientVerdict(up, left float64) int {
	switch {
	case math.Abs(up) >= minOrientConf && math.Abs(up) >= minOrientRatio*math.Abs(left):
		if up > 0 {
			return 0
		}
		return 180
	case math.Abs(left) >= minOrientConf && math.Abs(left) >= minOrientRatio*math.Abs(up):
		if left < 0 {
			return 90
		}
		return 270
	}
	return -1
}

// skewMatrix is the map of rotateGray from a w×h image to the wnew×hnew
// one it returned: the border ocr_rotate adds, then Leptonica's rotation
// by deg (clockwise positive, y pointing down) about the centre of the
// bordered image, pixel (wnew/2, hnew/2) (rotateAMGrayLow).
func skewMatrix(w, h, wnew, hnew int, deg float64) [6]float64 {
	left, top := max(0, (wnew-w)/2), max(0, (hnew-h)/2)
	cx, cy := float64(wnew/2)+0.5, float64(hnew/2)+0.5
	sin, cos := math.Sincos(deg * math.Pi / 180)
	// dst = c + R·(src + border − c), R = [cos −sin; sin cos].
	dx, dy := float64(left)-cx, float64(top)-cy
	return [6]float64{cos, sin, -sin, cos, cx + cos*dx - sin*dy, cy + sin*dx + cos*dy}
}

// turnMatrix is the map of grayImage.rotate turning a w×h image clockwise
// by deg, a multiple of 90.
func turnMatrix(w, h, deg int) [6]float64 {
	fw, fh := float64(w), float64(h)
	switch (deg%360 + 360) % 360 {
	case 90:
		return [6]float64{0, 1, -1, 0, fh, 0} // (x, y) → (h − y, x)
	case 180:
		return [6]float64{-1, 0, 0, -1, fw, fh} // → (w − x, h − y)
	case 270:
		return [6]float64{0, -1, 1, 0, 0, fw} // → (y, w − x)
	}
	return identityMatrix
}
