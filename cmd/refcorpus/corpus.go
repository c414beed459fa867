package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"math/rand/v2"
	"runtime"

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
	// Handwriting, Signatures and Columns are documents appended after
	// the coverage ones (see hand.go).
	Handwriting, Signatures, Columns int
	HandDPIs                         []int // their resolutions; nil is 200 and 300
	// Marks and CapsNotes are letters appended after those (see
	// marks.go), their marks drawn from MarkFamilies.
	Marks, CapsNotes int
	MarkFamilies     []markFamily
	Out              string
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
	Coverage      bool   // a --coverage row or one of the rows after it (hand.go), appended after the hard ones
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
	Columns bool `json:"columns,omitempty"`
	// ColumnBlocks are a --columns page's blocks in reading order.
	ColumnBlocks []colBlock `json:"column_blocks,omitempty"`
	// HandwritingText is the page's handwritten note exactly as written,
	// one line per written line: part of Text too. Handwriting is how it
	// was written and where (--handwriting pages only).
	HandwritingText string     `json:"handwriting_text,omitempty"`
	Handwriting     *handTruth `json:"handwriting,omitempty"`
	// Signature is a signature on the page: a mark with no text to read.
	Signature *sigTruth `json:"signature,omitempty"`
	// Marks are the page's marks that are not notes (--marks pages
	// only): signatures, stamps and margin marks, each with its family.
	Marks []markTruth `json:"marks,omitempty"`
	Scan  *scanMeta   `json:"scan,omitempty"`
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
	Hand          *handDoc  // a --handwriting, --signatures or --columns document
	Marks         *marksDoc // a --marks or --caps-notes document
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
	Coverage bool // a --coverage document, or one appended after them (hand.go)
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
	es = append(es, coveragePlan(o, last+o.Hard, used)...)
	es = append(es, handPlan(o, last+o.Hard+o.Coverage, used)...)
	return append(es, marksPlan(o, last+o.Hard+o.Coverage+o.Handwriting+o.Signatures+o.Columns, used)...)
}

// build makes the corpus in memory. Documents are rendered in parallel,
// each from its own random stream, so the output does not depend on
// scheduling.
func build(o options) (*corpus, error) {
	fonts, err := loadFonts()
	if err != nil {
		return nil, err
	}
	if o.Handwriting+o.Signatures > 0 {
		if err := checkHands(); err != nil {
			return nil, err
		}
	}
	if o.Marks+o.CapsNotes > 0 {
		if err := checkMarkFonts(); err != nil {
			return nil, err
		}
	}
	es := plan(o)
	docs, err := renderAll(o, es, fonts)
	if err != nil {
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
	if o.BadAll || o.Hard > 0 || o.Coverage > 0 || o.Handwriting+o.Signatures+o.Columns+o.Marks+o.CapsNotes > 0 {
		if err := c.checkCap(o.MaxBytes); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// newTruth is the truth of document s drawn in style ds, its pages to
// come.
func newTruth(s spec, ds docStyle) truthDoc {
	t := truthDoc{SourceID: s.SourceID, ParticipantID: s.ParticipantID, ReferralDate: s.ReferralDate, Paper: ds.Paper.Name, DPI: ds.DPI, BodyFont: "goregular", BodyPt: ds.BodyPt}
	if ds.Mono {
		t.BodyFont = "gomono"
	}
	return t
}

// renderDoc draws the document s describes.
func renderDoc(seed uint64, s spec, dpis []int, fonts fontSet) (rendered, error) {
	if s.Cover != nil {
		return renderCoverage(seed, s, fonts)
	}
	if s.Hand != nil {
		return renderHand(seed, s, fonts)
	}
	if s.Marks != nil {
		return renderMarks(seed, s, fonts)
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
	t := newTruth(s, ds)
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

// renderAll renders every entry that has a rendered file, in parallel.
func renderAll(o options, es []entry, fonts fontSet) ([]rendered, error) {
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
	return docs, g.Wait()
}
