// Command refcorpus writes a synthetic corpus of scanned referral PDFs with
// ground truth, for testing, demonstrating and evaluating refbatch.
//
// Usage:
//
//	go run ./cmd/refcorpus --seed 1 --docs 12 --out DIR [--dpi-set 150,200,300] [--bad]
//	go run ./cmd/refcorpus --seed 3 --docs 30 --out DIR --degrade --bad-all [--max-bytes 2000000] [--hard 8] [--coverage 16 [--faint-ink 110-190]]
//	go run ./cmd/refcorpus --seed 5 --docs 0 --out DIR --handwriting 12 --signatures 4 --columns 3 [--hand-dpi-set 200,300]
//
// It writes:
//
//	DIR/docs/R-0001.pdf ...   the documents, one scanned page image per page
//	DIR/manifest.csv          source_id,participant_id,referral_date,consent,path,sha256
//	DIR/expected.csv          source_id,state,reason: the outcome refbatch should reach,
//	                          one row per manifest row, in the same order
//	DIR/truth/R-0001.json     source_id, participant_id, referral_date and each page's
//	                          text exactly as drawn, for every complete document
//
// Each document is a referral form: a clinic name, the participant ID
// (P-nnnnnn), the referral date (YYYY-MM-DD), the referring clinician, a
// consent line, a paragraph or two of free text and sometimes a small
// table, on Letter or A4 pages. Everything is drawn from invented word
// lists; no person, clinic or record is real.
//
// # Plain scans (the default)
//
// One to three pages drawn with the Go fonts at 10 to 12 pt and mildly
// degraded: a skew of up to 1 degree, sparse noise and specks, and a
// threshold to 1 bit above 150 DPI. Each document is scanned at one DPI
// picked uniformly from --dpi-set (a value listed twice is picked twice as
// often). Scans at 150 DPI or less are 8-bit grey, finer ones 1-bit.
//
// # --degrade
//
// One to four content pages, and in one document in eight a blank page
// after page 1 or later (its ground truth text is empty). The DPI is
// picked per document from --dpi-set, and one page in ten is scanned again
// at a DPI picked anew. Each page gets a kind, dealt from a shuffled deck so that every
// kind comes round equally often: bitonal (1-bit Flate), ccitt (1-bit
// CCITT Group 4), grey (8-bit Flate), low_contrast, noise (a photocopy's
// dense speckle and drum scratch, 1-bit), blur, yellowed (aged, stained
// paper in /DeviceRGB, JPEG above 150 DPI) and jpeg (grey at quality 15 to
// 35). A second deck turns one page in seven by a quarter turn or a half:
// inside the image only, inside the image and put right by the page's
// /Rotate, or upright but turned by a wrong /Rotate. Every page is skewed,
// by up to 1 degree on half of the pages and up to 3 on the rest (Tesseract
// loses paragraphs past about 1.3 degrees without deskewing). One page in
// five carries a rubber stamp over its text; the last page of half of the
// documents carries a signature. The truth records all of it per page
// under "scan": kind, dpi, colour, encoding, rotation, rotate_entry,
// shown_rotation, blank, table, stamp, signature. A stamp's words are not
// part of the page's text.
//
// # --bad
//
// One input per admission failure, after the good documents: an empty
// file, a text file named .pdf, a truncated PDF, a missing file, a row
// without consent, a wrong sha256, a path outside the root, an empty
// participant_id, an impossible date, a duplicate row and a conflicting
// rescan.
//
// # --bad-all
//
// Everything --bad writes, and more. Readable oddities, after the good
// documents: a PDF whose xref offsets are all wrong and one whose
// startxref points into an object (both repairable: done), a born-digital
// PDF with its text drawn in an embedded TrueType font and no image, a
// scan with an invisible OCR text layer (both done), a file name with a
// comma (done; its row leaves sha256 empty), and a document of blank
// pages (review empty_text). Among the bad inputs: an ELF executable and
// a PNG named .pdf (not_pdf), encryption with an empty user password
// (RC4 40-bit) and with the user password "referral" (RC4 128-bit; both
// encrypted), 201 tiny pages (too_many_pages at the default cap of 200),
// a 14400 pt square page (page_too_large), an uncompressed scan over
// --max-bytes (too_large: run refbatch with the same --max-bytes), a
// record cut after three fields (missing_field), a path that climbs out
// through docs/../.. (path_outside_root), and a duplicate whose bytes were
// copied to docs/copies/. The manifest comes with a UTF-8 byte order mark,
// CRLF line ends, header names in another case, a Notes column whose
// values hold commas and quotes, and a blank line. The generator checks
// that no other file is over --max-bytes.
//
// # --hard N
//
// N documents degraded far past the --degrade deck, so that OCR reads
// them badly but not always hopelessly and a person must check them: toner
// clumps, holes and a drum streak on 1-bit copies, ink barely darker than
// grey paper, heavy blur, 7 and 8 pt type at 150 DPI, JPEG at quality 2
// to 4, a copy of a copy whose strokes break. They exist to put documents
// in every confidence band of an evaluation. Each is a row of the table in
// hard.go (eight rows, 12 pages; past eight the table starts again with
// new content) that sets every page's degradation by hand, and the truth
// records it under scan.degradation, with the kinds hard_noise,
// hard_contrast, hard_blur, hard_small, hard_jpeg and hard_photocopy.
// expected.csv gives each the outcome its row names: review
// low_confidence for all of them for now. The hard documents come after
// every other row, the duplicates included, numbered on from the highest
// source number, and are drawn from random streams of their own, so that
// every other file and row stays byte-identical.
//
// # --coverage N
//
// N documents holding text that OCR may leave unread while the words it
// does read keep high confidences, and clean controls of the same
// layouts, to measure how much of a page a reading covers and to count
// the clean documents a coverage check would flag. Kinds are dealt from a
// shuffled deck of eight so that each comes round (coverage.go):
//
//	faint_note       a note from the referrals office (an allergy, a hearing
//	                 problem, booked blood tests...) after the page's text, in
//	                 grey 6, 7 or 8 pt print; twice a cycle
//	small_print      a footer of 3 to 5 lines of grey 6 or 7 pt print above
//	                 the page number
//	columns          a section of two columns of text side by side, with a
//	                 gutter of 0.25 to 0.5 inch
//	stamp_over_text  one or two large stamps (30 to 40 pt) over a paragraph,
//	                 crossing whole lines
//	coloured_faint   pale blue, pink, green or yellow paper (RGB) with a faint
//	                 note
//	coloured         coloured paper, the note or the footer in dark print
//	control          grey paper, the note (body size) or the footer (9 pt) in
//	                 dark print
//
// The faint print's grey level is dealt over --faint-ink (default 110-190,
// on paper of 240 to 248 and body ink of 10 to 45) in five strata; its
// size, a slight blur of the print alone (a box blur of 1 pixel, twice at
// 300 DPI) or none, and whether it is on page 1 or page 2 are dealt too,
// over the faint documents only. The DPI is dealt from --dpi-set. Pages are
// 8-bit grey (RGB on coloured paper), half of them JPEG at quality 60 to
// 90, skewed by up to 1 degree, with light noise and specks.
//
// Each page's text holds everything drawn in reading order; a column
// section is in column order (the whole first column, then the second).
// The truth adds, per page, "faint_text" (the faint print exactly as
// drawn, lines that are also in "text") and "columns": true, and under
// "scan" the recipe: "coverage": kind, layout (what a control draws in
// dark print), paper (grey level) or paper_colour and paper_rgb, "faint"
// (where: note or footer, ink, pt, blur, blur_radius, blur_passes),
// gutter_in, stamps, stamp_pt and crossed_lines (drawn lines the stamps'
// ink overlaps); a stamp's words are under scan.stamp as on other pages.
// expected.csv allows documents with faint print or stamps to end done or
// review incomplete_text (done only if their text is read, which refbatch
// eval checks); the columns, coloured and control documents must be done.
// Like the hard documents, they come after every other row, the hard ones
// included, and are drawn from random streams of their own.
//
// # --handwriting N, --signatures N, --columns N
//
// Documents written on by hand, signed, or laid out in columns, after the
// coverage ones, in that order, from random streams of their own (hand.go).
// Each is scanned at a DPI dealt in turn from --hand-dpi-set (default
// 200,300; --dpi-set does not apply), 8-bit grey, or RGB when the ink is
// blue, JPEG at quality 75 to 90, skewed by up to half a degree; only the
// last page is written on.
//
// --handwriting: a clinical note of two or three lines ("Allergic to
// penicillin", "Patient takes warfarin, check INR before any biopsy",
// "Interpreter needed"...; a bank of 16, dealt by the seed) written in one
// of six handwriting fonts from Debian's packages fonts-dkg-handwriting,
// fonts-dancingscript, fonts-kristi, fonts-breip, fonts-femkeklaver and
// fonts-humor-sans, each word with its own size, slant, pressure and
// baseline, each line drifting. The hands come round in blue ink, then in
// black; the note is in the free space below the text, in the top margin
// or in the bottom margin; half of the documents are signed too. The fonts
// are found at Debian's paths or with fc-list; a missing one stops
// refcorpus with the package to install. expected.csv allows done (when
// the note is read) or review handwriting.
//
// --signatures: a signature in the free space of the last page, a short
// scribble that is not a note: bare, after "Signed:", on a printed line,
// beside the printed name of the referring clinician, or all three. Done.
//
// --columns: below the full-width form, a section of two columns of
// unequal width (a third to two thirds of it) with a gutter of 0.15 to 0.6
// inch that ends the page, or ends above a full-width paragraph, or above
// a table whose rows must be kept. Done.
//
// The truth adds, per page, "handwriting_text" (the note as written, line
// by line; part of "text" too: first in a top-margin note, after the body
// for one in free space, after the page number for one in the bottom
// margin), "handwriting" (hand, package, ink, ink_rgb, placement, pt,
// lines and box, the note's pixels before the skew), "signature" (label,
// hand, ink, box, and the printed words beside it, which are in "text";
// the scribble has no text), and for columns "columns": true with
// "column_blocks", the page's blocks (full, column or table, with boxes)
// in the reading order of "text".
//
// Large corpora (--docs 2400) are for benchmarks and are not committed.
// The whole corpus is held in memory until it is written: a --degrade
// document takes about 200 KB.
//
// The output is byte-identical for the same flags on the same platform: the
// random streams are seeded PCGs, the PDFs carry no dates, and the
// encrypted files a fixed /ID. refcorpus refuses to write into a folder that
// already holds a corpus.
//
// Exit status: 0 on success, 1 if generation failed, 2 on a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "refcorpus: error: %v\n", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "refcorpus: error: %v\n", err)
		os.Exit(1)
	}
}

// run builds the corpus o describes and writes it to o.Out.
func run(o options) error {
	c, err := build(o)
	if err != nil {
		return err
	}
	return c.write(o.Out)
}

// parseFlags reads the command line; usage goes to stderr.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("refcorpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var dpis, handDPIs string
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed; the same seed gives the same bytes")
	fs.IntVar(&o.Docs, "docs", 12, "number of good documents")
	fs.StringVar(&o.Out, "out", "", "output folder (required)")
	fs.StringVar(&dpis, "dpi-set", "150,200,300", "comma-separated scan resolutions to pick from; repeat one to pick it more often")
	fs.BoolVar(&o.Bad, "bad", false, "also write bad inputs with their expected rejections")
	fs.BoolVar(&o.Degrade, "degrade", false, "degrade each page of the good documents: kinds, skew up to 3 degrees, turns, stamps, blank pages")
	fs.BoolVar(&o.BadAll, "bad-all", false, "write every bad input, the readable oddities and the manifest problems (implies --bad)")
	fs.Int64Var(&o.MaxBytes, "max-bytes", DefaultMaxBytes, "with --bad-all: the byte cap the evaluation run uses; one input exceeds it, no other does")
	fs.IntVar(&o.Hard, "hard", 0, "append this many documents degraded far past the others (expected review low_confidence), to calibrate confidence bands")
	fs.IntVar(&o.Coverage, "coverage", 0, "append this many documents with text OCR may leave unread (faint small print, two columns, large stamps, coloured paper) and clean controls, after the hard ones")
	fs.IntVar(&o.Handwriting, "handwriting", 0, "append this many documents with a handwritten note of two or three lines (six hands from Debian's font packages, blue or black ink, in free space or a margin), half of them signed, after the coverage ones")
	fs.IntVar(&o.Signatures, "signatures", 0, "append this many documents signed by hand, with or without a printed label, and no note")
	fs.IntVar(&o.Columns, "columns", 0, "append this many documents with a section in two columns of unequal width, ending the page or above a full-width paragraph or a table")
	fs.IntVar(&o.Marks, "marks", 0, "append this many letters signed off, half of them stamped and two in five marked in a margin, with no note, after the --columns ones")
	fs.IntVar(&o.CapsNotes, "caps-notes", 0, "append this many signed letters with a note in block capitals, after the --marks ones")
	var families string
	fs.StringVar(&families, "mark-families", "all", "with --marks: the families of signatures, stamps and margin marks to draw from: all, calibration, held-out, or names among "+familyNames())
	fs.StringVar(&handDPIs, "hand-dpi-set", "200,300", "with --handwriting, --signatures or --columns: their scan resolutions, dealt in turn")
	faint := fmt.Sprintf("%d-%d", DefaultFaintInk[0], DefaultFaintInk[1])
	fs.StringVar(&faint, "faint-ink", faint, "with --coverage: the range LO-HI of grey levels (0 black, 255 white) faint print is drawn in")
	err := fs.Parse(args)
	if err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.Out == "" {
		return options{}, errors.New("--out is required")
	}
	if o.Docs < 0 || o.Docs > 9999 {
		return options{}, fmt.Errorf("--docs must be between 0 and 9999, not %d", o.Docs)
	}
	if o.Hard < 0 || o.Hard > 99 {
		return options{}, fmt.Errorf("--hard must be between 0 and 99, not %d", o.Hard)
	}
	if o.Coverage < 0 || o.Coverage > 99 {
		return options{}, fmt.Errorf("--coverage must be between 0 and 99, not %d", o.Coverage)
	}
	for _, n := range []struct {
		name string
		v    int
		max  int
	}{{"handwriting", o.Handwriting, 99}, {"signatures", o.Signatures, 99}, {"columns", o.Columns, 99}, {"marks", o.Marks, 999}, {"caps-notes", o.CapsNotes, 99}} {
		if n.v < 0 || n.v > n.max {
			return options{}, fmt.Errorf("--%s must be between 0 and %d, not %d", n.name, n.max, n.v)
		}
	}
	lo, hi, ok := strings.Cut(faint, "-")
	o.FaintInk[0], err = strconv.Atoi(strings.TrimSpace(lo))
	if err == nil {
		o.FaintInk[1], err = strconv.Atoi(strings.TrimSpace(hi))
	}
	if !ok || err != nil || o.FaintInk[0] < 60 || o.FaintInk[0] >= o.FaintInk[1] || o.FaintInk[1] > 235 {
		return options{}, fmt.Errorf("--faint-ink: %q is not a range LO-HI of grey levels with 60 <= LO < HI <= 235", faint)
	}
	if o.BadAll {
		o.Bad = true
	}
	if o.Bad && o.Docs < 2 {
		return options{}, errors.New("--bad needs at least 2 good documents to duplicate and conflict with")
	}
	if o.BadAll && o.Docs < 3 {
		return options{}, errors.New("--bad-all needs at least 3 good documents to duplicate and conflict with")
	}
	if o.MaxBytes < 100_000 || o.MaxBytes > 64<<20 {
		return options{}, fmt.Errorf("--max-bytes must be between 100000 and %d, not %d", 64<<20, o.MaxBytes)
	}
	if o.DPIs, err = dpiList("dpi-set", dpis); err != nil {
		return options{}, err
	}
	if o.HandDPIs, err = dpiList("hand-dpi-set", handDPIs); err != nil {
		return options{}, err
	}
	if o.MarkFamilies, err = selectFamilies(families); err != nil {
		return options{}, err
	}
	return o, nil
}

// dpiList parses the comma-separated resolutions of flag name.
func dpiList(name, list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 72 || d > 600 {
			return nil, fmt.Errorf("--%s: %q is not a DPI between 72 and 600", name, f)
		}
		out = append(out, d)
	}
	return out, nil
}
