package admit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/validate"

	"github.com/refbatch/refbatch/ocr/page"
	"github.com/refbatch/refbatch/report/outcome"
)

// maxPageTreeDepth bounds the page tree walk; real files nest a few levels.
const maxPageTreeDepth = 64

// pdfcpuConfig is pdfcpu's built-in default configuration (the one
// model.NewDefaultConfiguration returns when the config dir is disabled),
// built here so that reading a PDF never creates pdfcpu's config directory.
// Validation is relaxed: strict mode refuses good scans over metadata nits
// (kcs.pdf's outline, cardinal.pdf's dates).
func pdfcpuConfig() *model.Configuration {
	return &model.Configuration{
		CreationDate:      time.Now().Format("2006-01-02 15:04"),
		Version:           model.VersionStr,
		Reader15:          true,
		ValidationMode:    model.ValidationRelaxed,
		Eol:               types.EolLF,
		WriteObjectStream: true,
		WriteXRefStream:   true,
		EncryptUsingAES:   true,
		EncryptKeyLength:  256,
		Permissions:       model.PermissionsPrint,
		TimestampFormat:   "2006-01-02 15:04",
		DateFormat:        "2006-01-02",
		Offline:           true,
		Timeout:           5,
		Cmd:               model.VALIDATE,
	}
}

// inspect runs checks 5 to 9 on a file's bytes and returns the DPI of each
// page. Every failure is a *Rejection: the bytes are in memory, so nothing
// pdfcpu reports can be an I/O problem.
func inspect(data []byte, lim Limits) (dpis []int, err error) {
	defer func() {
		// pdfcpu is pure Go, so a crafted file can only make it panic, and
		// the panic must not take the parent process down.
		if p := recover(); p != nil {
			dpis = nil
			if mentionsEncrypt(data) {
				err = reject(outcome.Encrypted, "the file has /Encrypt (pdfcpu crashed reading it)")
				return
			}
			err = reject(outcome.MalformedPDF, "pdfcpu crashed reading the file (recovered panic)")
		}
	}()

	// 5. Encryption. pdfcpu opens a file whose user password is empty
	// without a word (encrypted_algo4.pdf), and ignores a direct /Encrypt
	// dictionary, so look at the trailers first and ask pdfcpu afterwards.
	if trailerHasEncrypt(data) {
		return nil, reject(outcome.Encrypted, "the trailer has /Encrypt")
	}
	// pdfcpu decodes some streams in full while reading: bound them first.
	inf := &inflation{left: maxInflated}
	if r := inf.checkRawStreams(data); r != nil {
		return nil, r
	}
	ctx, err := pdfcpu.Read(bytes.NewReader(data), pdfcpuConfig())
	switch {
	case errors.Is(err, pdfcpu.ErrWrongPassword):
		return nil, reject(outcome.Encrypted, "a user password is required to open the file")
	case err != nil && mentionsEncrypt(data):
		return nil, reject(outcome.Encrypted, "the file has /Encrypt and pdfcpu cannot open it: %s", scrub(err))
	case err != nil:
		return nil, reject(outcome.MalformedPDF, "pdfcpu cannot read the file: %s", scrub(err))
	case ctx.Encrypt != nil || ctx.E != nil:
		return nil, reject(outcome.Encrypted, "the trailer has /Encrypt")
	}

	// 6. Validation, which decodes the catalog's metadata in full.
	if r := inf.checkMetadata(ctx.XRefTable); r != nil {
		return nil, r
	}
	if err := validate.XRefTable(ctx); err != nil {
		if mentionsEncrypt(data) {
			return nil, reject(outcome.Encrypted, "the file has /Encrypt and does not validate: %s", scrub(err))
		}
		return nil, reject(outcome.MalformedPDF, "pdfcpu validation failed: %s", scrub(err))
	}

	// 7. Page count.
	switch n := ctx.PageCount; {
	case n <= 0:
		return nil, reject(outcome.MalformedPDF, "the document has no pages")
	case n > lim.MaxPages:
		return nil, reject(outcome.TooManyPages, "%d pages is over the %d-page cap", n, lim.MaxPages)
	}

	// 8. Page sizes.
	pages, err := pageSizes(ctx.XRefTable)
	if err != nil {
		return nil, reject(outcome.MalformedPDF, "reading the page tree: %s", scrub(err))
	}
	if len(pages) != ctx.PageCount {
		return nil, reject(outcome.MalformedPDF, "the page tree has %d pages, its /Count says %d", len(pages), ctx.PageCount)
	}
	dpis = make([]int, len(pages))
	for i, p := range pages {
		dpi, ok := lim.Page.FitDPI(p.w, p.h)
		if !ok {
			return nil, reject(outcome.PageTooLarge, "page %d is %.0f×%.0f pt, %.0f Mpx even at %d dpi, over the %s cap",
				i+1, p.w, p.h, page.Pixels(p.w, p.h, lim.Page.MinDPI)/1e6, lim.Page.MinDPI, mpx(lim.Page.MaxPagePixels))
		}
		dpis[i] = dpi
	}

	// 9. Images, at their decoded size.
	if err := checkImages(ctx.XRefTable, lim); err != nil {
		return nil, err
	}
	return dpis, nil
}

func mpx(n int64) string {
	return fmt.Sprintf("%g Mpx", float64(n)/1e6)
}

// trailerScanLimit bounds how much text after a trailer keyword or an xref
// stream's "obj" is handed to the parser: a trailer dictionary is small.
const trailerScanLimit = 64 << 10

// trailerHasEncrypt reports whether any classic trailer, or the xref stream
// that startxref points to, has an /Encrypt entry of any kind. pdfcpu
// records only an indirect /Encrypt, so this catches the direct
// dictionary some producers write.
func trailerHasEncrypt(data []byte) bool {
	hasEncrypt := func(b []byte) bool {
		// Only a dictionary can be a trailer: anything else is skipped
		// unparsed, so a flood of the keyword costs a scan, not a parse
		// of a window per occurrence (testdata/admit/hostile/keyword-flood.pdf
		// took 6 minutes for 1 MB).
		b = skipSpace(b)
		if len(b) < 2 || b[0] != '<' || b[1] != '<' {
			return false
		}
		// A zero-copy view: data is never written while admission runs.
		s := unsafe.String(&b[0], min(len(b), trailerScanLimit))
		o, err := model.ParseObject(&s)
		if err != nil {
			return false
		}
		d, ok := o.(types.Dict)
		if !ok {
			return false
		}
		_, found := d.Find("Encrypt")
		return found
	}
	kw := []byte("trailer")
	for off := 0; ; {
		i := bytes.Index(data[off:], kw)
		if i < 0 {
			break
		}
		off += i + len(kw)
		if hasEncrypt(data[off:]) {
			return true
		}
	}
	// An xref stream: "startxref <offset>" names "<num> <gen> obj <<...>>".
	i := bytes.LastIndex(data, []byte("startxref"))
	if i < 0 {
		return false
	}
	rest := skipSpace(data[i+len("startxref"):])
	n := 0
	for n < len(rest) && n < 19 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	var xref int
	for _, c := range rest[:n] {
		xref = xref*10 + int(c-'0')
	}
	if n == 0 || xref >= len(data) {
		return false
	}
	obj := data[xref:]
	j := bytes.Index(obj[:min(len(obj), 64)], []byte("obj"))
	if j < 0 {
		return false
	}
	return hasEncrypt(obj[j+len("obj"):])
}

// mentionsEncrypt reports whether the raw bytes hold an /Encrypt key with a
// dictionary or an indirect reference as value, as a trailer or an xref
// stream does. It only names the cause when pdfcpu fails: a file pdfcpu
// reads is judged by the trailer pdfcpu parsed.
func mentionsEncrypt(data []byte) bool {
	key := []byte("/Encrypt")
	for off := 0; ; {
		i := bytes.Index(data[off:], key)
		if i < 0 {
			return false
		}
		off += i + len(key)
		rest := skipSpace(data[off:])
		if bytes.HasPrefix(rest, []byte("<<")) || isIndirectRef(rest) {
			return true
		}
	}
}

// isIndirectRef reports whether b starts with "<num> <gen> R".
func isIndirectRef(b []byte) bool {
	for range 2 {
		n := 0
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		if n == 0 || n == len(b) || !isSpace(b[n]) {
			return false
		}
		b = skipSpace(b[n:])
	}
	return len(b) > 0 && b[0] == 'R'
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// isSpace is PDF white space (ISO 32000 7.2.2).
func isSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

// scrub keeps what a pdfcpu error says about the structure and drops what
// it quotes from the document: pdfcpu prints objects with %v, so anything
// from the first string, dictionary, array or quote on is cut.
func scrub(err error) string {
	s := err.Error()
	if i := strings.IndexAny(s, "(<[\"'\n"); i >= 0 {
		s = s[:i]
	}
	const maxLen = 160
	if len(s) > maxLen {
		s = s[:maxLen]
	}
	s = strings.TrimRight(s, " :,=")
	if s == "" {
		return "no detail"
	}
	return s
}
