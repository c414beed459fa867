package admit

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hostile fixtures in testdata/admit/hostile are small PDFs built by
// hand to break admission in the process that runs it: each one crashes
// the process (a Go stack overflow or an allocation the runtime cannot
// satisfy, neither of which recover catches), or keeps it busy for
// minutes to forever, or grows it by gigabytes. They are the evidence for
// moving PDF parsing into a supervised child process, and its regression
// fixtures. Their README.md says, per file, the mechanism and what the
// in-process admit.Check does with it.
//
// No test here admits them: that would crash or stall the test binary.
// TestHostileFixtures only checks the committed files against their
// builders; regenerate them with
//
//	go test ./batch/admit -run TestHostileFixtures -update
const hostileDir = "../../testdata/admit/hostile"

// hostileFixtures maps each hostile fixture to its builder. Every file
// starts with a %PDF-1.x header, so it passes the signature check and
// reaches the pdfcpu stage (inspect).
var hostileFixtures = map[string]func() []byte{
	// Unbounded recursion on nesting: a Go stack overflow is fatal.
	"nested-array.pdf": func() []byte { return withObject(strings.Repeat("[", 2_500_000)) },
	// The same nesting deflated in an object stream: 3 KB on disk.
	"nested-array-objstm.pdf": func() []byte { return objStmPDF(strings.Repeat("[", 2_500_000)) },
	// Unbounded recursion on a reference cycle, in pdfcpu's validation.
	"page-tree-cycle.pdf": func() []byte {
		return buildPDF([]string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>",
		}, "")
	},
	"name-tree-cycle.pdf":   func() []byte { return withCatalog("/Names << /Dests 5 0 R >>", "<< /Kids [5 0 R] >>") },
	"number-tree-cycle.pdf": func() []byte { return withCatalog("/PageLabels 5 0 R", "<< /Kids [5 0 R] >>") },
	"struct-tree-cycle.pdf": func() []byte {
		return withCatalog("/StructTreeRoot 5 0 R /MarkInfo << /Marked true >>",
			"<< /Type /StructTreeRoot /K 6 0 R >>",
			"<< /Type /StructElem /S /P /P 5 0 R /K 6 0 R >>")
	},
	"action-cycle.pdf":     func() []byte { return withCatalog("/OpenAction 5 0 R", "<< /S /JavaScript /JS (x) /Next 5 0 R >>") },
	"colorspace-cycle.pdf": func() []byte { return withResources("<< /ColorSpace << /C 5 0 R >> >>", "[/Indexed 5 0 R 1 <0000>]") },
	"function-cycle.pdf": func() []byte {
		return withResources("<< /Shading << /S 5 0 R >> >>",
			"<< /ShadingType 2 /ColorSpace /DeviceGray /Coords [0 0 1 1] /Function 6 0 R >>",
			"<< /FunctionType 3 /Domain [0 1] /Functions [6 0 R] /Bounds [] /Encode [0 1] >>")
	},
	"pattern-cycle.pdf": func() []byte {
		return withResources("<< /Pattern << /P 5 0 R >> >>",
			stream("/PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 1 1] /XStep 1 /YStep 1 /Resources << /Pattern << /P 5 0 R >> >>", nil))
	},
	// Exponential time: pdfcpu parses a dictionary strictly, then again
	// relaxed when that fails, at every level.
	"nested-dicts.pdf": func() []byte { return withObject(strings.Repeat("<</A", 40)) },
	// Allocations sized by a number in the file.
	"huge-xref-table.pdf":    func() []byte { return hugeXrefTablePDF(4_000_000_000) },
	"huge-xref-stream.pdf":   func() []byte { return xrefStreamPDF("/Size 4000000000", nil, -1) },
	"huge-stream-length.pdf": func() []byte { return xrefStreamPDF("/Size 6", nil, 1_000_000_000_000) },
	"huge-predictor.pdf": func() []byte {
		return xrefStreamPDF("/Size 6 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 1000000000000 >>", deflate, -1)
	},
	// Super-linear scans of repeated keywords.
	"keyword-flood.pdf": func() []byte { return withTail(bytes.Repeat([]byte("trailer"), 1<<20/len("trailer"))) },
	"stream-flood.pdf": func() []byte {
		return withTail(bytes.Repeat([]byte("1 0 obj<<>>stream\n"), 2<<20/len("1 0 obj<<>>stream\n")))
	},
	"obj-flood.pdf":     func() []byte { return withoutXref(bytes.Repeat([]byte("1 0 obj\n"), 2<<20/len("1 0 obj\n"))) },
	"comment-flood.pdf": func() []byte { return withObject(strings.Repeat("%\n", 2<<20) + "()") },
}

// TestHostileFixtures rewrites testdata/admit/hostile with -update and
// otherwise checks that the committed files are what the builders produce
// and that each would get past the cheap checks to the pdfcpu stage. It
// never admits them.
func TestHostileFixtures(t *testing.T) {
	lim := DefaultLimits()
	for name, build := range hostileFixtures {
		want := build()
		if !bytes.HasPrefix(want, []byte("%PDF-1.")) || int64(len(want)) > lim.MaxBytes {
			t.Errorf("%s: %d bytes starting %q would not reach pdfcpu", name, len(want), want[:min(len(want), 8)])
		}
		path := filepath.Join(hostileDir, name)
		if *update {
			if err := os.MkdirAll(hostileDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to write the hostile fixtures)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its builder; run with -update", name)
		}
	}
	ents, err := os.ReadDir(hostileDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".pdf" && hostileFixtures[e.Name()] == nil {
			t.Errorf("%s has no builder: add one or remove the file", e.Name())
		}
	}
}

// pageObjects are objects 1 to 4 of a one-page document: catalog, page
// tree, page, empty content stream.
func pageObjects(catalogExtra string) []string {
	return []string{
		"<< /Type /Catalog /Pages 2 0 R " + catalogExtra + " >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 4 0 R >>",
		stream("", nil),
	}
}

// withObject is the one-page document plus object 5, which nothing refers
// to: pdfcpu parses every object the xref table lists, used or not.
func withObject(body string) []byte {
	return buildPDF(append(pageObjects(""), body), "")
}

// withCatalog is the one-page document whose catalog has extra entries,
// with objs as objects 5 and on.
func withCatalog(catalogExtra string, objs ...string) []byte {
	return buildPDF(append(pageObjects(catalogExtra), objs...), "")
}

// withResources is the one-page document whose page has the resources
// res, with objs as objects 5 and on.
func withResources(res string, objs ...string) []byte {
	o := pageObjects("")
	o[2] = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources " + res + " /Contents 4 0 R >>"
	return buildPDF(append(o, objs...), "")
}

// withTail is the one-page document with tail appended after its %%EOF,
// as an incremental update or junk would be.
func withTail(tail []byte) []byte {
	return append(buildPDF(pageObjects(""), ""), tail...)
}

// withoutXref is the one-page document with no xref table, trailer or
// startxref, so readers rebuild the table by scanning the objects, and
// tail after its last object.
func withoutXref(tail []byte) []byte {
	b := buildPDF(pageObjects(""), "")
	b = b[:bytes.LastIndex(b, []byte("\nxref\n"))+1]
	return append(b, tail...)
}

// hugeXrefTablePDF is the one-page document whose one xref subsection
// starts at object 1, leaving out the free-list head (object 0), and
// whose trailer declares size objects.
func hugeXrefTablePDF(size int) []byte {
	b := buildPDF(pageObjects(""), "")
	b = bytes.Replace(b, []byte("xref\n0 5\n0000000000 65535 f \n"), []byte("xref\n1 4\n"), 1)
	return bytes.Replace(b, []byte("/Size 5 "), fmt.Appendf(nil, "/Size %d ", size), 1)
}

// xrefStreamPDF is the one-page document (PDF 1.5) whose cross-reference
// table is a stream, object 5, with dictExtra in its dictionary (which
// must give /Size). The entries are encoded by encode when not nil, and
// /Length is length when not negative (the true length otherwise).
func xrefStreamPDF(dictExtra string, encode func([]byte) []byte, length int64) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	objs := pageObjects("")
	offsets := make([]int, len(objs)+1)
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	offsets[len(objs)] = b.Len()
	// /W [1 4 2]: type, offset, generation; object 0 is the free-list head.
	entries := []byte{0, 0, 0, 0, 0, 0xff, 0xff}
	for _, off := range offsets {
		entries = append(entries, 1)
		entries = binary.BigEndian.AppendUint32(entries, uint32(off))
		entries = append(entries, 0, 0)
	}
	if encode != nil {
		entries = encode(entries)
	}
	if length < 0 {
		length = int64(len(entries))
	}
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Root 1 0 R /W [1 4 2] %s /Length %d >>\nstream\n", len(objs)+1, dictExtra, length)
	b.Write(entries)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", offsets[len(objs)])
	return b.Bytes()
}

// objStmPDF is the one-page document (PDF 1.5) whose page's /Resources
// is object 6, body, stored deflated in object stream 5 and listed by the
// xref stream, object 7: pdfcpu parses a compressed object when it is
// first used, here by validation.
func objStmPDF(body string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n%\xe2\xe3\xcf\xd3\n")
	objs := pageObjects("")
	objs[2] = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 6 0 R /Contents 4 0 R >>"
	prolog := "6 0 "
	objs = append(objs, stream(fmt.Sprintf("/Type /ObjStm /N 1 /First %d /Filter /FlateDecode", len(prolog)), deflate([]byte(prolog+body))))
	var entries []byte
	entry := func(typ byte, field2 uint32, field3 uint16) {
		entries = append(entries, typ)
		entries = binary.BigEndian.AppendUint32(entries, field2)
		entries = binary.BigEndian.AppendUint16(entries, field3)
	}
	entry(0, 0, 0xffff)
	for i, o := range objs {
		entry(1, uint32(b.Len()), 0)
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	entry(2, 5, 0) // object 6: the first object in stream 5
	xref := b.Len()
	entry(1, uint32(xref), 0)
	fmt.Fprintf(&b, "7 0 obj\n<< /Type /XRef /Root 1 0 R /W [1 4 2] /Size 8 /Length %d >>\nstream\n", len(entries))
	b.Write(entries)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}
