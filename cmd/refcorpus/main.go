// Command refcorpus writes a synthetic corpus of scanned referral PDFs with
// ground truth, for testing and demonstrating refbatch.
//
// Usage:
//
//	go run ./cmd/refcorpus --seed 1 --docs 12 --out DIR [--dpi-set 150,200,300] [--bad]
//
// It writes:
//
//	DIR/docs/R-0001.pdf ...   image-only PDFs, one scanned page image per page
//	DIR/manifest.csv          source_id,participant_id,referral_date,consent,path,sha256
//	DIR/expected.csv          source_id,state,reason: the outcome refbatch should reach,
//	                          one row per manifest row, in the same order
//	DIR/truth/R-0001.json     source_id, participant_id, referral_date and each page's
//	                          text exactly as drawn, for every complete document
//
// Each document is a referral form: a clinic name, the participant ID
// (P-nnnnnn), the referral date (YYYY-MM-DD), the referring clinician, a
// consent line, a paragraph or two of free text and sometimes a small
// table, on one to three Letter or A4 pages. Everything is drawn from
// invented word lists; no person, clinic or record is real. Pages are drawn
// with the Go fonts at 10 to 12 pt and mildly degraded: a skew of up to 1
// degree, sparse noise and specks, and a threshold to 1 bit above 150 DPI.
// Each document is scanned at one DPI picked uniformly from --dpi-set (a
// value listed twice is picked twice as often). Scans at 150 DPI or less
// are 8-bit grey, finer ones 1-bit.
//
// With --bad it also writes one input per admission failure, after the good
// documents: an empty file, a text file named .pdf, a truncated PDF, a
// missing file, a row without consent, a wrong sha256, a path outside the
// root, an empty participant_id, an impossible date, a duplicate row and a
// conflicting rescan.
//
// The output is byte-identical for the same flags on the same platform: the
// random streams are seeded PCGs and the PDFs carry no dates or IDs.
// refcorpus refuses to write into a folder that already holds a corpus.
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
	var dpis string
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed; the same seed gives the same bytes")
	fs.IntVar(&o.Docs, "docs", 12, "number of good documents")
	fs.StringVar(&o.Out, "out", "", "output folder (required)")
	fs.StringVar(&dpis, "dpi-set", "150,200,300", "comma-separated scan resolutions to pick from; repeat one to pick it more often")
	fs.BoolVar(&o.Bad, "bad", false, "also write bad inputs with their expected rejections")
	if err := fs.Parse(args); err != nil {
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
	if o.Bad && o.Docs < 2 {
		return options{}, errors.New("--bad needs at least 2 good documents to duplicate and conflict with")
	}
	for _, f := range strings.Split(dpis, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 72 || d > 600 {
			return options{}, fmt.Errorf("--dpi-set: %q is not a DPI between 72 and 600", f)
		}
		o.DPIs = append(o.DPIs, d)
	}
	return o, nil
}
