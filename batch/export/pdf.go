package export

// The searchable PDF: the source file, byte for byte, followed by an
// incremental update (ISO 32000-1 §7.5.6) that adds an invisible text
// layer to each page that was OCR'd.
//
// An incremental update leaves every byte of the source where it was, so
// the pages' images and content streams are unchanged by construction:
// nothing is decoded, recompressed or renumbered, and a reader that
// ignores the update still sees the source. The update holds:
//
//   - the glyphless font, once (see pdftext.go);
//   - for each OCR'd page with words, two new content streams, "q" before
//     the page's own streams and "Q" plus the words after them, so that
//     whatever graphics state the page leaves behind does not move the
//     words; the page's /Contents becomes [q, its streams..., words], and
//     its /Resources a direct copy of those in effect (its own or
//     inherited, which may be shared with other pages) with the font added;
//   - a new document information dictionary: the source's entries, the
//     Producer, and refbatch's provenance (source and artifact SHA-256,
//     engines, policy version);
//   - a cross-reference section of the same kind as the source's last one
//     (table or stream), whose /Prev is the source's startxref.
//
// Pages read from their own text layer, blank pages and pages without
// words are left as they are. The output is a function of its inputs
// alone (no clock, no randomness), which lets an export resume by hash.

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/ocr/result"
)

// pdfcpuConfig is pdfcpu's default configuration, built here so that
// reading a PDF never creates pdfcpu's config directory. Validation is
// relaxed, as admission's: strict mode refuses good scans over nits.
func pdfcpuConfig() *model.Configuration {
	return &model.Configuration{
		CreationDate:    time.Now().Format("2006-01-02 15:04"),
		Version:         model.VersionStr,
		Reader15:        true,
		ValidationMode:  model.ValidationRelaxed,
		Eol:             types.EolLF,
		TimestampFormat: "2006-01-02 15:04",
		DateFormat:      "2006-01-02",
		Offline:         true,
		Timeout:         5,
		Cmd:             model.VALIDATE,
	}
}

// readPDF parses src with pdfcpu. pdfcpu is pure Go, so a crafted file can
// only make it panic; the panic becomes an error.
func readPDF(src []byte) (ctx *model.Context, err error) {
	defer func() {
		if p := recover(); p != nil {
			ctx, err = nil, errors.New("pdfcpu crashed reading the source (recovered panic)")
		}
	}()
	ctx, err = pdfcpu.Read(bytes.NewReader(src), pdfcpuConfig())
	if err != nil {
		return nil, &parseError{"reading the source PDF", err}
	}
	if ctx.Encrypt != nil || ctx.E != nil {
		// Admission rejects encrypted files; one here is not the file
		// that was admitted.
		return nil, errors.New("the source PDF is encrypted")
	}
	if err := ctx.EnsurePageCount(); err != nil {
		return nil, &parseError{"counting the source's pages", err}
	}
	return ctx, nil
}

// parseError is pdfcpu failing on the source. pdfcpu's message may quote
// the file's bytes, which may be document text: [Redacted] keeps only what
// refbatch was doing.
type parseError struct {
	what string
	err  error
}

func (e *parseError) Error() string { return e.what + ": " + e.err.Error() }
func (e *parseError) Unwrap() error { return e.err }

// Redacted is err's message with any message of pdfcpu's left out, fit
// for a finding or a log.
func Redacted(err error) string {
	msg := err.Error()
	var pe *parseError
	if errors.As(err, &pe) {
		msg = strings.Replace(msg, pe.Error(), pe.what+" failed (pdfcpu's message is not kept: it may quote the file)", 1)
	}
	return msg
}

// ReadFrames reads the frame of every page of a PDF: its displayed size,
// visible area and /Rotate, inherited attributes included. Like
// SearchablePDF it parses the PDF in the calling process.
func ReadFrames(pdf []byte) ([]PageFrame, error) {
	ctx, err := readPDF(pdf)
	if err != nil {
		return nil, err
	}
	return framesOf(ctx)
}

func framesOf(ctx *model.Context) ([]PageFrame, error) {
	frames := make([]PageFrame, ctx.PageCount)
	for i := range frames {
		_, _, attrs, err := ctx.PageDict(i+1, false)
		if err != nil {
			return nil, &parseError{fmt.Sprintf("reading page %d", i+1), err}
		}
		frames[i] = frameOf(attrs)
	}
	return frames, nil
}

// letter is the page MuPDF and poppler assume when a page has no usable
// MediaBox: US Letter.
var letter = [4]float64{0, 0, 612, 792}

// frameOf makes a page's frame from its attributes in effect, as MuPDF
// and poppler read them: the CropBox clipped to the MediaBox, an empty
// result falling back to the MediaBox; /Rotate a multiple of 90.
func frameOf(a *model.InheritedPageAttrs) PageFrame {
	norm := func(r *types.Rectangle) ([4]float64, bool) {
		if r == nil {
			return [4]float64{}, false
		}
		b := [4]float64{min(r.LL.X, r.UR.X), min(r.LL.Y, r.UR.Y), max(r.LL.X, r.UR.X), max(r.LL.Y, r.UR.Y)}
		return b, b[2] > b[0] && b[3] > b[1]
	}
	vis, ok := norm(a.MediaBox)
	if !ok {
		vis = letter
	}
	if crop, ok := norm(a.CropBox); ok {
		c := [4]float64{max(vis[0], crop[0]), max(vis[1], crop[1]), min(vis[2], crop[2]), min(vis[3], crop[3])}
		if c[2] > c[0] && c[3] > c[1] {
			vis = c
		}
	}
	f := PageFrame{Visible: vis, Rotate: ((a.Rotate % 360) + 360) % 360 / 90 * 90, Width: vis[2] - vis[0], Height: vis[3] - vis[1]}
	if f.Rotate == 90 || f.Rotate == 270 {
		f.Width, f.Height = f.Height, f.Width
	}
	return f
}

// SearchablePDF returns src with an invisible text layer on each page
// that was OCR'd (see the top of this file). pages are the artifact's,
// one per page of src in order; meta and opt supply the metadata, and
// opt whether to make it PDF/A-2b. notPDFA says why a PDF/A asked for
// could not be made (the PDF is then plain searchable PDF), "" otherwise.
//
// It parses src with pdfcpu in the calling process: refbatch calls it only
// in a child ([Renderer]).
func SearchablePDF(src []byte, pages []result.PageResult, meta Provenance, opt PDFOptions) (pdf []byte, notPDFA string, err error) {
	r, err := searchable(src, pages, meta, &opt)
	return r.PDF, r.NotPDFA, err
}

// searchable reads src's frames and, with a non-nil opt, makes its
// searchable PDF (see SearchablePDF).
func searchable(src []byte, pages []result.PageResult, meta Provenance, opt *PDFOptions) (r Rendered, err error) {
	ctx, err := readPDF(src)
	if err != nil {
		return r, err
	}
	if r.Frames, err = framesOf(ctx); err != nil || opt == nil {
		return r, err
	}
	if len(pages) != ctx.PageCount {
		return r, fmt.Errorf("the artifact has %d pages and the source %d", len(pages), ctx.PageCount)
	}
	if ctx.Read.RepairOffset != 0 {
		return r, errors.New("the source has bytes before its header; its offsets cannot be extended")
	}
	prev, xrefStream, err := lastXRef(src)
	var located map[int][2]int64
	if errors.Is(err, errDamagedXRef) {
		located, err = objectOffsets(ctx, src)
	}
	if err != nil {
		return r, err
	}
	next := ctx.MaxObjNr + 1
	if ctx.Size != nil {
		next = max(next, *ctx.Size)
	}
	u := newUpdate(src, next)
	maps.Copy(u.offsets, located)
	if r.Straightened, err = u.layers(ctx, src, pages, r.Frames, opt); err != nil {
		return r, err
	}
	m := newDocMeta(ctx, meta, *opt)
	if opt.PDFA {
		if r.NotPDFA = pdfaObstacle(ctx, src, located != nil); r.NotPDFA == "" {
			m.PDFA = true
			u.mendStreams(ctx, src)
		}
	}
	if err := u.catalog(ctx, m); err != nil {
		return r, err
	}
	info, err := u.info(ctx, meta, m)
	if err != nil {
		return r, err
	}
	trailer := types.Dict{"Root": *ctx.Root, "Info": info}
	if located == nil {
		trailer["Prev"] = types.Integer(prev)
	}
	trailer["ID"] = fileID(ctx.ID, meta)
	r.PDF = u.finish(trailer, xrefStream)
	return r, nil
}

// layers adds the text layer of each OCR'd page with words or
// transcriptions (opt's, after its words), and the fonts once when one
// does; with opt.Straighten it first redraws the pages turned in the
// image or deskewed (see straighten.go), whose numbers (1-based) it
// returns.
func (u *update) layers(ctx *model.Context, src []byte, pages []result.PageResult, frames []PageFrame, opt *PDFOptions) ([]int, error) {
	var straight map[int]*straightPage
	if opt.Straighten {
		var err error
		if straight, err = u.straighten(ctx, src, pages, frames); err != nil {
			return nil, err
		}
	}
	placed := make([][]placedLine, len(pages))
	var top uint16 // the highest code unit drawn
	for i, p := range pages {
		f := frames[i]
		if straight[i] != nil {
			p, f = straightened(p)
		}
		placed[i] = append(placeLines(p, f), placeTranscriptions(p, i, f, opt.Transcriptions)...)
		top = max(top, topCode(placed[i]))
	}
	var fs *fontSet
	var done []int
	for i, lines := range placed {
		if len(lines) == 0 && straight[i] == nil {
			continue
		}
		if fs == nil && len(lines) > 0 {
			f, err := u.newFontSet(top)
			if err != nil {
				return nil, err
			}
			fs = f
		}
		if err := u.addLayer(ctx, i+1, fs, lines, straight[i]); err != nil {
			return nil, fmt.Errorf("adding the text layer to page %d: %w", i+1, err)
		}
		if straight[i] != nil {
			done = append(done, i+1)
		}
	}
	return done, nil
}

// addLayer gives page n (1-based) its text layer: the content streams
// around its own and its resources with the fonts; a page sp straightens
// is redrawn as its image instead (see redraw).
func (u *update) addLayer(ctx *model.Context, n int, fs *fontSet, lines []placedLine, sp *straightPage) error {
	d, ref, attrs, err := ctx.PageDict(n, false)
	if err != nil {
		return &parseError{"reading the page dictionary", err}
	}
	if ref == nil {
		return errors.New("the page dictionary is not an indirect object")
	}
	contents, err := pageContents(ctx, d)
	if err != nil {
		return err
	}
	page := types.Dict{}
	maps.Copy(page, d)
	res := types.Dict{}
	if sp != nil {
		var draw types.IndirectRef
		draw, res = u.redraw(page, sp)
		contents = types.Array{draw}
	} else if attrs.Resources != nil {
		maps.Copy(res, attrs.Resources)
	}
	fonts := types.Dict{}
	if o, ok := res.Find("Font"); ok && o != nil {
		f, err := ctx.DereferenceDict(o)
		if err != nil {
			return &parseError{"reading /Font", err}
		}
		maps.Copy(fonts, f)
	}
	names := map[fontMetrics]string{}
	k := 0
	for _, l := range lines {
		for _, w := range l.words {
			if _, ok := names[w.metrics]; ok {
				continue
			}
			name := "RefbatchOCR"
			for ; fonts[name] != nil; k++ {
				name = fmt.Sprintf("RefbatchOCR%d", k)
			}
			fonts[name], names[w.metrics] = fs.font(w.metrics), name
		}
	}
	res["Font"] = fonts

	open := u.stream(types.Dict{}, []byte("q\n"))
	layer := u.stream(types.Dict{}, textLayer(lines, names))
	page["Contents"] = append(append(types.Array{open}, contents...), layer)
	page["Resources"] = res
	u.object(ref.ObjectNumber.Value(), ref.GenerationNumber.Value(), page.PDFString())
	return nil
}

// pageContents is the page dictionary d's /Contents as an array of
// stream references.
func pageContents(ctx *model.Context, d types.Dict) (types.Array, error) {
	var contents types.Array
	o, ok := d.Find("Contents")
	if !ok || o == nil {
		return nil, nil
	}
	switch o := o.(type) {
	case types.IndirectRef:
		// A reference to a stream, or to an array of them.
		obj, err := ctx.Dereference(o)
		if err != nil {
			return nil, &parseError{"reading /Contents", err}
		}
		if a, ok := obj.(types.Array); ok {
			contents = append(contents, a...)
		} else {
			contents = append(contents, o)
		}
	case types.Array:
		contents = append(contents, o...)
	default:
		return nil, fmt.Errorf("/Contents is a %T", o)
	}
	return contents, nil
}

// pdfString is s as a PDF text string: literal when it is printable
// ASCII, UTF-16BE with a byte order mark otherwise.
func pdfString(s string) types.Object {
	ascii := true
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			ascii = false
			break
		}
	}
	if !ascii {
		return types.NewHexLiteral(utf16BE(s, true))
	}
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	return types.StringLiteral(r.Replace(s))
}

// fileID keeps the source's permanent identifier and makes the changing
// one from the source and artifact hashes, so the same export gives the
// same bytes.
func fileID(old types.Array, meta Provenance) types.Array {
	sum := sha256.Sum256([]byte("refbatch export\x00" + meta.SourceSHA256 + "\x00" + meta.ArtifactSHA256))
	changed := types.NewHexLiteral(sum[:16])
	if len(old) == 2 {
		return types.Array{old[0], changed}
	}
	return types.Array{changed, changed}
}
