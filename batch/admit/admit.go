// Package admit decides, before any OCR, whether a manifest row's file may
// enter the batch.
//
// Check runs the admission checks in order of cheapness, and stops at the
// first one that fails:
//
//  1. path: the manifest path, joined to the root, must stay inside the
//     root both as written and after resolving symlinks
//     (path_outside_root); it must exist (missing_file) and be a regular
//     file (not_pdf); a file that exists but cannot be opened or read is
//     unreadable.
//  2. size, from fstat before reading: empty_file, too_large.
//  3. the bytes are read once (at most the cap plus one byte; see
//     ReadSource) and hashed with SHA-256; an expected hash that differs
//     is hash_mismatch.
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
//     /Rotate and /UserUnit honoured) is given its render DPI by the page
//     policy's rule (page.Policy.FitDPI: the policy's DPI, or lower for a
//     page over its pixel cap, never below its MinDPI); a page that fits
//     at no DPI is page_too_large.
//  9. images: any image whose decoded size is over the policy's
//     MaxPagePixels is page_too_large, whatever the page DPI, because the
//     renderer decodes it at full size (hugemono.pdf holds a 35000×35000
//     bitonal image in 12 KB). The size is what the renderer would
//     allocate: an image XObject's Width×Height, an inline image's W×H in
//     any stream that may be drawn (pages, forms, patterns, Type 3
//     glyphs), and the size JBIG2, JPEG, JPEG 2000 and CCITT data declare
//     in their own headers; see checkImages. Only headers are read, within
//     a decode budget; a bomb is malformed_pdf.
//
// # Isolation
//
// Checks 1 to 4 run in the caller and never parse the file: they read it
// as bytes. Checks 5 to 9 parse it, and a hostile PDF can make a parser
// recurse until its stack overflows (no recover catches that), allocate
// what a number in the file says, or take time exponential in a few
// hundred bytes. So they run behind an [Inspector], which in refbatch is a
// [Pool] of supervised child processes (the binary re-executed in its
// hidden admission mode, [ServeMain]) with a bounded stack, a resident
// memory cap, an address-space limit and a deadline that grows with the
// file's size. A child that crashes, runs out of memory or overruns its
// deadline is replaced and the file is tried once more with a longer
// deadline (load can slow a sound file); failing again, the file is
// unparseable_pdf. No image is decoded (only its header is read) and
// nothing is rendered.
//
// # Rejections and other errors
//
// Check returns a *Rejection for a file that is refused: the caller
// records the row as rejected with Rejection.Reason and never OCRs it. Any
// other error means admission itself could not run (the root is gone, the
// admission child cannot start, the context ended): the batch's problem,
// not the row's.
//
// Rejection.Detail never holds document text, the path (a file name may
// carry a participant ID) or an OS error's text (which names the path);
// pdfcpu messages are cut before the first string, dictionary or array
// they quote.
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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/refbatch/refbatch/ocr/page"
	"github.com/refbatch/refbatch/report/outcome"
)

// signatureWindow is how far into the file "%PDF-" may start; Acrobat and
// MuPDF accept junk before the header within the first kilobyte.
const signatureWindow = 1024

// The defaults of Limits' own caps; the page policy's are page's.
const (
	DefaultMaxBytes = 64 << 20
	DefaultMaxPages = 200
)

// Limits are the caps admission enforces. A zero field means its default,
// so Limits{MaxPages: 10} changes only the page cap.
type Limits struct {
	MaxBytes int64 // largest accepted file; default DefaultMaxBytes
	MaxPages int   // most pages in one document; default DefaultMaxPages
	// Page is the run's page policy: its resolution and pixel cap size
	// every page (check 8), and its pixel cap bounds every image (check
	// 9). Zero fields are the page defaults.
	Page page.Policy
}

// DefaultLimits returns the default caps.
func DefaultLimits() Limits { return Limits{}.WithDefaults() }

// WithDefaults returns l with its zero fields, and its page policy's, set
// to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxPages == 0 {
		l.MaxPages = DefaultMaxPages
	}
	l.Page = l.Page.WithDefaults()
	return l
}

// Validate refuses limits no file could meet, with a *page.SettingError.
func (l Limits) Validate() error {
	switch {
	case l.MaxBytes < 1:
		return &page.SettingError{Setting: "max_bytes", Value: l.MaxBytes, Want: "1 or more"}
	case l.MaxPages < 1:
		return &page.SettingError{Setting: "max_pages", Value: l.MaxPages, Want: "1 or more"}
	}
	return l.Page.Validate()
}

// Doc is what admission learned about an admitted file. The bytes are not
// kept: OCR re-reads the file (ReadSource) and re-hashes it.
type Doc struct {
	Path    string // resolved absolute path, symlinks evaluated; open this one
	Size    int64  // bytes read
	SHA256  string // lowercase hex
	Pages   int
	PageDPI []int // the DPI each page renders at: the policy's DPI, or lower for a page over the pixel cap (page.Policy.FitDPI)
}

// Rejection is a row-level refusal of a file. Reason is one of outcome's
// admission reasons (the package doc names them by check); Detail says why
// for a person and never contains document text, the file's path or an OS
// error's text.
type Rejection struct {
	Reason outcome.Reason
	Detail string
}

// Error returns "<reason>: <detail>".
func (r *Rejection) Error() string {
	return string(r.Reason) + ": " + r.Detail
}

func reject(reason outcome.Reason, format string, args ...any) *Rejection {
	return &Rejection{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// Inspector runs the checks that parse the PDF (5 to 9 above) on a file's
// bytes and returns the DPI each page renders at. A refused file is a
// *Rejection; any other error means the inspection could not run. [Pool]
// is refbatch's Inspector.
type Inspector interface {
	Inspect(ctx context.Context, data []byte, lim Limits) (pageDPI []int, err error)
}

// Check admits or rejects the file at path (relative to root, or absolute
// inside root). wantSHA, when not empty, is the expected SHA-256 in hex
// (case-insensitive). A refused file returns a *Rejection; any other error
// is admission's own failure (see the package doc).
func Check(ctx context.Context, root, path, wantSHA string, lim Limits, insp Inspector) (*Doc, error) {
	lim = lim.WithDefaults()
	if err := lim.Validate(); err != nil {
		return nil, fmt.Errorf("admission limits: %w", err)
	}

	// 1–3. Path, size, bytes.
	data, resolved, err := readSource(root, path, lim.MaxBytes)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	doc := &Doc{Path: resolved, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	if want := strings.TrimSpace(wantSHA); want != "" && !strings.EqualFold(want, doc.SHA256) {
		if !isSHA256Hex(want) {
			return doc, reject(outcome.HashMismatch, "expected sha256 is not 64 hex digits")
		}
		return doc, reject(outcome.HashMismatch, "sha256 is %s, manifest expects %s", doc.SHA256, strings.ToLower(want))
	}

	// 4. Signature.
	if !bytes.Contains(data[:min(len(data), signatureWindow)], []byte("%PDF-")) {
		return doc, reject(outcome.NotPDF, "no %%PDF- header in the first %d bytes", signatureWindow)
	}

	// 5–9. Encryption, validation, pages, page sizes, images.
	pages, err := insp.Inspect(ctx, data, lim)
	if err != nil {
		return doc, err
	}
	doc.Pages = len(pages)
	doc.PageDPI = pages
	return doc, nil
}

func checkSize(size, maxBytes int64) error {
	switch {
	case size == 0:
		return reject(outcome.EmptyFile, "the file has 0 bytes")
	case size > maxBytes:
		return reject(outcome.TooLarge, "over the %d-byte cap", maxBytes)
	}
	return nil
}

func notRegular(fi fs.FileInfo) *Rejection {
	if fi.IsDir() {
		return reject(outcome.NotPDF, "the path is a directory")
	}
	return reject(outcome.NotPDF, "the path is not a regular file (%s)", fi.Mode().Type())
}

func isSHA256Hex(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

// IsRejection reports whether err is (or wraps) a *Rejection and returns it.
func IsRejection(err error) (*Rejection, bool) {
	var r *Rejection
	ok := errors.As(err, &r)
	return r, ok
}
