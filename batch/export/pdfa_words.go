package export

import "strings"

// PDFAWords says, in words an archivist can act on, why a source could
// not be made PDF/A-2b (reason is pdfaObstacle's, as the export reports
// it) and what to do about it. Export never rewrites a source: its pages
// are the scan's bytes, which is what makes the searchable PDF
// trustworthy; what PDF/A forbids in them can only go by rewriting the
// file, which the archivist chooses to do, or not, outside refbatch.
func PDFAWords(reason string) (why, todo string) {
	const convert = "hand it over as plain searchable PDF (export --pdfa=best-effort), or make a PDF/A copy of the exported PDF with a converter that rewrites files (Ghostscript's pdfwrite with -dPDFA=2, or your repository's ingest tool) and check the copy with veraPDF"
	r := reason
	if _, rest, ok := strings.Cut(r, ": "); ok && strings.HasPrefix(r, "object ") {
		r = rest // "object 12: ..."
	}
	switch {
	case strings.HasPrefix(r, "its header"):
		return "the scanner wrote the file's first line in a form PDF/A does not allow; only rewriting the whole file changes it", convert
	case strings.HasPrefix(r, "its cross-reference"):
		return "the file is damaged inside (its index of objects is broken; viewers repair it silently as they open it)",
			"ask for a fresh scan or an undamaged copy of the original; meanwhile " + convert
	case strings.HasPrefix(r, "a stream refers to an external file"):
		return "the file depends on another file outside itself, which an archive cannot keep with it", convert
	case strings.HasPrefix(r, "a stream is "):
		return "an image or page in the file is compressed in a way PDF/A forbids (" + strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(r, " (", 2)[0], "a stream is "), " encoded") + ")", convert
	case strings.HasPrefix(r, "an image asks for interpolation"):
		return "an image asks viewers to smooth it as they enlarge it, which PDF/A forbids (viewers would not all show the same page)", convert
	case strings.HasPrefix(r, "an image has /"):
		return "an image carries alternate versions of itself, which PDF/A forbids", convert
	case strings.HasPrefix(r, "DeviceCMYK"):
		return "the file draws in printing colours (CMYK) with no colour profile (" + strings.SplitN(r, ",", 2)[0] + "), so its colours are not fixed as PDF/A asks; converting them would change the page's pixels", convert
	case strings.HasPrefix(r, "an annotation has a "), strings.HasPrefix(r, "an annotation's normal appearance"):
		return "a form field or comment carries a look of its own for when it is pressed or pointed at, or several looks, which PDF/A forbids; dropping them would change how the form behaves", convert
	case strings.HasPrefix(r, "a stream's Length"):
		return "the file is damaged inside (a stream's declared length does not match its data; viewers guess where it ends)",
			"ask for a fresh scan or an undamaged copy of the original; meanwhile " + convert
	case strings.HasPrefix(r, "a PostScript XObject"):
		return "the file embeds PostScript code, which PDF/A forbids", convert
	case r == "JavaScript", strings.HasSuffix(r, " action"), strings.Contains(r, "additional actions"), strings.HasPrefix(r, "the catalog's name tree"):
		return "the file holds scripts or actions that run when it is opened (" + r + "), which PDF/A forbids", convert
	case strings.HasPrefix(r, "an XFA form"):
		return "the file holds a dynamic (XFA) form, which PDF/A forbids", convert
	case strings.HasSuffix(r, " annotation"), strings.HasPrefix(r, "an annotation is hidden"):
		return "the file holds an annotation PDF/A forbids (" + r + ")", convert
	case strings.HasPrefix(r, "a font is not embedded"):
		return "the file's own text uses a font it does not carry, so it would not look the same everywhere",
			strings.Replace(convert, "a converter that rewrites files", "a converter that embeds fonts", 1)
	}
	return "the file holds something PDF/A forbids (" + reason + ")", convert
}
