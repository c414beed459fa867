// Package admit decides, before any OCR, whether a manifest row's file may
// enter the batch.
//
// Check runs the admission checks of DESIGN.md §1 step 2 in order of
// cheapness, and stops at the first one that fails:
//
//  1. path: the manifest path, joined to the root, must stay inside the
//     root both as written and after resolving symlinks
//     (path_outside_root); it must exist (missing_file) and be a regular
//     file (not_pdf).
//  2. size, from stat before reading: empty_file, too_large.
//  3. the bytes are read once and hashed with SHA-256; an expected hash
//     that differs is hash_mismatch.
//  4. signature: "%PDF-" within the first 1024 bytes, as readers accept
//     it (not_pdf).
//  5. encryption: an /Encrypt entry in any trailer (or in the xref stream
//     startxref names) is encrypted, even when the user password is empty
//     and every reader opens the file silently; so is a file pdfcpu
//     refuses for a password, or fails on while /Encrypt is in it.
//  6. pdfcpu reading and validation in relaxed mode (strict mode rejects
//     good scanner output): malformed_pdf, also for any pdfcpu panic.
//     pdfcpu decodes xref streams, object streams and the catalog's XMP
//     metadata into memory with no limit, so those are first decoded
//     here within a 256 MiB budget; a decompression bomb among them is
//     malformed_pdf.
//  7. page count: 0 is malformed_pdf, above Limits.MaxPages is
//     too_many_pages.
//  8. page size: each page's effective box (CropBox within MediaBox,
//     /Rotate and /UserUnit honoured) in pixels at Limits.DPI; a page over
//     Limits.MaxPagePixels is given a lower integer DPI, never below
//     Limits.MinDPI; still over is page_too_large.
//  9. images: any image XObject whose decoded Width×Height is over
//     Limits.MaxPagePixels is page_too_large, whatever the page DPI,
//     because the renderer decodes it at full size (hugemono.pdf holds a
//     35000×35000 bitonal image in 12 KB).
//
// No image is decoded and nothing is rendered: admission is pure Go
// (pdfcpu, no cgo) and runs in the parent process, while MuPDF only ever
// runs in worker children. A pdfcpu panic is recovered; a pdfcpu hang or
// its memory use cannot be bounded from here beyond the decode budget, and
// that memory grows with the number of objects in the file.
//
// # Rejections and other errors
//
// Check returns a *Rejection for a file that is refused for good: the
// caller records the row as rejected with Rejection.Reason (a DESIGN.md §4
// code) and never retries it. Any other error means admission could not
// decide, for example a permission problem or an I/O error while reading:
// the file may be fine once the problem is fixed, so callers treat it as
// transient (retry, or stop the run), never as a rejection. Everything
// pdfcpu says about the bytes is a rejection, because the bytes are already
// in memory and cannot fail for I/O reasons any more.
//
// Rejection.Detail never holds document text or the path (a file name may
// carry a participant ID); pdfcpu messages are cut before the first string,
// dictionary or array they quote.
//
// # Disk
//
// Admission writes nothing. pdfcpu's model.NewDefaultConfiguration creates
// a config directory (config.yml, fonts, certificates) under the user's
// config dir on first use; admit never calls it, nor any pdfcpu api
// function that does, and builds its own relaxed Configuration instead
// (see pdfcpuConfig). It also leaves pdfcpu's global model.ConfigPath
// alone, so other users of pdfcpu in the process are not affected.
package admit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Reason codes a Rejection carries (DESIGN.md §4).
const (
	ReasonPathOutsideRoot = "path_outside_root"
	ReasonMissingFile     = "missing_file"
	ReasonEmptyFile       = "empty_file"
	ReasonNotPDF          = "not_pdf"
	ReasonTooLarge        = "too_large"
	ReasonHashMismatch    = "hash_mismatch"
	ReasonEncrypted       = "encrypted"
	ReasonMalformedPDF    = "malformed_pdf"
	ReasonTooManyPages    = "too_many_pages"
	ReasonPageTooLarge    = "page_too_large"
)

// signatureWindow is how far into the file "%PDF-" may start; Acrobat and
// MuPDF accept junk before the header within the first kilobyte.
const signatureWindow = 1024

// Limits are the caps admission enforces. A zero field means its default
// (DefaultLimits), so Limits{MaxPages: 10} changes only the page cap.
type Limits struct {
	MaxBytes      int64 // largest accepted file; default 64 MiB
	MaxPages      int   // most pages in one document; default 200
	DPI           int   // the render DPI; default 300
	MinDPI        int   // a large page may be rendered down to this DPI; default 150
	MaxPagePixels int64 // cap on a rendered page and on a decoded image; default 50_000_000
}

// DefaultLimits returns the defaults of DESIGN.md §7.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:      64 << 20,
		MaxPages:      200,
		DPI:           300,
		MinDPI:        150,
		MaxPagePixels: 50_000_000,
	}
}

// withDefaults fills zero fields and refuses limits no page could meet.
func (l Limits) withDefaults() (Limits, error) {
	d := DefaultLimits()
	if l.MaxBytes == 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxPages == 0 {
		l.MaxPages = d.MaxPages
	}
	if l.DPI == 0 {
		l.DPI = d.DPI
	}
	if l.MinDPI == 0 {
		l.MinDPI = min(d.MinDPI, l.DPI)
	}
	if l.MaxPagePixels == 0 {
		l.MaxPagePixels = d.MaxPagePixels
	}
	if l.MaxBytes < 0 || l.MaxPages < 0 || l.MaxPagePixels < 0 || l.MinDPI < 1 || l.DPI < l.MinDPI {
		return l, fmt.Errorf("invalid admission limits %+v", l)
	}
	return l, nil
}

// Doc is what admission learned about an admitted file. The bytes are not
// kept: the OCR worker re-reads the file and re-hashes it.
type Doc struct {
	Path    string // resolved absolute path, symlinks evaluated; open this one
	Size    int64  // bytes read
	SHA256  string // lowercase hex
	Pages   int
	PageDPI []int // the DPI each page renders at: Limits.DPI, or lower for a page over the pixel cap
}

// Rejection is a permanent, row-level refusal of a file. Reason is a
// DESIGN.md §4 code; Detail says why for a person and never contains
// document text or the file's path.
type Rejection struct {
	Reason string
	Detail string
}

// Error returns "<reason>: <detail>".
func (r *Rejection) Error() string {
	return r.Reason + ": " + r.Detail
}

func reject(reason, format string, args ...any) *Rejection {
	return &Rejection{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Check admits or rejects the file at path (relative to root, or absolute
// inside root). wantSHA, when not empty, is the expected SHA-256 in hex
// (case-insensitive). A refused file returns a *Rejection; any other error
// is an unexpected failure such as EIO or EACCES (see the package doc).
func Check(root, path, wantSHA string, lim Limits) (*Doc, error) {
	lim, err := lim.withDefaults()
	if err != nil {
		return nil, err
	}

	// 1. Path.
	resolved, err := Resolve(root, path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return nil, statError(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(fi)
	}

	// 2. Size, before reading anything.
	if err := checkSize(fi.Size(), lim); err != nil {
		return nil, err
	}

	// 3. Read once, hash.
	data, err := readCapped(resolved, fi.Size(), lim)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	doc := &Doc{Path: resolved, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	if want := strings.TrimSpace(wantSHA); want != "" && !strings.EqualFold(want, doc.SHA256) {
		if !isSHA256Hex(want) {
			return nil, reject(ReasonHashMismatch, "expected sha256 is not 64 hex digits")
		}
		return nil, reject(ReasonHashMismatch, "sha256 is %s, manifest expects %s", doc.SHA256, strings.ToLower(want))
	}

	// 4. Signature.
	if !bytes.Contains(data[:min(len(data), signatureWindow)], []byte("%PDF-")) {
		return nil, reject(ReasonNotPDF, "no %%PDF- header in the first %d bytes", signatureWindow)
	}

	// 5–9. Encryption, validation, pages, page sizes, images.
	pages, err := inspect(data, lim)
	if err != nil {
		return nil, err
	}
	doc.Pages = len(pages)
	doc.PageDPI = pages
	return doc, nil
}

func checkSize(size int64, lim Limits) error {
	switch {
	case size == 0:
		return reject(ReasonEmptyFile, "the file has 0 bytes")
	case size > lim.MaxBytes:
		return reject(ReasonTooLarge, "%d bytes is over the %d-byte cap", size, lim.MaxBytes)
	}
	return nil
}

// readCapped reads the whole file, refusing it if it grew past the cap or
// shrank to nothing since it was stat'ed.
func readCapped(path string, statSize int64, lim Limits) ([]byte, error) {
	// O_NONBLOCK: if the path was swapped for a FIFO since Stat, opening it
	// must not hang; on a regular file the flag changes nothing.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, statError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat of opened file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(fi)
	}
	buf := bytes.NewBuffer(make([]byte, 0, statSize+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, lim.MaxBytes+1)); err != nil {
		return nil, fmt.Errorf("reading file: %w", err)
	}
	if err := checkSize(int64(buf.Len()), lim); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// statError turns a failure to stat or open a path that resolved as
// existing into a rejection when it is about the path, and passes anything
// else (EACCES, EIO) through as an unexpected error.
func statError(err error) error {
	if missingPathError(err) {
		return reject(ReasonMissingFile, "the file does not exist")
	}
	return fmt.Errorf("opening file: %w", err)
}

func notRegular(fi fs.FileInfo) *Rejection {
	if fi.IsDir() {
		return reject(ReasonNotPDF, "the path is a directory")
	}
	return reject(ReasonNotPDF, "the path is not a regular file (%s)", fi.Mode().Type())
}

func isSHA256Hex(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// HashFile streams the file at path through SHA-256 and returns the digest
// in lowercase hex and the number of bytes hashed. It follows symlinks and
// applies no root rule: resolve the path first (Resolve).
func HashFile(path string) (sha256hex string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("hashing file: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("hashing file: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// IsRejection reports whether err is (or wraps) a *Rejection and returns it.
func IsRejection(err error) (*Rejection, bool) {
	var r *Rejection
	ok := errors.As(err, &r)
	return r, ok
}
