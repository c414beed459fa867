package export

// The export's PDF work in a supervised child process. Reading a source
// for its page frames and writing its searchable PDF both parse it with
// pdfcpu, which recurses and allocates as the file says: as in admission,
// that happens in the refbatch binary re-executed in a hidden mode (which
// calls ServeMain), under a cap on resident memory, a budget of CPU time
// and a wall-clock backstop, so that a hostile source (or a pdfcpu bug)
// costs a child and one document, never the export.

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/result"
)

// RendererConfig says how a Renderer starts its children.
type RendererConfig struct {
	// Command re-executes the binary in its export mode, which calls
	// ServeMain.
	child.Command
	// Budget is what a child may use on one document: Memory of resident
	// memory, and Timeout plus TimeoutPerMiB for each MiB of the source of
	// CPU time. 0 means the defaults (DefaultMemory, ...).
	child.Budget
}

// Defaults of a Renderer.
const (
	// DefaultMemory is the resident memory a child may use for one
	// document. It holds what admission's child holds for the same file
	// (the request and pdfcpu's object graph: about 140 MB for a 60 MB
	// scan of 200 image pages) plus the searchable PDF, a copy of the
	// source with a small update, and its reply frame.
	DefaultMemory = 512 << 20
	// DefaultTimeout and DefaultTimeoutPerMiB are the CPU time a child may
	// spend on one document: admission's budget, which pdfcpu's reading
	// dominates here as there (0.1 s for a 60 MB scan, 2 s for 100,000
	// objects); placing the words takes milliseconds. It is CPU time, so a
	// loaded machine cannot make a sound document miss it.
	DefaultTimeout       = 5 * time.Second
	DefaultTimeoutPerMiB = time.Second
)

// Renderer makes the files of a document that need its source PDF (the
// page frames and the searchable PDF) in a child process (a child.Pool of
// one), one document at a time.
type Renderer struct {
	budget   child.Budget
	children *child.Pool
}

// NewRenderer returns a renderer that starts its children with cfg. Close
// it.
func NewRenderer(cfg RendererConfig) *Renderer {
	children := child.NewPool(child.PoolConfig{Command: cfg.Command, Name: "the export's PDF child",
		Setup: child.ParserSetup, MaxReply: minReply})
	defaults := child.Budget{Memory: DefaultMemory, Timeout: DefaultTimeout, TimeoutPerMiB: DefaultTimeoutPerMiB}
	return &Renderer{children: children, budget: cfg.Budget.Or(defaults)}
}

// Rendered is what a child made of one document.
type Rendered struct {
	Frames []PageFrame // every page's frame, for the ALTO
	PDF    []byte      // the searchable PDF, when asked for
	// NotPDFA says why the PDF is not PDF/A though PDF/A was asked for.
	NotPDFA string
	// Straightened are the pages (1-based) redrawn straight, with
	// PDFOptions.Straighten.
	Straightened []int
}

// RenderError is a document whose files could not be made: its child
// died, or the child reported an error. Reason names what happened in
// words of refbatch's own (never the source's content, nor a parser's
// message quoting it).
type RenderError struct{ Reason string }

func (e *RenderError) Error() string { return e.Reason }

// Render reads the frames of src's pages and, with pdf (not nil), makes
// its searchable PDF from pages, meta and pdf (see SearchablePDF), in a
// child. A document that kills a child (see child.Pool: a crash is tried
// once more, an overrun of the CPU budget or of memory is not), or that
// the child reports it could not make, is a *RenderError; a cancelled ctx
// returns its error.
func (r *Renderer) Render(ctx context.Context, src []byte, pages []result.PageResult, meta Provenance, pdf *PDFOptions) (*Rendered, error) {
	// The child needs none of the policy, whose values gob cannot all
	// carry.
	meta.Policy = nil
	req := renderRequest{Source: src, PDF: pdf, Memory: r.budget.Memory, Meta: meta}
	if pdf != nil {
		req.Pages = pages
	}
	var ts []Transcription
	if pdf != nil {
		ts = pdf.Transcriptions
	}
	lim := child.Limits{CPU: r.budget.CPU(len(src)), Reply: replyCap(src, pages, ts)}
	if pdf != nil && pdf.Straighten {
		cpu, reply := straightenCost(pages)
		lim.CPU, lim.Reply = lim.CPU+cpu, lim.Reply+reply
	}
	var rep renderReply
	err := r.children.Call(ctx, lim, req, &rep)
	var f *child.Failure
	switch {
	case errors.As(err, &f):
		return nil, &RenderError{Reason: f.Describe("the PDF child")}
	case err != nil:
		return nil, err
	case rep.Err != "":
		return nil, &RenderError{Reason: rep.Err}
	}
	return r.check(src, pdf, rep)
}

// check refuses a reply that cannot be right, whatever the child did:
// the searchable PDF is an incremental update, so it starts with the
// source, byte for byte.
func (r *Renderer) check(src []byte, pdf *PDFOptions, rep renderReply) (*Rendered, error) {
	if pdf != nil && (len(rep.PDF) <= len(src) || !bytes.Equal(rep.PDF[:len(src)], src)) {
		return nil, &RenderError{Reason: "the PDF child's searchable PDF does not start with the source"}
	}
	return &Rendered{Frames: rep.Frames, PDF: rep.PDF, NotPDFA: rep.NotPDFA, Straightened: rep.Straightened}, nil
}

// minReply is the smallest reply cap a child is started with; a document
// that may need more gets a new child with room for it (replyCap).
const minReply = 256 << 20

// replyCap bounds the reply for a document: the source, which the
// searchable PDF repeats, plus its text layer (a text object per line, a
// few hundred bytes, and each character's UTF-16 code in hex), the
// transcriptions' lines alike, plus room for the font, the page frames
// and the update's objects.
func replyCap(src []byte, pages []result.PageResult, ts []Transcription) int64 {
	n := int64(len(src)) + 4<<20
	for _, p := range pages {
		n += 4<<10 + 512*int64(len(p.Words)) + 16*int64(len(p.Text))
		for _, w := range p.Words {
			n += 16 * int64(len(w.Text))
		}
	}
	for _, t := range ts {
		n += 4<<10 + 544*int64(len(t.Text))
	}
	return n
}

// StraightenCPUPerMegapixel is the CPU time a child may take more for
// each million pixels of a page it straightens (render, resample and
// compress: about a tenth of it, 0.9 s a 9-megapixel page, on the eval
// corpus's 36 such pages at 300 dpi under load).
const StraightenCPUPerMegapixel = time.Second

// straightenCost is the CPU time and reply room a child needs more to
// straighten pages: every OCR'd page that is not upright, at its
// canvas's size, as bare RGB samples (Flate never adds more than a few
// bytes a block).
func straightenCost(pages []result.PageResult) (time.Duration, int64) {
	var cpu time.Duration
	var reply int64
	for _, p := range pages {
		turned := p.Rotation%360 != 0 || p.SkewDegrees != 0
		if c := p.Canvas; c != nil {
			turned = c.Matrix[0] != 1 || c.Matrix[1] != 0 || c.Matrix[2] != 0 || c.Matrix[3] != 1
		}
		if p.TextSource != result.TextFromOCR || !turned {
			continue
		}
		px := int64(p.Width) * int64(p.Height)
		cpu += time.Duration(float64(StraightenCPUPerMegapixel) * float64(px) / 1e6)
		reply += 3*px + int64(p.Height) + 64<<10
	}
	return cpu, reply
}

// Close ends the child, if one is running.
func (r *Renderer) Close() error { return r.children.Close() }

// The messages between a Renderer and its children.

type renderRequest struct {
	Source []byte
	Pages  []result.PageResult // with PDF only
	Meta   Provenance
	PDF    *PDFOptions // make the searchable PDF so, not only the frames
	Memory int64       // resident cap while this document is rendered
}

type renderReply struct {
	Frames []PageFrame
	PDF    []byte
	Err    string // why the document failed, in refbatch's words
	// NotPDFA: why the PDF is not PDF/A though asked (refbatch's words).
	NotPDFA      string
	Straightened []int
}
