package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/refbatch/refbatch/report/outcome"
)

// options are the generator's inputs; the same options always give the
// same bytes.
type options struct {
	Seed     uint64
	Docs     int    // good documents
	DPIs     []int  // scan resolutions to pick from
	Bad      bool   // also write the bad inputs
	Degrade  bool   // degrade good documents page by page (see scan.go)
	BadAll   bool   // every bad input and manifest problem; implies Bad
	MaxBytes int64  // the byte cap the too_large input is made to exceed
	Hard     int    // hard documents appended after every other row (see hard.go)
	Coverage int    // coverage documents appended after the hard ones (see coverage.go)
	FaintInk [2]int // the range of the coverage documents' faint grey levels
	Out      string
}

// row is one manifest row with the outcome refbatch should reach for it.
type row struct {
	SourceID      string
	ParticipantID string
	ReferralDate  string
	Consent       string
	Path          string // relative to the output folder
	SHA256        string
	State         string
	Reason        string
	Notes         string // the --bad-all manifest's notes column
	Short         bool   // written with its first three fields only
	Hard          bool   // a --hard row, appended after all the others
	Coverage      bool   // a --coverage row, appended after the hard ones
}

// truthDoc is the ground truth of one rendered document.
type truthDoc struct {
	SourceID      string      `json:"source_id"`
	ParticipantID string      `json:"participant_id"`
	ReferralDate  string      `json:"referral_date"`
	Variant       string      `json:"variant,omitempty"`
	Paper         string      `json:"paper"`
	DPI           int         `json:"dpi"`
	BodyFont      string      `json:"body_font"`
	BodyPt        float64     `json:"body_pt"`
	Pages         []truthPage `json:"pages"`
}

// truthPage is one page's text exactly as drawn: one line per drawn line,
// table cells separated by one space, and how the page was degraded.
// Scan is set for --degrade and --bad-all pages only.
type truthPage struct {
	Text        string  `json:"text"`
	Bitonal     bool    `json:"bitonal"`
	SkewDegrees float64 `json:"skew_degrees"`
	// FaintText is the page's faint print exactly as drawn, one line per
	// drawn line: part of Text too (--coverage pages only).
	FaintText string `json:"faint_text,omitempty"`
	// Columns is set on a page with a section in two columns, whose text
	// Text holds in column order (--coverage pages only).
	Columns bool      `json:"columns,omitempty"`
	Scan    *scanMeta `json:"scan,omitempty"`
}

// spec is a document to render. Stream selects its random stream, so each
// document's content does not depend on how many others come before it.
type spec struct {
	SourceID      string
	ParticipantID string
	ReferralDate  string
	Consent       bool
	Pages         int // content pages
	Stream        uint64
	Scan          *scanPlan // nil: drawn as the built-in sample's documents are
	Cover         *coverDoc // a --coverage document; Scan is nil then
}

// rendered is a spec turned into pages and ground truth.
type rendered struct {
	Pages  []pageSpec
	Images []image.Image // with scanPlan.KeepImages only
	Truth  truthDoc
}

// file is one file to write below the output folder.
type file struct {
	Path string
	Data []byte
}

// corpus is everything one run writes.
type corpus struct {
	Rows   []row
	Files  []file
	Truth  []truthDoc // one per complete rendered document
	Quirks bool       // write the manifest with the problems of --bad-all
}

// rng returns the random source for one stream of a seed.
func rng(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// Streams above this offset are for files that do not get their own
// source number, so they never collide with a document's stream.
const extraStream = 1 << 32

// Variants: inputs of --bad-all that are more than a rejection reason.
const (
	varBrokenXref   = "broken_xref"    // every xref offset 6 bytes off; readers repair it: done
	varBadStartxref = "bad_startxref"  // startxref points into an object; readers repair it: done
	varTextLayer    = "text_layer"     // born-digital: text in the embedded font, no image: done
	varOCRLayer     = "ocr_layer"      // a scan with an invisible text layer over it: done
	varCommaPath    = "comma_path"     // a file name with a comma and a space: done
	varBlankDoc     = "blank_document" // every page blank: review empty_text
	varELF          = "elf"            // an executable named .pdf: not_pdf
	varPNG          = "png"            // a PNG named .pdf: not_pdf
	varEncrypted    = "encrypted"      // RC4 40-bit, empty user password: encrypted
	varEncryptedPW  = "encrypted_password"
	varPageBomb     = "page_bomb"      // 201 tiny pages: too_many_pages
	varGiantPage    = "giant_page"     // a 14400 pt square page: page_too_large
	varOverCap      = "over_byte_cap"  // an uncompressed scan over MaxBytes: too_large
	varShortRecord  = "short_record"   // a record of three fields: missing_field
	varClimbing     = "climbing_path"  // docs/../../outside.pdf: path_outside_root
	varCopy         = "copy_duplicate" // the same bytes under another path: duplicate
)

// userPassword opens the encrypted_password input.
const userPassword = "referral"

// DefaultMaxBytes is the byte cap an evaluation run passes as
// --max-bytes; the too_large input exceeds it and nothing else does.
const DefaultMaxBytes = 2_000_000

// entry is one planned manifest row: the document behind it and, for a
// bad input, the outcome it should get.
type entry struct {
	Spec     spec
	Render   bool   // the row's file is a rendered PDF
	Reason   string // empty for a good document
	State    string // the expected state when neither done nor rejected
	Dup      bool   // a duplicate of the first row
	Variant  string
	Notes    string
	Hard     bool // a --hard document
	Coverage bool // a --coverage document
}

// pageCounts is how many content pages a --degrade document has: one to
// four, two most often.
var pageCounts = []int{1, 1, 2, 2, 2, 3, 3, 4}

// plan draws every row's identity in manifest order and returns the rows.
// Source numbers follow the manifest order. The hard documents come after
// the duplicates and the coverage documents after them, so that adding
// either changes no earlier row.
func plan(o options) []entry {
	used := map[string]bool{}
	es, last := basePlan(o, used)
	es = append(es, hardPlan(o.Seed, o.Hard, last, used)...)
	return append(es, coveragePlan(o, last+o.Hard, used)...)
}

// basePlan plans every row but the hard documents, drawing identities
// from stream 0 of the seed. It returns the highest source number used.
func basePlan(o options, used map[string]bool) ([]entry, int) {
	r := rng(o.Seed, 0)
	n := 0
	next := func(pages int) spec {
		n++
		return spec{
			SourceID:      fmt.Sprintf("R-%04d", n),
			ParticipantID: participantID(r, used),
			ReferralDate:  referralDate(r),
			Consent:       true,
			Pages:         pages,
			Stream:        uint64(n),
		}
	}
	var es []entry
	d := newDeck(o.Seed)
	slot := 0
	for range o.Docs {
		if !o.Degrade {
			es = append(es, entry{Spec: next(1 + r.IntN(3)), Render: true})
			continue
		}
		pages := pick(r, pageCounts)
		blank := -1
		if pages < 4 && r.IntN(8) == 0 {
			blank = 1 + r.IntN(pages) // never first: page 1 carries the identity
		}
		total := pages
		if blank >= 0 {
			total++
		}
		sp := &scanPlan{Blank: blank}
		for range total {
			sp.Kinds = append(sp.Kinds, d.kind(slot))
			sp.Turns = append(sp.Turns, d.turn(slot))
			slot++
		}
		s := next(pages)
		s.Scan = sp
		es = append(es, entry{Spec: s, Render: true})
	}
	if o.BadAll {
		for _, v := range []struct {
			variant string
			pages   int
			plan    scanPlan
			notes   string
		}{
			{varBrokenXref, 2, scanPlan{Kinds: []string{kindBitonal, kindBitonal}}, `Copied from the old archive, offsets "repaired" by hand`},
			{varBadStartxref, 1, scanPlan{Kinds: []string{kindGrey}}, ""},
			{varTextLayer, 2, scanPlan{Kinds: []string{"text", "text"}, Upright: true, TextLayer: "visible", DPI: 300}, "Born-digital letter, exported from the clinic's system"},
			{varOCRLayer, 2, scanPlan{Kinds: []string{kindCCITT, kindCCITT}, Upright: true, TextLayer: "invisible", DPI: 300}, "Scanner's own OCR, text layer kept"},
			{varCommaPath, 1, scanPlan{Kinds: []string{kindJPEG}}, `Rescanned, filed as "R-copy", name has a comma`},
			{varBlankDoc, 2, scanPlan{Kinds: []string{kindBitonal, kindGrey}, AllBlank: true}, `Two sheets, both "blank" on inspection`},
		} {
			s := next(v.pages)
			p := v.plan
			p.Blank = -1
			s.Scan = &p
			e := entry{Spec: s, Render: true, Variant: v.variant, Notes: v.notes}
			if v.variant == varBlankDoc {
				e.State, e.Reason = string(outcome.Review), string(outcome.EmptyText)
			}
			es = append(es, e)
		}
	}
	if !o.Bad && !o.BadAll {
		return es, n
	}
	// The bad documents that are real PDFs have one or two pages: they are
	// never OCRed, so more pages would only cost space.
	for _, b := range []struct {
		reason outcome.Reason
		render bool
	}{
		{outcome.EmptyFile, false},
		{outcome.NotPDF, false},
		{outcome.MalformedPDF, true},
		{outcome.MissingFile, false},
		{outcome.NoConsent, true},
		{outcome.HashMismatch, true},
		{outcome.PathOutsideRoot, false},
		{outcome.MissingField, true},
		{outcome.BadDate, true},
	} {
		pages := 1
		if b.reason == outcome.MalformedPDF {
			pages = 2 // so the cut falls inside the document, not after it
		}
		e := entry{Spec: next(pages), Render: b.render, Reason: string(b.reason)}
		e.Spec.Consent = b.reason != outcome.NoConsent
		es = append(es, e)
	}
	if o.BadAll {
		for _, b := range []struct {
			variant string
			reason  outcome.Reason
			plan    *scanPlan
			notes   string
		}{
			{varELF, outcome.NotPDF, nil, `Uploaded by mistake: the "setup" program, not a scan`},
			{varPNG, outcome.NotPDF, &scanPlan{Kinds: []string{kindGrey}, DPI: 72, KeepImages: true}, "Photo of the form, saved as PDF"},
			{varEncrypted, outcome.Encrypted, &scanPlan{Kinds: []string{kindBitonal}}, "Protected by the clinic, no password given"},
			{varEncryptedPW, outcome.Encrypted, &scanPlan{Kinds: []string{kindBitonal}}, `Password "sent separately"`},
			{varPageBomb, outcome.TooManyPages, nil, ""},
			{varGiantPage, outcome.PageTooLarge, nil, ""},
			{varOverCap, outcome.TooLarge, &scanPlan{Kinds: []string{kindRaw}, DPI: 150}, "Scanner saved it uncompressed"},
			{varShortRecord, outcome.MissingField, nil, ""},
			{varClimbing, outcome.PathOutsideRoot, nil, ""},
		} {
			s := next(1)
			if b.plan != nil {
				p := *b.plan
				p.Blank = -1
				s.Scan = &p
			}
			es = append(es, entry{Spec: s, Render: b.plan != nil, Reason: string(b.reason), Variant: b.variant, Notes: b.notes})
		}
	}
	es = append(es, entry{Spec: es[0].Spec, Dup: true})
	// A rescan of the second document: same identity, other bytes.
	rescan := es[1].Spec
	rescan.Pages, rescan.Stream, rescan.Scan = 1, extraStream+2, nil
	conflict := entry{Spec: rescan, Render: true, Reason: string(outcome.Conflict)}
	if o.BadAll {
		conflict.Notes = "Second scan, pages reordered, replaces the first?"
		// The third document again, its bytes copied to another folder.
		es = append(es, entry{Spec: es[2].Spec, Dup: true, Variant: varCopy, Notes: "Same scan, copied to the copies folder"})
	}
	es = append(es, conflict)
	return es, n
}

// build makes the corpus in memory. Documents are rendered in parallel,
// each from its own random stream, so the output does not depend on
// scheduling.
func build(o options) (*corpus, error) {
	fonts, err := loadFonts()
	if err != nil {
		return nil, err
	}
	es := plan(o)
	docs := make([]rendered, len(es))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, e := range es {
		if !e.Render {
			continue
		}
		g.Go(func() error {
			r, err := renderDoc(o.Seed, e.Spec, o.DPIs, fonts)
			if err != nil {
				return fmt.Errorf("rendering %s: %w", e.Spec.SourceID, err)
			}
			docs[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}

	c := &corpus{Quirks: o.BadAll}
	first := map[string]int{} // source_id to its first row
	for i, e := range es {
		s := e.Spec
		if e.Dup {
			r := c.Rows[first[s.SourceID]]
			r.State, r.Reason, r.Notes = string(outcome.Duplicate), "", e.Notes
			if e.Variant == varCopy {
				r.Path = "docs/copies/" + s.SourceID + ".pdf"
				for _, f := range c.Files {
					if f.Path == c.Rows[first[s.SourceID]].Path {
						c.Files = append(c.Files, file{r.Path, f.Data})
					}
				}
			}
			c.Rows = append(c.Rows, r)
			continue
		}
		if _, ok := first[s.SourceID]; !ok {
			first[s.SourceID] = len(c.Rows)
		}
		r := row{
			SourceID: s.SourceID, ParticipantID: s.ParticipantID, ReferralDate: s.ReferralDate,
			Consent: consentWord(s.Consent), Path: "docs/" + s.SourceID + ".pdf", State: string(outcome.Done), Notes: e.Notes,
			Hard: e.Hard, Coverage: e.Coverage,
		}
		switch {
		case e.State != "":
			r.State, r.Reason = e.State, e.Reason
		case e.Reason != "":
			r.State, r.Reason = string(outcome.Rejected), e.Reason
		}
		data, keepTruth, err := makeFile(o, e, docs[i], &r)
		if err != nil {
			return nil, fmt.Errorf("making %s: %w", s.SourceID, err)
		}
		if keepTruth {
			t := docs[i].Truth
			t.Variant = e.Variant
			c.Truth = append(c.Truth, t)
		}
		// Nil data writes no file and leaves the hash empty; an empty
		// slice writes an empty file.
		if data != nil {
			c.Files = append(c.Files, file{r.Path, data})
			if e.Variant != varCommaPath {
				r.SHA256 = sum(data) // the comma row shows that sha256 is optional
			}
		}
		switch outcome.Reason(e.Reason) {
		case outcome.HashMismatch:
			r.SHA256 = sum([]byte(r.SHA256)) // well-formed, but the hash of other bytes
		case outcome.MissingField:
			r.ParticipantID = ""
		case outcome.BadDate:
			r.ReferralDate = "2024-02-30"
		}
		if e.Variant == varShortRecord {
			r.ParticipantID, r.Short = s.ParticipantID, true
		}
		c.Rows = append(c.Rows, r)
	}
	if o.BadAll || o.Hard > 0 || o.Coverage > 0 {
		if err := c.checkCap(o.MaxBytes); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// makeFile returns the bytes of e's file (nil for none) and whether its
// ground truth belongs in the corpus. It may change the row's path.
func makeFile(o options, e entry, doc rendered, r *row) (data []byte, keepTruth bool, err error) {
	pdf := func(opts pdfOptions) ([]byte, error) { return writePDF(doc.Pages, opts) }
	switch e.Variant {
	case varBrokenXref:
		data, err = pdf(pdfOptions{})
		// Dropping the binary comment line after the xref was written
		// puts every offset 6 bytes past its object.
		header := len("%PDF-1.4\n")
		data = append(data[:header:header], data[header+len("%\xe2\xe3\xcf\xd3\n"):]...)
		return data, true, err
	case varBadStartxref:
		data, err = pdf(pdfOptions{})
		i := strings.LastIndex(string(data), "startxref\n")
		return append(data[:i:i], "startxref\n20\n%%EOF\n"...), true, err
	case varTextLayer, varOCRLayer, varBlankDoc, varHard, varCoverage:
		data, err = pdf(pdfOptions{})
		return data, true, err
	case varCommaPath:
		r.Path = "docs/" + e.Spec.SourceID + ", rescanned.pdf"
		data, err = pdf(pdfOptions{})
		return data, true, err
	case varELF:
		return elfExecutable(), false, nil
	case varPNG:
		data, err = pngBytes(doc.Images[0])
		return data, false, err
	case varEncrypted, varEncryptedPW:
		rev, pw := 2, ""
		if e.Variant == varEncryptedPW {
			rev, pw = 3, userPassword
		}
		// A fixed file ID, so the key and the bytes never change.
		id := sha256.Sum256([]byte("refcorpus " + e.Spec.SourceID))
		sec, err := newStdSecurity(rev, pw, "owner "+e.Spec.SourceID, id[:16])
		if err != nil {
			return nil, false, err
		}
		data, err = pdf(pdfOptions{Security: sec})
		return data, false, err
	case varPageBomb:
		pages := make([]pageSpec, 201)
		for i := range pages {
			pages[i] = pageSpec{W: "72", H: "72"}
		}
		data, err = writePDF(pages, pdfOptions{})
		return data, false, err
	case varGiantPage:
		img := image.NewGray(image.Rect(0, 0, 200, 200))
		fill(img, 255)
		pi, err := grayFlate(img)
		if err != nil {
			return nil, false, err
		}
		data, err = writePDF([]pageSpec{{W: "14400", H: "14400", Image: &pi}}, pdfOptions{})
		return data, false, err
	case varOverCap:
		data, err = pdf(pdfOptions{})
		if err != nil {
			return nil, false, err
		}
		// The raw page is about 2 MB; pad it when the cap is higher, so
		// that the file is over the cap by a twentieth at least.
		if target := o.MaxBytes + o.MaxBytes/20; int64(len(data)) <= target {
			data, err = pdf(pdfOptions{Pad: int(target - int64(len(data)))})
		}
		return data, false, err
	case varShortRecord:
		return nil, false, nil
	case varClimbing:
		// No file is written there; see path_outside_root below.
		r.Path = "docs/../../outside.pdf"
		return nil, false, nil
	}

	if e.Render {
		data, err = pdf(pdfOptions{})
		if err != nil {
			return nil, false, err
		}
	}
	switch outcome.Reason(e.Reason) {
	case "", outcome.NoConsent, outcome.HashMismatch, outcome.MissingField, outcome.BadDate:
		keepTruth = true
	case outcome.EmptyFile:
		data = []byte{}
	case outcome.NotPDF:
		data = []byte("Referral notes\nThis is a plain text file saved under a .pdf name.\n")
	case outcome.MalformedPDF:
		// The first 40% keeps the signature and the first objects but
		// loses the xref and the trailer, as an interrupted copy would.
		data = data[:len(data)*4/10]
	case outcome.PathOutsideRoot:
		// No file is written there: the generator never writes outside
		// its output folder, and the path must be refused before any
		// look at the disk.
		r.Path = "../outside.pdf"
	case outcome.Conflict:
		r.Path = "docs/" + e.Spec.SourceID + "-rescan.pdf"
	}
	return data, keepTruth, nil
}

// checkCap makes sure the too_large input is the only file over maxBytes,
// so an evaluation run with --max-bytes maxBytes rejects it alone.
func (c *corpus) checkCap(maxBytes int64) error {
	over := map[string]bool{}
	for _, r := range c.Rows {
		if outcome.Reason(r.Reason) == outcome.TooLarge {
			over[r.Path] = true
		}
	}
	for _, f := range c.Files {
		if big := int64(len(f.Data)) > maxBytes; big != over[f.Path] {
			return fmt.Errorf("%s is %d bytes against a cap of %d, but its row does not expect that", f.Path, len(f.Data), maxBytes)
		}
	}
	return nil
}

// renderDoc draws the document s describes.
func renderDoc(seed uint64, s spec, dpis []int, fonts fontSet) (rendered, error) {
	if s.Cover != nil {
		return renderCoverage(seed, s, fonts)
	}
	if s.Scan != nil {
		return renderScan(seed, s, dpis, fonts)
	}
	r := rng(seed, s.Stream)
	f := newForm(r, s.ParticipantID, s.ReferralDate, s.Consent, s.Pages)
	ds := newDocStyle(r, dpis)
	fc, err := newFaces(fonts, ds)
	if err != nil {
		return rendered{}, err
	}
	defer fc.Close()
	t := truthDoc{SourceID: s.SourceID, ParticipantID: s.ParticipantID, ReferralDate: s.ReferralDate, Paper: ds.Paper.Name, DPI: ds.DPI, BodyFont: "goregular", BodyPt: ds.BodyPt}
	if ds.Mono {
		t.BodyFont = "gomono"
	}
	var pages []pdfPage
	for i, blocks := range f.Pages {
		clean, text, err := layout(blocks, ds, fc)
		if err != nil {
			return rendered{}, fmt.Errorf("laying out page %d: %w", i+1, err)
		}
		ps := newPageStyle(r, ds.DPI)
		img := degrade(r, clean, ps, ds.DPI)
		pages = append(pages, pdfPage{Img: img, DPI: ds.DPI, Bitonal: ps.Bitonal})
		t.Pages = append(t.Pages, truthPage{Text: text, Bitonal: ps.Bitonal, SkewDegrees: ps.Skew})
	}
	specs, err := imageSpecs(pages)
	if err != nil {
		return rendered{}, err
	}
	return rendered{Pages: specs, Truth: t}, nil
}

func consentWord(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// write puts the corpus below o.Out. It refuses to write over an earlier
// corpus, because stale documents left from a larger run would be mixed
// into the new one.
func (c *corpus) write(out string) error {
	for _, name := range []string{"manifest.csv", "expected.csv", "docs", "truth"} {
		if _, err := os.Lstat(filepath.Join(out, name)); err == nil {
			return fmt.Errorf("%s already holds a corpus (%s exists); remove it or choose another --out", out, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checking the output folder: %w", err)
		}
	}
	for _, d := range []string{"docs", "truth"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return fmt.Errorf("creating the output folder: %w", err)
		}
	}
	for _, f := range c.Files {
		p := filepath.Join(out, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("creating the folder of %s: %w", f.Path, err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	for _, t := range c.Truth {
		data, err := json.MarshalIndent(t, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the truth of %s: %w", t.SourceID, err)
		}
		if err := os.WriteFile(filepath.Join(out, "truth", t.SourceID+".json"), append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("writing the truth of %s: %w", t.SourceID, err)
		}
	}
	expected := [][]string{{"source_id", "state", "reason"}}
	for _, r := range c.Rows {
		expected = append(expected, []string{r.SourceID, r.State, r.Reason})
	}
	manifest, err := c.manifest()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "manifest.csv"), manifest, 0o644); err != nil {
		return fmt.Errorf("writing manifest.csv: %w", err)
	}
	return writeCSV(filepath.Join(out, "expected.csv"), expected)
}

// manifest encodes manifest.csv. With Quirks it is written the way
// spreadsheet exports on another system come: a UTF-8 byte order mark,
// CRLF line ends, header names in another case, an extra notes column
// whose values hold commas and quotes, a blank line, and one record cut
// short.
func (c *corpus) manifest() ([]byte, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	header := []string{"source_id", "participant_id", "referral_date", "consent", "path", "sha256"}
	if c.Quirks {
		b.WriteString("\ufeff")
		w.UseCRLF = true
		header = []string{"Source_ID", "Participant_ID", "Referral_Date", "Consent", "Path", "SHA256", "Notes"}
	}
	if err := w.Write(header); err != nil {
		return nil, fmt.Errorf("encoding manifest.csv: %w", err)
	}
	// The blank line's place is reckoned without the hard and coverage
	// rows, which are appended to a manifest that is otherwise unchanged.
	base := 0
	for _, r := range c.Rows {
		if !r.Hard && !r.Coverage {
			base++
		}
	}
	for i, r := range c.Rows {
		rec := []string{r.SourceID, r.ParticipantID, r.ReferralDate, r.Consent, r.Path, r.SHA256}
		if c.Quirks {
			rec = append(rec, r.Notes)
			if r.Short {
				rec = rec[:3]
			}
			if i == base/2 {
				// A blank line, as hand edits leave; readers skip it.
				w.Flush()
				b.WriteString("\r\n")
			}
		}
		if err := w.Write(rec); err != nil {
			return nil, fmt.Errorf("encoding manifest.csv: %w", err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("encoding manifest.csv: %w", err)
	}
	return []byte(b.String()), nil
}

func writeCSV(path string, records [][]string) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(records); err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}
