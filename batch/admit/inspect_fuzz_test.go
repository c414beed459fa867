package admit

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// Limits of one fuzz input, past which inspect is taken to be hostile: a
// hang or a huge allocation does not make the fuzzer fail by itself.
const (
	fuzzDeadline = 10 * time.Second
	fuzzMaxAlloc = 1 << 30 // bytes allocated while inspecting one input
	fuzzMaxStack = 64 << 20
)

// FuzzInspect feeds mutated PDFs to the byte-level stage of Check
// (inspect, which will run in the admission child) and fails on what the
// child would be killed for, so that each finding is a hostile input:
//
//   - a panic that escapes inspect's recover, or a plain error where a
//     rejection is due;
//   - a Go stack overflow, which is fatal: the stack is capped at 64 MiB
//     here instead of the runtime's 1 GB, so that an overflow dies in
//     milliseconds rather than after a gigabyte;
//   - a hang: inspect taking over 10 s panics from a timer, which ends the
//     worker process (the fuzzer has no deadline of its own);
//   - more than 1 GiB allocated for one input (run it under ulimit -v too:
//     a single allocation the runtime refuses is fatal).
//
// It is seeded from the fixtures in testdata/admit, from harmless
// miniatures of the hostile fixtures (hostileSeeds) and, when present, from
// the real files in ../shared/corpus/real. The hostile fixtures themselves
// are not seeds: plain go test runs every seed, and they would crash it.
// An input that is byte for byte a hostile fixture is skipped, should one
// be dropped into testdata/fuzz/FuzzInspect.
//
//	go test -run '^$' -fuzz FuzzInspect -fuzztime 25m -parallel 1 ./batch/admit
func FuzzInspect(f *testing.F) {
	defer debug.SetMaxStack(debug.SetMaxStack(fuzzMaxStack))
	for _, build := range fixtures {
		f.Add(build())
	}
	for _, build := range hostileSeeds {
		f.Add(build())
	}
	if dir := sharedCorpusDir(); dir != "" {
		names, err := filepath.Glob(filepath.Join(dir, "*.pdf"))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	known := hostileHashes()
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		if name, ok := known[sha256.Sum256(data)]; ok {
			t.Skipf("%s is a known hostile fixture", name)
		}
		watchdog := time.AfterFunc(fuzzDeadline, func() {
			panic(fmt.Sprintf("inspect hung: over %v on a %d-byte input", fuzzDeadline, len(data)))
		})
		defer watchdog.Stop()
		metrics.Read(allocs)
		before := allocs[0].Value.Uint64()
		_, err := inspect(data, DefaultLimits())
		metrics.Read(allocs)
		if n := allocs[0].Value.Uint64() - before; n > fuzzMaxAlloc {
			t.Fatalf("inspect allocated %d MiB for a %d-byte input", n>>20, len(data))
		}
		if err != nil {
			if _, ok := IsRejection(err); !ok {
				t.Fatalf("inspect() error %v is not a rejection", err)
			}
		}
	})
}

// sharedCorpusDir is ../shared/corpus/real next to the module root, as
// corpusDir finds it, or "" when it is absent: the fuzz target runs
// without it.
func sharedCorpusDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	corpus := filepath.Join(dir, "..", "shared", "corpus", "real")
	if _, err := os.Stat(filepath.Join(corpus, "README.md")); err != nil {
		return ""
	}
	return corpus
}

// hostileHashes holds the SHA-256 of every hostile fixture, so that the
// fuzz target can skip them when they come back as seeds.
func hostileHashes() map[[32]byte]string {
	m := map[[32]byte]string{}
	for name, build := range hostileFixtures {
		m[sha256.Sum256(build())] = name
	}
	return m
}

// hostileSeeds are the hostile fixtures' structures at a harmless scale:
// shallow nesting, acyclic trees and chains, sizes that match the file,
// short floods. Each is admitted or rejected in milliseconds; the fuzzer
// mutates them towards (and past) the hostile ones.
var hostileSeeds = map[string]func() []byte{
	"nested-array":        func() []byte { return withObject(strings.Repeat("[", 1000)) },
	"nested-array-objstm": func() []byte { return objStmPDF("<< /ProcSet [[/PDF]] >>") },
	"nested-dicts":        func() []byte { return withObject(strings.Repeat("<</A", 8)) },
	"page-tree": func() []byte {
		return buildPDF([]string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Pages /Kids [4 0 R] /Count 1 /Parent 2 0 R >>",
			"<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 5 0 R >>",
			stream("", nil),
		}, "")
	},
	"name-tree": func() []byte {
		return withCatalog("/Names << /Dests 5 0 R >>", "<< /Kids [6 0 R] >>", "<< /Names [(a) [3 0 R /Fit]] /Limits [(a) (a)] >>")
	},
	"number-tree": func() []byte {
		return withCatalog("/PageLabels 5 0 R", "<< /Kids [6 0 R] >>", "<< /Nums [0 << /S /D >>] /Limits [0 0] >>")
	},
	"struct-tree": func() []byte {
		return withCatalog("/StructTreeRoot 5 0 R /MarkInfo << /Marked true >>",
			"<< /Type /StructTreeRoot /K 6 0 R >>",
			"<< /Type /StructElem /S /P /P 5 0 R >>")
	},
	"action-chain": func() []byte {
		return withCatalog("/OpenAction 5 0 R", "<< /S /JavaScript /JS (x) /Next 6 0 R >>", "<< /S /JavaScript /JS (y) >>")
	},
	"colorspace": func() []byte {
		return withResources("<< /ColorSpace << /C 5 0 R >> >>", "[/Indexed 6 0 R 1 <0000>]", "[/Indexed /DeviceGray 1 <00>]")
	},
	"function": func() []byte {
		return withResources("<< /Shading << /S 5 0 R >> >>",
			"<< /ShadingType 2 /ColorSpace /DeviceGray /Coords [0 0 1 1] /Function 6 0 R >>",
			"<< /FunctionType 3 /Domain [0 1] /Functions [7 0 R] /Bounds [] /Encode [0 1] >>",
			"<< /FunctionType 2 /Domain [0 1] /C0 [0] /C1 [1] /N 1 >>")
	},
	"pattern": func() []byte {
		return withResources("<< /Pattern << /P 5 0 R >> >>",
			stream("/PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 1 1] /XStep 1 /YStep 1 /Resources << /Pattern << /Q 6 0 R >> >>", nil),
			stream("/PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 1 1] /XStep 1 /YStep 1 /Resources << >>", nil))
	},
	"xref-table":  func() []byte { return hugeXrefTablePDF(100) },
	"xref-stream": func() []byte { return xrefStreamPDF("/Size 6", nil, -1) },
	"predictor": func() []byte {
		return xrefStreamPDF("/Size 6 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 7 >>", pngNone, -1)
	},
	"keyword-flood": func() []byte { return withTail(bytes.Repeat([]byte("trailer"), 100)) },
	"stream-flood":  func() []byte { return withTail(bytes.Repeat([]byte("1 0 obj<<>>stream\n"), 100)) },
	"obj-flood":     func() []byte { return withoutXref(bytes.Repeat([]byte("1 0 obj\n"), 100)) },
	"comment-flood": func() []byte { return withObject(strings.Repeat("%\n", 1000) + "()") },
}

// pngNone deflates rows of 7 bytes (an xref stream's /W [1 4 2]), each
// behind a PNG "None" filter byte, as /Predictor 12 /Columns 7 expects.
func pngNone(b []byte) []byte {
	var rows []byte
	for i := 0; i+7 <= len(b); i += 7 {
		rows = append(append(rows, 0), b[i:i+7]...)
	}
	return deflate(rows)
}
