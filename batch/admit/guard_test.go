package admit

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/refbatch/refbatch/report/outcome"
)

func TestSpend(t *testing.T) {
	zeros := make([]byte, 10_000)
	flate := func(names ...string) []types.PDFFilter {
		var fs []types.PDFFilter
		for _, n := range names {
			fs = append(fs, types.PDFFilter{Name: n})
		}
		return fs
	}
	ccitt := []types.PDFFilter{{Name: "CCITTFaxDecode", DecodeParms: types.Dict{"Columns": types.Integer(8000), "Rows": types.Integer(1000)}}}
	tests := []struct {
		name    string
		raw     []byte
		filters []types.PDFFilter
		budget  int64
		over    bool
		left    int64
	}{
		{name: "no filter", raw: zeros, budget: 20_000, left: 10_000},
		{name: "flate within budget", raw: deflate(zeros), filters: flate("FlateDecode"), budget: 10_000, left: 0},
		{name: "flate over budget", raw: deflate(zeros), filters: flate("FlateDecode"), budget: 9_999, over: true},
		{name: "flate twice over budget", raw: deflate(deflate(zeros)), filters: flate("FlateDecode", "FlateDecode"), budget: 9_999, over: true},
		{name: "abbreviated name", raw: deflate(zeros), filters: pipeline(types.Dict{"Filter": types.Name("Fl")}), budget: 9_999, over: true},
		{name: "run length", raw: bytes.Repeat([]byte{129, 0}, 100), filters: flate("RunLengthDecode"), budget: 12_799, over: true},
		{name: "run length within budget", raw: bytes.Repeat([]byte{129, 0}, 100), filters: flate("RunLengthDecode"), budget: 12_800, left: 0},
		{name: "flate then run length", raw: deflate(bytes.Repeat([]byte{129, 0}, 100)), filters: flate("FlateDecode", "RunLengthDecode"), budget: 12_799, over: true},
		{name: "ascii hex", raw: []byte("00ff>"), filters: flate("ASCIIHexDecode"), budget: 10, left: 8},
		{name: "ascii85", raw: []byte("z~>"), filters: flate("ASCII85Decode"), budget: 10, left: 6},
		{name: "ccitt from parameters", raw: []byte{0xff}, filters: ccitt, budget: 999_999, over: true},
		{name: "ccitt within budget", raw: []byte{0xff}, filters: ccitt, budget: 1_000_000, left: 0},
		{name: "not flate data", raw: zeros, filters: flate("FlateDecode"), budget: 10, left: 10},
		{name: "dct is left encoded", raw: zeros, filters: flate("DCTDecode"), budget: 10, left: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inf := &inflation{left: tt.budget}
			r := inf.spend(tt.raw, tt.filters, types.Dict{}, "stream")
			if (r != nil) != tt.over {
				t.Fatalf("spend() = %v; want over budget %t", r, tt.over)
			}
			if !tt.over && inf.left != tt.left {
				t.Errorf("budget left = %d; want %d", inf.left, tt.left)
			}
		})
	}
}

func TestScanStreams(t *testing.T) {
	data := []byte("%PDF-1.5\n" +
		"1 0 obj\n<< /Type /Catalog >>\nendobj\n" +
		"2 0 obj\n<< /Length 3 /X (3 0 obj << >> stream) >>\nstream\nabc\nendstream\nendobj\n" +
		"10 0 obj<</N 1/First 2>>stream\r\nxy\nendstream endobj\n")
	got := scanStreams(data)
	if len(got) != 2 {
		t.Fatalf("scanStreams() found %d streams; want 2", len(got))
	}
	if got[0].objNr != 2 || string(got[0].raw) != "abc" {
		t.Errorf("first stream = object %d %q; want 2 \"abc\"", got[0].objNr, got[0].raw)
	}
	if got[1].objNr != 10 || string(got[1].raw) != "xy\n" || string(data[got[1].offset:got[1].offset+8]) != "10 0 obj" {
		t.Errorf("second stream = object %d %q at %d; want 10 \"xy\\n\" at its header", got[1].objNr, got[1].raw, got[1].offset)
	}
}

// TestCheckRawStreams: the streams decoded within the budget are those
// pdfcpu decodes in full (/First with /N, /Type /XRef, one a startxref
// names); a stream with only one of /First and /N is left alone, however
// far it inflates, as pdfcpu leaves it.
func TestCheckRawStreams(t *testing.T) {
	t.Parallel()
	bomb := deflate(make([]byte, 10_000))
	for _, tc := range []struct {
		name, dict, tail string
		refused          bool
	}{
		{"an object stream", "/N 1 /First 2", "", true},
		{"an xref stream", "/Type /XRef", "", true},
		{"named by startxref", "", "startxref\n9\n%%EOF\n", true},
		{"only /N", "/N 1", "", false},
		{"only /First", "/First 2", "", false},
		{"a plain stream", "", "", false},
	} {
		data := []byte("%PDF-1.5\n" + // the object's header at offset 9
			"4 0 obj\n<< /Length " + strconv.Itoa(len(bomb)) + " /Filter /FlateDecode " + tc.dict + " >>\nstream\n" +
			string(bomb) + "\nendstream\nendobj\n" + tc.tail)
		inf := &inflation{left: 100}
		if r := inf.checkRawStreams(data); (r != nil) != tc.refused {
			t.Errorf("%s: %v, want refused: %v", tc.name, r, tc.refused)
		}
	}
}

// TestStreamSizes: the decoded sizes the budget counts for CCITT, ASCII
// hex and ASCII85 data, as pdfcpu decodes them.
func TestStreamSizes(t *testing.T) {
	t.Parallel()
	height := types.Dict{"Height": types.Integer(30)}
	for _, tc := range []struct {
		name  string
		parms map[string]int
		d     types.Dict
		want  int64
	}{
		{"rows and columns", map[string]int{"Rows": 10, "Columns": 16}, types.Dict{}, 20},
		{"columns rounded up to whole bytes", map[string]int{"Rows": 10, "Columns": 9}, types.Dict{}, 20},
		{"rows from the height", map[string]int{"Columns": 8}, height, 30},
		{"rows given and a height", map[string]int{"Rows": 10, "Columns": 8}, height, 10},
		{"pdfcpu's 1728 columns", map[string]int{"Rows": 10}, types.Dict{}, 2160},
		{"negative rows", map[string]int{"Rows": -10, "Columns": 8}, types.Dict{}, 0},
		{"negative columns", map[string]int{"Rows": 10, "Columns": -8}, types.Dict{}, 0},
		{"no rows", map[string]int{"Columns": 8}, types.Dict{}, 0},
	} {
		if got := ccittSize(tc.parms, tc.d); got != tc.want {
			t.Errorf("ccitt, %s: %d, want %d", tc.name, got, tc.want)
		}
	}
	for in, want := range map[string]string{"41 42>": "AB", "414>": "A@", "4 1\n4 2 43": "ABC", ">41": ""} {
		if got := string(asciiHex([]byte(in))); got != want {
			t.Errorf("asciiHex(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		in    string
		limit int64
		size  int64
		stop  bool
	}{
		{"~>", 10, 0, false},
		{"", 10, 0, false},
		{"87cURD]i,\"Ebo80~>", 100, 12, false}, // "Hello world!"
		{"87cURD]i,\"Ebo80~>", 5, 6, false},    // counted past the limit, no further
		// What decoded before the corrupt bytes, some of it (-1): the
		// decoder reads its input a buffer at a time.
		{strings.Repeat("z", 2000) + "{{{{{~>", 100_000, -1, false},
		{"{{{{{~>", 100, 0, true},
	} {
		size, _, stop := ascii85Decode([]byte(tc.in), tc.limit)
		if (size != tc.size && (tc.size >= 0 || size <= 0)) || stop != tc.stop {
			t.Errorf("ascii85Decode(%q, %d) = %d, %v; want %d, %v", tc.in, tc.limit, size, stop, tc.size, tc.stop)
		}
	}
}

// TestCheckExpectedHash: a source whose bytes are not the manifest's
// sha256 is a hash_mismatch, and the detail says whether the manifest's
// value is no hash at all or another file's; the same hash in capitals
// is the same hash. The check is before any inspection (none here).
func TestCheckExpectedHash(t *testing.T) {
	t.Parallel()
	root, _ := testRoot(t)
	good := goodPDF()
	sum := sha256Hex(good)
	for _, tc := range []struct{ name, want, detail string }{
		{"not a hash", "xyz", "not 64 hex digits"},
		{"63 hex digits", sum[1:], "not 64 hex digits"},
		{"four hex digits", "abcd", "not 64 hex digits"},
		{"64 hex digits and more", sum + "zz", "not 64 hex digits"},
		{"another file's hash", strings.Repeat("ab", 32), "manifest expects " + strings.Repeat("ab", 32)},
		{"another file's hash in capitals", strings.Repeat("AB", 32), "manifest expects " + strings.Repeat("ab", 32)},
	} {
		_, err := Check(context.Background(), root, "good.pdf", tc.want, Limits{}, nil)
		if r, ok := IsRejection(err); !ok || r.Reason != outcome.HashMismatch || !strings.Contains(r.Detail, tc.detail) {
			t.Errorf("%s: %v, want a hash_mismatch saying %q", tc.name, err, tc.detail)
		}
	}
}
