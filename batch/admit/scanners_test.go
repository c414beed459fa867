package admit

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// The byte scanners' edges, each pinned by what the scanner is for: which
// files they find encrypted, which streams and sizes they see, and what a
// rejection tells the person who reads it. Each case is one a careless
// change to a comparison would get wrong (issue 49's mutants).

// TestPageTooLargeDetail: a page over the cap at the lowest DPI is named
// with its size in points and its pixels at that DPI, in Mpx.
func TestPageTooLargeDetail(t *testing.T) {
	t.Parallel()
	// 48 inches square at 150 dpi is 7200×7200 px, 51.84 Mpx.
	_, err := inspect(onePage("[0 0 3456 3456]", ""), DefaultLimits())
	r, ok := IsRejection(err)
	const want = "page 1 is 3456×3456 pt, 52 Mpx even at 150 dpi, over the 50 Mpx cap"
	if !ok || r.Reason != outcome.PageTooLarge || r.Detail != want {
		t.Errorf("got %v; want page_too_large: %s", err, want)
	}
}

// TestXrefStreamEncryptOffsets: the xref stream startxref names is found
// whatever digits its offset has, and only when it is that far in.
func TestXrefStreamEncryptOffsets(t *testing.T) {
	t.Parallel()
	xref := "7 0 obj\n<< /Type /XRef /Encrypt << /Filter /Standard >> /Size 8 >>\nstream\n...\nendstream\nendobj\n"
	at := func(off int, startxref string) []byte {
		pad := "%PDF-1.5\n%" + strings.Repeat("x", off-len("%PDF-1.5\n%")-1) + "\n"
		return []byte(pad + xref + "startxref\n" + startxref + "\n%%EOF")
	}
	for _, c := range []struct {
		name      string
		data      []byte
		encrypted bool
	}{
		{"offset 100", at(100, "100"), true},
		{"offset 109", at(109, "109"), true},
		{"offset past the end", at(100, "100000"), false},
		{"no offset", at(100, ""), false},
		{"no offset, an xref stream at 0", []byte(xref + "startxref\n\n%%EOF"), false},
	} {
		if got := trailerHasEncrypt(c.data); got != c.encrypted {
			t.Errorf("%s: trailerHasEncrypt = %t; want %t", c.name, got, c.encrypted)
		}
	}
}

// TestIsIndirectRef: "/Encrypt" is followed by a reference only when two
// numbers and an R follow, whatever the space between them, and a file
// that ends part way through one is not one.
func TestIsIndirectRef(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"5 0 R":      true,
		"12  0\nR>>": true,
		"5 0 X":      false,
		"5 0 ":       false,
		"5 0":        false,
		"5":          false,
		"":           false,
		"R":          false,
		"5 R":        false,
		"a 0 R":      false,
		"5 0R":       false,
	} {
		if got := isIndirectRef([]byte(in)); got != want {
			t.Errorf("isIndirectRef(%q) = %t; want %t", in, got, want)
		}
		data := []byte("trailer /Encrypt " + in)
		if got := mentionsEncrypt(data); got != want {
			t.Errorf("mentionsEncrypt(%q) = %t; want %t", data, got, want)
		}
	}
}

// TestScanStreamEdges: the streams the byte scan finds, as "objNr:raw",
// where a file puts its keywords at the edges.
func TestScanStreamEdges(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, data string
		want       []string
	}{
		{"endstream first in the file", "endstream\n1 0 obj\n<< >>\nstream\nabc\nendstream\nendobj\n", []string{"1:abc\n"}},
		{"spaces after the stream keyword", "1 0 obj\n<< >>\nstream  \r\nabc\nendstream\nendobj\n", []string{"1:abc\n"}},
		{"text after the stream keyword", "1 0 obj\n<< >>\nstream abc\nendstream\nendobj\n", nil},
		{"the file ends at the stream keyword", "1 0 obj\n<< >>\nstream", []string{"1:"}},
		{"the file ends after spaces", "1 0 obj\n<< >>\nstream  ", []string{"1:"}},
		{"no endstream", "1 0 obj\n<< >>\nstream\nabc", []string{"1:abc"}},
		{"a /Length of 0", "1 0 obj\n<< /Length 0 >>\nstream\nabc\nendstream\nendobj\n", []string{"1:"}},
		{"a /Length past the end", "1 0 obj\n<< /Length 99 >>\nstream\nabc\nendstream\nendobj\n", []string{"1:abc\n"}},
		{"a negative /Length", "1 0 obj\n<< /Length -1 >>\nstream\nabc\nendstream\nendobj\n", []string{"1:abc\n"}},
	} {
		var got []string
		for _, s := range scanStreams([]byte(c.data)) {
			got = append(got, fmt.Sprintf("%d:%s", s.objNr, s.raw))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: scanStreams = %q; want %q", c.name, got, c.want)
		}
	}
	// A file that ends inside a dictionary holds no stream, whatever
	// lies in memory after its bytes.
	mem := []byte("1 0 obj\n<< /A 1 >>\nstream\nabc\nendstream\n")
	if got := scanStreams(mem[:len("1 0 obj\n<< /A 1")]); len(got) != 0 {
		t.Errorf("a file cut in a dictionary: scanStreams found %d streams; want none", len(got))
	}
}

// TestInlineImageBehindDeepValues: an inline image whose dictionary
// holds values nested deeper than the lexer keeps is still sized.
func TestInlineImageBehindDeepValues(t *testing.T) {
	t.Parallel()
	for _, nest := range []int{5, 6, 9} {
		content := "BI /A " + strings.Repeat("[", nest) + "1" + strings.Repeat("]", nest) +
			" /DP << /B << /C << /D << /E << /F [1] >> >> >> >> >> /W 90000 /H 90000 /CS /G ID x EI"
		_, err := inspect(drawingPage("<< >>", content), DefaultLimits())
		if r, ok := IsRejection(err); !ok || r.Reason != outcome.PageTooLarge {
			t.Errorf("arrays nested %d deep: got %v; want page_too_large", nest, err)
		}
	}
}

// TestStartxrefOffsets: every startxref's offset is read, of any digits,
// for pdfcpu falls back to the earlier ones.
func TestStartxrefOffsets(t *testing.T) {
	t.Parallel()
	data := "startxref\n105\n%%EOF\nstartxref 0\nstartxref\nabc\nstartxref\n1234567890123456789\nstartxref\r\n90"
	want := []int{105, 0, 123456789012345678, 90}
	if got := startxrefOffsets([]byte(data)); !slices.Equal(got, want) {
		t.Errorf("startxrefOffsets = %v; want %v", got, want)
	}
}

// TestInlineImageSizeOfManyDigits: an inline image's width and height
// written with more digits than a token keeps (leading zeros, which the
// renderer reads through) are not read as a smaller number: the 90000 by
// 90000 image is refused as the page too large, not let through as 9 by 9.
func TestInlineImageSizeOfManyDigits(t *testing.T) {
	t.Parallel()
	for _, zeros := range []int{maxTokenText - 2, maxTokenText - 1, maxTokenText, 200} {
		n := strings.Repeat("0", zeros) + "90000"
		content := "BI /W " + n + " /H " + n + " /CS /G ID x EI"
		_, err := inspect(drawingPage("<< >>", content), DefaultLimits())
		if r, ok := IsRejection(err); !ok || r.Reason != outcome.PageTooLarge {
			t.Errorf("90000 after %d zeros: got %v; want page_too_large", zeros, err)
		}
	}
}

// TestInlineImageAfterStrayBracket: a lone '>' (no hex string's end, no
// dictionary's) right before BI does not swallow the operator's first
// letter: the 90000 by 90000 inline image after it is still found.
func TestInlineImageAfterStrayBracket(t *testing.T) {
	t.Parallel()
	_, err := inspect(drawingPage("<< >>", "q >BI /W 90000 /H 90000 /CS /G ID x EI Q"), DefaultLimits())
	if r, ok := IsRejection(err); !ok || r.Reason != outcome.PageTooLarge {
		t.Errorf("got %v; want page_too_large", err)
	}
}

// TestInlineImageBehindLongArray: an array of more items than are kept
// (maxInlineDict), or a dictionary of more entries, before /W and /H
// does not hide the inline image: the renderer reads them all, and so
// does admission.
func TestInlineImageBehindLongArray(t *testing.T) {
	t.Parallel()
	for _, nest := range []int{1, 4, 5} {
		arr := strings.Repeat("[", nest) + strings.Repeat("1 ", 300) + strings.Repeat("]", nest)
		content := "BI /A " + arr + " /W 90000 /H 90000 /CS /G ID x EI"
		_, err := inspect(drawingPage("<< >>", content), DefaultLimits())
		if !isRejection(err, outcome.PageTooLarge) {
			t.Errorf("300 items nested %d deep: got %v; want page_too_large", nest, err)
		}
	}
	content := "BI " + strings.Repeat("/A 1 ", 300) + "/W 90000 /H 90000 /CS /G ID x EI"
	if _, err := inspect(drawingPage("<< >>", content), DefaultLimits()); !isRejection(err, outcome.PageTooLarge) {
		t.Errorf("300 entries before /W and /H: got %v; want page_too_large", err)
	}
}

// isRejection says whether err is a rejection for reason.
func isRejection(err error, reason outcome.Reason) bool {
	r, ok := IsRejection(err)
	return ok && r.Reason == reason
}
