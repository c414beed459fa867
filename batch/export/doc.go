// Package export turns a document's verified artifact into the files an
// archive takes: plain text, ALTO 4.4 XML and a searchable PDF, and lays
// them out as a BagIt bag (RFC 8493) when asked.
//
// It knows nothing of the journal or the store: batch.Export verifies each
// document (artifact against the journal, content hash, source re-hashed),
// decrypts it and hands this package the pages, the source's bytes and a
// [Provenance]; what comes back are bytes to write. Everything here is
// deterministic for the same input, which is what lets an interrupted
// export resume by comparing hashes instead of rewriting.
//
// # Coordinates
//
// An artifact's word boxes are in pixels of the canvas Tesseract read:
// the page rendered at its DPI as displayed (after the PDF's /Rotate),
// then turned upright and deskewed. [DisplayedBox] maps such a box back to
// the page as a viewer displays it, in PDF points from the top left; ALTO
// and the PDF's text layer both start from it.
//
// # ALTO
//
// [WriteALTO] writes one ALTO 4.4 file per document, MeasurementUnit
// inch1200 (1/1200 inch, so 50/3 units a point): a unit tied to the page,
// not to a render resolution, since pages of one document may have been
// rendered at different DPIs. Blocks and lines are Tesseract's (recovered
// from the page text, which separates them by blank lines and newlines);
// a page whose text does not match its words that way is grouped by line
// geometry. Words from a PDF's own text layer have no boxes: their String
// elements carry no position.
//
// # BagIt
//
// [Bag] accumulates the payload's checksums as files are written and
// renders the tag files at the end: bagit.txt, bag-info.txt,
// manifest-sha256.txt and, last, tagmanifest-sha256.txt, so a bag whose
// export was interrupted has no tag manifest and reads as incomplete.
package export
