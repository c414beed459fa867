package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"github.com/refbatch/refbatch/batch/export"
	"github.com/refbatch/refbatch/batch/handover"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/report/outcome"
)

type exportOptions struct {
	journal           string
	place             layout.Place
	out, identity, to string
	formats, states   string
	mode              string
	bag, json, quiet  bool
	pdfa              pdfaMode
	straighten        bool
	withdrawn         bool
	titleFrom         string
	childMemory       int64
	childTimeout      time.Duration
}

// exportDescription is export's --help text.
const exportDescription = `Export is the deliberate plaintext hand-over: it decrypts the artifacts with
--identity and writes, for every document in the chosen states, its text
(<name>.txt, pages separated by form feeds), its ALTO 4.4 XML
(<name>.alto.xml) and its searchable PDF (<name>.pdf) into --to. <name> is
the source_id made safe for any file system, as artifacts name it.

Every document is verified first, as verify --identity --sources would: the
artifact's hash against the journal, its content hash and provenance, and
the source re-hashed against the SHA-256 admitted. A document that fails is
not exported: it is listed as a finding (verify's kinds, or export_failed)
and export exits 1 after exporting the rest.

With --bag, --to is a BagIt bag (RFC 8493): data/<name>/ holds each
document's files and its provenance.json, data/report.json the batch's
report (a document whose <name> would be report.json, in any case, gets
the folder report.json~ and a short hash of its source_id, so that no
source_id meets a file of the bag), data/metadata.csv each document's
source_id, participant_id, referral_date, state, and the decision a
person made and its note; bagit.txt, bag-info.txt and manifest-sha256.txt
follow, and tagmanifest-sha256.txt is written last.

The searchable PDF's text layer is set line by line, in reading order, so
that pdftotext, MuPDF and browsers rebuild the lines. Its metadata (in the
information dictionary and as XMP) is: Title the source_id (--title-from
file: the source file's name), Producer refbatch and its version,
CreationDate when the run read the document. --pdfa makes it PDF/A-2b
(an sRGB output intent, XMP identification, the font embedded) by the
same incremental update, pages untouched; a source that cannot conform
without being re-encoded (LZW streams, JavaScript, fonts not embedded, a
header without its binary comment, ...) gets the plain searchable PDF, and
the export lists it with the reason in words and what to do (not_pdfa in
--json) and exits 5 once every document is exported; --pdfa=best-effort
accepts plain searchable PDF for those and exits 0.

--straighten changes the pages: each OCR'd page that was turned in the
image or deskewed is redrawn as the image OCR read, the page's render at
its reading resolution turned and rotated straight (resampled once,
bilinearly), encoded losslessly (Flate), on a page of that image's size,
with the text layer square on it, so that every reader rebuilds one
line per line. Those pages no longer render as the source's; the others
are untouched. The source file is kept beside the PDF as
<name>~source.pdf (in a bag, covered by the manifest as every file).
Without --straighten every page renders as the source's, pixel for pixel.

The source PDFs are parsed (for the ALTO's page sizes and to add the
searchable PDF's text layer) in a child process, as admission's checks
are, under --pdf-memory and --pdf-timeout: a document whose child crashes,
runs out of memory or time, or fails is an export_failed finding, and the
export goes on with the rest.

Files are written to temp names and renamed, 0600 in folders 0700 unless
--mode says otherwise. Rerunning resumes: files already there with the
right content are left alone. --to that is --out or inside it (by path,
links resolved, or by device and inode, as a bind mount shows it) is
refused. Beneath --to no symbolic link is followed: one met on the way to
a file stops the export, naming it, with nothing written through it.

` + sizeHelp + `

Environment: TESSDATA_PREFIX, a folder where the searchable PDF's invisible
font (Tesseract's pdf.ttf) is looked for first.

Exit status: 0 every document exported; 1 a finding, or a failure (a
symbolic link beneath --to among them); 2 usage
error (--to inside --out, encrypted artifacts without --identity, a bad
flag); 3 interrupted: run the same command again to resume; 5 every
document exported, but with --pdfa some PDFs could not be PDF/A.`

func exportCommand() *cli.Command {
	var o exportOptions
	return &cli.Command{
		Name:        "export",
		Usage:       "hand the text over: plain text, ALTO 4.4 and searchable PDF, optionally as a BagIt bag",
		Description: exportDescription,
		Flags: []cli.Flag{
			outFlag(&o.out, "the output folder to export from"),
			journalFlag(&o.journal),
			&cli.StringFlag{Name: "identity", Aliases: []string{"i"}, EnvVars: []string{identityEnv}, Usage: "age identity that decrypts the artifacts `FILE`", Destination: &o.identity},
			&cli.StringFlag{Name: "to", Usage: "the folder `DEST` to export into (outside --out)", Destination: &o.to},
			&cli.StringFlag{Name: "format", Usage: "formats, comma-separated: pdf, alto, txt `FORMATS`", Value: "pdf,alto,txt", Destination: &o.formats},
			&cli.BoolFlag{Name: "bag", Usage: "make DEST a BagIt bag (RFC 8493)", Destination: &o.bag},
			&pdfaFlag{BoolFlag: cli.BoolFlag{Name: "pdfa", Usage: "make the searchable PDFs PDF/A-2b; a source that does not allow it is exported as plain searchable PDF, listed with the reason and what to do, and export exits 5 (--pdfa=best-effort: exits 0)"}, mode: &o.pdfa},
			&cli.BoolFlag{Name: "straighten", Usage: "redraw each page turned in the image or deskewed as the straight image OCR read (re-encoded losslessly, the source kept beside as <name>~source.pdf), its text square on it; pages otherwise stay the source's pixels", Destination: &o.straighten},
			&cli.StringFlag{Name: "title-from", Usage: "the PDFs' title: source_id, or file (the source file's name) `FROM`", Value: handover.TitleSourceID, Destination: &o.titleFrom},
			&cli.StringFlag{Name: "state", Usage: "states whose documents are exported, comma-separated: done, review `STATES`", Value: string(outcome.Done), Destination: &o.states},
			&cli.BoolFlag{Name: "withdrawn", Usage: "export also the documents whose rows were deleted from the manifest (left out otherwise)", Destination: &o.withdrawn},
			&cli.StringFlag{Name: "mode", Usage: "octal mode of the files written (folders add x where r is set) `MODE`", Value: "0600", Destination: &o.mode},
			bytesFlag("pdf-memory", "resident memory the PDF child may use for one document; more is export_failed", export.DefaultMemory, &o.childMemory),
			&cli.DurationFlag{Name: "pdf-timeout", Usage: "CPU time the PDF child may take for a small document (plus 1s per MiB; retried once at 4 times that), else export_failed", Value: export.DefaultTimeout, Destination: &o.childTimeout},
			&cli.BoolFlag{Name: "json", Usage: "one JSON event per document on stdout, then a summary", Destination: &o.json},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar", Destination: &o.quiet},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("export takes no arguments", "refbatch export --out DIR --identity FILE --to DEST")
			}
			var err error
			if o.place, err = placeOf(c, o.out, o.journal); err != nil {
				return err
			}
			return runExport(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runExport(ctx context.Context, o exportOptions, stdout, stderr io.Writer) error {
	const hint = "refbatch export --out DIR --identity FILE --to DEST [--format pdf,alto,txt] [--bag]"
	if o.to == "" {
		return usageErr("export needs --to DEST, the folder to export into", hint)
	}
	mode, err := strconv.ParseUint(o.mode, 8, 32)
	if err != nil || mode&^0o777 != 0 || mode&0o600 != 0o600 {
		return usageErr(fmt.Sprintf("--mode %s: want octal permissions the owner can read and write, such as 0600 or 0640", o.mode), hint)
	}
	if o.childMemory < 1 || o.childTimeout <= 0 {
		return usageErr("--pdf-memory and --pdf-timeout must be above 0", hint)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the refbatch binary for the PDF child: %w", err)
	}
	if o.titleFrom != handover.TitleSourceID && o.titleFrom != handover.TitleFile {
		return usageErr(fmt.Sprintf("--title-from %s: want source_id or file", o.titleFrom), hint)
	}
	eo := handover.ExportOptions{Out: o.place.Out, Journal: o.place.Journal, Dest: o.to, Bag: o.bag, FileMode: os.FileMode(mode),
		PDFA: o.pdfa != pdfaOff, TitleFrom: o.titleFrom, Withdrawn: o.withdrawn, Straighten: o.straighten,
		// The sources are parsed in a child: this binary re-executed in
		// its hidden export mode.
		Child: layout.Process{Path: exe, Args: []string{exportChildCommand}}, ChildMemory: o.childMemory, ChildTimeout: o.childTimeout}
	for _, f := range splitList(o.formats) {
		if f != handover.FormatPDF && f != handover.FormatALTO && f != handover.FormatText {
			return usageErr(fmt.Sprintf("--format %s: unknown format %q", o.formats, f), "formats are pdf, alto and txt")
		}
		eo.Formats = append(eo.Formats, f)
	}
	for _, s := range splitList(o.states) {
		if st := outcome.State(s); st == outcome.Done || st == outcome.Review {
			eo.States = append(eo.States, st)
			continue
		}
		return usageErr(fmt.Sprintf("--state %s: %q has no text to export", o.states, s), "states with text are done and review")
	}
	if len(eo.Formats) == 0 || len(eo.States) == 0 {
		return usageErr("--format and --state need at least one value each", hint)
	}
	if eo.Identities, err = loadIdentities(o.identity, stderr); err != nil {
		return err
	}
	var enc *json.Encoder
	if o.json {
		enc = json.NewEncoder(stdout)
	}
	var bar *progressbar.ProgressBar
	showBar := !o.quiet && isTerminal(stderr)
	eo.Progress = func(e handover.ExportEvent) {
		if enc != nil {
			enc.Encode(e)
		}
		if showBar {
			if bar == nil {
				bar = countBar(stderr, e.Total, "exporting")
			}
			bar.Set(e.Done)
		}
	}
	start := time.Now()
	res, err := handover.Export(ctx, eo)
	if bar != nil {
		bar.Finish()
	}
	switch {
	case errors.Is(err, handover.ErrDestInsideOut):
		return usageErrf("choose a --to outside the output folder: export writes plaintext, which never goes beside the journal and the artifacts", "%w", err)
	case errors.Is(err, handover.ErrStrayPayload):
		return &exitError{code: exitFailure, hint: "export into an empty folder, or the same states as the export that made this bag", err: err}
	case err != nil:
		return err
	}
	code := exitOK
	switch {
	case !res.OK():
		code = exitFailure
	case o.pdfa == pdfaStrict && len(res.NotPDFA) > 0:
		code = exitNotPDFA
	}
	if o.json {
		enc.Encode(struct {
			Event string `json:"event"`
			*handover.ExportResult
			Seconds float64 `json:"seconds"`
			Exit    int     `json:"exit"`
		}{"summary", res, time.Since(start).Seconds(), code})
	} else {
		writeExportSummary(stdout, res, o.pdfa != pdfaOff, start)
	}
	if code == exitNotPDFA {
		return &exitError{code: code, msg: fmt.Sprintf("%d of %d PDFs are not PDF/A: their sources do not allow it (each is listed above, with what to do)", len(res.NotPDFA), res.Exported),
			hint: "they were exported as plain searchable PDF; to accept that, export with --pdfa=best-effort"}
	}
	if code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// exitNotPDFA is export's exit when --pdfa was asked and some PDFs could
// not be PDF/A (--pdfa=best-effort exits 0 for them).
const exitNotPDFA = 5

// pdfaMode is --pdfa's value: off, strict (--pdfa: every PDF PDF/A, or
// exit 5) or best-effort (--pdfa=best-effort). It is a boolean flag that
// takes a value, as --pdfa=best-effort.
type pdfaMode string

const (
	pdfaOff        pdfaMode = ""
	pdfaStrict     pdfaMode = "strict"
	pdfaBestEffort pdfaMode = "best-effort"
)

func (m *pdfaMode) Set(s string) error {
	switch s {
	case "true", string(pdfaStrict):
		*m = pdfaStrict
	case string(pdfaBestEffort):
		*m = pdfaBestEffort
	case "false":
		*m = pdfaOff
	default:
		return fmt.Errorf("want --pdfa, or --pdfa=best-effort")
	}
	return nil
}

func (m *pdfaMode) String() string { return string(*m) }

// IsBoolFlag lets --pdfa be given without a value.
func (m *pdfaMode) IsBoolFlag() bool { return true }

// pdfaFlag is --pdfa: a switch, documented as one, whose value may also
// be given (--pdfa=best-effort) and is kept in mode.
type pdfaFlag struct {
	cli.BoolFlag
	mode *pdfaMode
}

// Apply binds the flag's names to mode, a boolean flag.Value.
func (f *pdfaFlag) Apply(set *flag.FlagSet) error {
	for _, name := range f.Names() {
		set.Var(f.mode, name, f.Usage)
	}
	return nil
}

// GetDefaultText is empty: a switch's default is off.
func (f *pdfaFlag) GetDefaultText() string { return "" }

// writeExportSummary prints export's findings, the documents not PDF/A
// though asked, and the closing line.
func writeExportSummary(stdout io.Writer, res *handover.ExportResult, pdfa bool, start time.Time) {
	for _, f := range res.Findings {
		writeFinding(stdout, f)
	}
	for _, n := range res.NotPDFA {
		fmt.Fprintf(stdout, "not PDF/A: %s: %s (%s); exported as plain searchable PDF\n    what to do: %s\n", termText(n.SourceID), n.Why, n.Reason, n.Todo)
	}
	what := "folder"
	if res.Bag {
		what = "bag"
	}
	fmt.Fprintf(stdout, "exported %d of %d documents into %s %s: %d files written, %d already there, %s in %.1fs",
		res.Exported, res.Selected, what, termText(res.Dest), res.Written, res.Present, humanBytes(res.Bytes), time.Since(start).Seconds())
	if pdfa {
		fmt.Fprintf(stdout, ", %d as PDF/A-2b", res.PDFA)
	}
	if res.Straightened > 0 {
		fmt.Fprintf(stdout, ", %d page%s straightened (each document's source kept beside its PDF)", res.Straightened, plural(res.Straightened))
	}
	if res.Withdrawn > 0 {
		fmt.Fprintf(stdout, ", %d withdrawn from the manifest left out (--withdrawn exports them)", res.Withdrawn)
	}
	if res.OK() {
		fmt.Fprintln(stdout, ", no findings")
	} else {
		fmt.Fprintf(stdout, "; %d finding%s: the documents concerned were not exported\n", len(res.Findings), plural(len(res.Findings)))
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
