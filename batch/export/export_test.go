package export

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/result"
)

func word(text string, conf float64, x0, y0, x1, y1 int) result.Word {
	return result.Word{Text: text, Conf: conf, Box: [4]int{x0, y0, x1, y1}}
}

func TestLayout(t *testing.T) {
	two := []result.Word{word("Dear", 96, 10, 10, 50, 30), word("Dr", 95, 60, 10, 80, 30),
		word("Smith", 91, 10, 40, 60, 60), word("Re:", 90, 10, 100, 40, 120)}
	for _, tc := range []struct {
		name string
		page result.PageResult
		want [][][]int
	}{
		{"tesseract's lines and blocks from the text", result.PageResult{Text: "Dear Dr\nSmith\n\nRe:", Words: two},
			[][][]int{{{0, 1}, {2}}, {{3}}}},
		{"text that does not match: lines from the boxes", result.PageResult{Text: "Dear Dr Smith Re:", Words: two[:3]},
			[][][]int{{{0, 1}, {2}}}},
		{"layer words without boxes", result.PageResult{Text: "a b", Words: []result.Word{{Text: "a"}, {Text: "b"}}},
			[][][]int{{{0, 1}}}},
		{"blank page", result.PageResult{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Layout(tc.page)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Layout = %v, want %v", got, tc.want)
			}
		})
	}
}

func testPages() []result.PageResult {
	return []result.PageResult{
		{Index: 0, DPI: 150, Width: 1275, Height: 1650, MeanConf: 93, TextSource: result.TextFromOCR,
			Text: "Dear Dr\n<Smith> & \"Co\"\n\nRe:",
			Words: []result.Word{word("Dear", 96, 150, 150, 250, 180), word("Dr", 95, 270, 150, 310, 180),
				word(`<Smith>`, 91, 150, 200, 300, 230), word("&", 40, 310, 200, 330, 230), word(`"Co"`, 101, 340, 200, 400, 230),
				word("Re:", 0, 150, 300, 200, 330)}},
		{Index: 1, DPI: 150, Width: 1275, Height: 1650, Blank: true, TextSource: result.TextFromOCR},
		{Index: 2, DPI: 300, TextSource: result.TextFromLayer, Text: "from the layer",
			Words: []result.Word{{Text: "from", Conf: 100}, {Text: "the", Conf: 100}, {Text: "layer", Conf: 100}}},
	}
}

func testProvenance() Provenance {
	return Provenance{SourceID: "R-0001", SourceSHA256: strings.Repeat("ab", 32), Lang: "eng",
		Engines:       map[string]string{"refbatch": "devel", "tesseract": "5.3.0", "mupdf": "1.24.9", "leptonica": "1.82.0"},
		PolicyVersion: "p1", Policy: map[string]any{"dpi": 150}, ReadAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// TestALTOValidates writes an ALTO file with markup in words, a blank page
// and a page read from its text layer, and validates it against the
// official schema offline.
func TestALTOValidates(t *testing.T) {
	frames := []PageFrame{{Width: 612, Height: 792}, {Width: 612, Height: 792}, {Width: 792, Height: 612}}
	var buf bytes.Buffer
	if err := WriteALTO(&buf, testPages(), frames, testProvenance(), nil); err != nil {
		t.Fatal(err)
	}
	x := buf.String()
	for _, want := range []string{
		`<MeasurementUnit>inch1200</MeasurementUnit>`,
		`<Page ID="p1" PHYSICAL_IMG_NR="1" WIDTH="10200" HEIGHT="13200" PC="0.93">`,
		// 150 px at 150 DPI is an inch: 1200 units.
		`<String ID="p1_b1_l1_w1" HPOS="1200" VPOS="1200" WIDTH="800" HEIGHT="240" CONTENT="Dear" WC="0.96"/>`,
		`CONTENT="&lt;Smith&gt;"`, `CONTENT="&amp;" WC="0.4"`, `CONTENT="&#34;Co&#34;" WC="1"`, `CONTENT="Re:" WC="0"`,
		`<SP HPOS="2000" VPOS="1200" WIDTH="160"/>`,
		`<String ID="p3_b1_l1_w2" CONTENT="the" WC="1"/>`,
		`<softwareName>tesseract</softwareName>`,
	} {
		if !strings.Contains(x, want) {
			t.Errorf("ALTO lacks %s", want)
		}
	}
	if err := WriteALTO(&bytes.Buffer{}, testPages(), frames[:1], testProvenance(), nil); err == nil {
		t.Error("WriteALTO accepted fewer frames than pages")
	}
	var again bytes.Buffer
	WriteALTO(&again, testPages(), frames, testProvenance(), nil)
	if again.String() != x {
		t.Error("WriteALTO is not deterministic: a resumed export would rewrite every file")
	}
	validateALTO(t, buf.Bytes())
}

// validateALTO validates an ALTO file against the official schema,
// offline; it skips the test when the schema or xmllint is absent.
func validateALTO(t *testing.T, alto []byte) {
	t.Helper()
	wd, _ := os.Getwd()
	shared := filepath.Join(wd, "..", "..", "..", "shared")
	if d := os.Getenv("REFBATCH_SHARED_DIR"); d != "" {
		shared = d
	}
	schema := filepath.Join(shared, "schemas", "alto-4-4.xsd")
	if _, err := os.Stat(schema); err != nil {
		t.Skipf("ALTO schema not found at %s", schema)
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("xmllint not installed (Debian: libxml2-utils)")
	}
	path := filepath.Join(t.TempDir(), "doc.alto.xml")
	if err := os.WriteFile(path, alto, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("xmllint", "--nonet", "--noout", "--schema", schema, path).CombinedOutput(); err != nil {
		t.Errorf("does not validate: %v\n%s", err, out)
	}
}

func TestBagTagFiles(t *testing.T) {
	b := NewBag()
	b.Add("data/b/b.txt", Sum([]byte("hello")), 5)
	b.Add("data/a/a.txt", Sum([]byte("hi")), 2)
	b.Add("data/a/a.txt", Sum([]byte("hi!")), 3) // added again: replaced
	if got := b.Oxum(); got != "8.2" {
		t.Errorf("Oxum = %s, want 8.2", got)
	}
	names, contents, tag := b.TagFiles(BagInfo{ExternalIdentifier: "refbatch-x\ny", Agent: "refbatch t", Documents: 2,
		Date: time.Date(2026, 3, 4, 23, 0, 0, 0, time.UTC)})
	if !reflect.DeepEqual(names, []string{BagItFile, BagInfoFile, ManifestFile}) {
		t.Fatalf("names %v", names)
	}
	if want := Sum([]byte("hi!")) + "  data/a/a.txt\n" + Sum([]byte("hello")) + "  data/b/b.txt\n"; string(contents[2]) != want {
		t.Errorf("manifest:\n%s", contents[2])
	}
	info := string(contents[1])
	for _, want := range []string{"Bagging-Date: 2026-03-04\n", "External-Identifier: refbatch-x y\n", "Payload-Oxum: 8.2\n", "Refbatch-Document-Count: 2\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("bag-info lacks %q:\n%s", want, info)
		}
	}
	for i, name := range names {
		if !strings.Contains(string(tag), Sum(contents[i])+"  "+name+"\n") {
			t.Errorf("tag manifest lacks %s", name)
		}
	}
}
