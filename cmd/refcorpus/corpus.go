package main

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"
)

// options are the generator's inputs; the same options always give the
// same bytes.
type options struct {
	Seed uint64
	Docs int   // good documents
	DPIs []int // scan resolutions to pick from
	Bad  bool  // also write the bad inputs
	Out  string
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
}

// truthDoc is the ground truth of one rendered document.
type truthDoc struct {
	SourceID      string      `json:"source_id"`
	ParticipantID string      `json:"participant_id"`
	ReferralDate  string      `json:"referral_date"`
	Paper         string      `json:"paper"`
	DPI           int         `json:"dpi"`
	BodyFont      string      `json:"body_font"`
	BodyPt        float64     `json:"body_pt"`
	Pages         []truthPage `json:"pages"`
}

// truthPage is one page's text exactly as drawn: one line per drawn line,
// table cells separated by one space, and how the page was degraded.
type truthPage struct {
	Text        string  `json:"text"`
	Bitonal     bool    `json:"bitonal"`
	SkewDegrees float64 `json:"skew_degrees"`
}

// spec is a document to render. Stream selects its random stream, so each
// document's content does not depend on how many others come before it.
type spec struct {
	SourceID      string
	ParticipantID string
	ReferralDate  string
	Consent       bool
	Pages         int
	Stream        uint64
}

// rendered is a spec turned into PDF bytes and ground truth.
type rendered struct {
	PDF   []byte
	Truth truthDoc
}

// file is one file to write below the output folder.
type file struct {
	Path string
	Data []byte
}

// corpus is everything one run writes.
type corpus struct {
	Rows  []row
	Files []file
	Truth []truthDoc // one per complete rendered document
}

// rng returns the random source for one stream of a seed.
func rng(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// Streams above this offset are for files that do not get their own
// source number, so they never collide with a document's stream.
const extraStream = 1 << 32

// entry is one planned manifest row: the document behind it and, for a
// bad input, the rejection it should get.
type entry struct {
	Spec   spec
	Render bool   // the row's file is a rendered PDF
	Reason string // empty for a good document
	Dup    bool   // a duplicate of the first row
}

// plan draws every row's identity in manifest order from stream 0 of the
// seed. Source numbers follow the manifest order.
func plan(o options) []entry {
	r := rng(o.Seed, 0)
	used := map[string]bool{}
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
	for range o.Docs {
		es = append(es, entry{Spec: next(1 + r.IntN(3)), Render: true})
	}
	if !o.Bad {
		return es
	}
	// The bad documents that are real PDFs have one or two pages: they are
	// never OCRed, so more pages would only cost space.
	for _, b := range []struct {
		reason string
		render bool
	}{
		{"empty_file", false},
		{"not_pdf", false},
		{"malformed_pdf", true},
		{"missing_file", false},
		{"no_consent", true},
		{"hash_mismatch", true},
		{"path_outside_root", false},
		{"missing_field", true},
		{"bad_date", true},
	} {
		pages := 1
		if b.reason == "malformed_pdf" {
			pages = 2 // so the cut falls inside the document, not after it
		}
		e := entry{Spec: next(pages), Render: b.render, Reason: b.reason}
		e.Spec.Consent = b.reason != "no_consent"
		es = append(es, e)
	}
	es = append(es, entry{Spec: es[0].Spec, Dup: true})
	// A rescan of the second document: same identity, other bytes.
	rescan := es[1].Spec
	rescan.Pages, rescan.Stream = 1, extraStream+2
	es = append(es, entry{Spec: rescan, Render: true, Reason: "conflict"})
	return es
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

	c := &corpus{}
	for i, e := range es {
		s := e.Spec
		if e.Dup {
			r := c.Rows[0]
			r.State, r.Reason = "duplicate", ""
			c.Rows = append(c.Rows, r)
			continue
		}
		r := row{
			SourceID: s.SourceID, ParticipantID: s.ParticipantID, ReferralDate: s.ReferralDate,
			Consent: consentWord(s.Consent), Path: "docs/" + s.SourceID + ".pdf", State: "done",
		}
		if e.Reason != "" {
			r.State, r.Reason = "rejected", e.Reason
		}
		// Nil data writes no file and leaves the hash empty; an empty
		// slice writes an empty file.
		data := docs[i].PDF
		switch e.Reason {
		case "", "no_consent", "hash_mismatch", "missing_field", "bad_date":
			c.Truth = append(c.Truth, docs[i].Truth)
		case "empty_file":
			data = []byte{}
		case "not_pdf":
			data = []byte("Referral notes\nThis is a plain text file saved under a .pdf name.\n")
		case "malformed_pdf":
			// The first 40% keeps the signature and the first objects but
			// loses the xref and the trailer, as an interrupted copy would.
			data = data[:len(data)*4/10]
		case "path_outside_root":
			// No file is written there: the generator never writes outside
			// its output folder, and the path must be refused before any
			// look at the disk.
			r.Path = "../outside.pdf"
		case "conflict":
			r.Path = "docs/" + s.SourceID + "-rescan.pdf"
		}
		if data != nil {
			c.Files = append(c.Files, file{r.Path, data})
			r.SHA256 = sum(data)
		}
		switch e.Reason {
		case "hash_mismatch":
			r.SHA256 = sum([]byte(r.SHA256)) // well-formed, but the hash of other bytes
		case "missing_field":
			r.ParticipantID = ""
		case "bad_date":
			r.ReferralDate = "2024-02-30"
		}
		c.Rows = append(c.Rows, r)
	}
	return c, nil
}

// renderDoc draws the document s describes.
func renderDoc(seed uint64, s spec, dpis []int, fonts fontSet) (rendered, error) {
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
	pdf, err := imagePDF(pages)
	if err != nil {
		return rendered{}, err
	}
	return rendered{PDF: pdf, Truth: t}, nil
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
		if err := os.WriteFile(filepath.Join(out, filepath.FromSlash(f.Path)), f.Data, 0o644); err != nil {
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
	manifest := [][]string{{"source_id", "participant_id", "referral_date", "consent", "path", "sha256"}}
	expected := [][]string{{"source_id", "state", "reason"}}
	for _, r := range c.Rows {
		manifest = append(manifest, []string{r.SourceID, r.ParticipantID, r.ReferralDate, r.Consent, r.Path, r.SHA256})
		expected = append(expected, []string{r.SourceID, r.State, r.Reason})
	}
	if err := writeCSV(filepath.Join(out, "manifest.csv"), manifest); err != nil {
		return err
	}
	return writeCSV(filepath.Join(out, "expected.csv"), expected)
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
