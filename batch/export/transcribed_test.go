package export

import (
	"bytes"
	"compress/zlib"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/export/pdfcheck"
)

// testTranscriptions: two lines for a region of page 1 (150 DPI), one
// with no box for page 3: unplaced.
func testTranscriptions() []Transcription {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return []Transcription{
		{Page: 0, Box: [4]int{150, 450, 750, 570}, Field: "participant_id", Text: "Jane <Doe>\n  12 Main St  ", User: "ann", Host: "desk1", At: at},
		{Page: 2, Text: "signed", User: "bob", Host: "desk2", At: at},
	}
}

// TestTranscriptionsALTO: each transcription is a TextBlock of its own
// after its page's recognised ones, tagged "transcribed" and tied to a
// Processing step by the person; its Strings have no WC; the file
// validates.
func TestTranscriptionsALTO(t *testing.T) {
	t.Parallel()
	frames := []PageFrame{{Width: 612, Height: 792}, {Width: 612, Height: 792}, {Width: 792, Height: 612}}
	var buf bytes.Buffer
	if err := WriteALTO(&buf, testPages(), frames, testProvenance(), testTranscriptions()); err != nil {
		t.Fatal(err)
	}
	x := buf.String()
	for _, want := range []string{
		`<OtherTag ID="transcribed" TYPE="provenance" LABEL="transcribed by a person, not recognised"`,
		`<Processing ID="transcr1">`, `<processingDateTime>2026-12-01T09:00:00Z</processingDateTime>`,
		`corrects the manifest field participant_id`, `by ann on desk1`,
		// 150 px at 150 DPI is an inch: 1200 units; two lines, 60 px each.
		`<TextBlock ID="p1_t1" TAGREFS="transcribed" PROCESSINGREFS="transcr1" HPOS="1200" VPOS="3600" WIDTH="4800" HEIGHT="960">`,
		`<TextLine ID="p1_t1_l2" TAGREFS="transcribed" HPOS="1200" VPOS="4080"`,
		`CONTENT="&lt;Doe&gt;"/>`, `CONTENT="St"/>`,
		`<TextBlock ID="p3_t2" TAGREFS="transcribed" PROCESSINGREFS="transcr2">`,
		`<String ID="p3_t2_l1_w1" TAGREFS="transcribed" CONTENT="signed"/>`,
	} {
		if !strings.Contains(x, want) {
			t.Errorf("ALTO lacks %s", want)
		}
	}
	if regexp.MustCompile(`TAGREFS="transcribed"[^>]*WC=`).MatchString(x) {
		t.Error("a transcribed String has a word confidence")
	}
	if strings.Index(x, `ID="p1_t1"`) < strings.Index(x, `ID="p1_b2"`) {
		t.Error("the transcription comes before the page's recognised blocks")
	}
	validateALTO(t, buf.Bytes())

	var plain bytes.Buffer
	if err := WriteALTO(&plain, testPages(), frames, testProvenance(), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "<Tags>") {
		t.Error("an ALTO with no transcription has Tags")
	}
}

// TestTranscriptionsPDF: the transcription's lines are in the invisible
// layer inside a /Transcribed marked-content sequence, every reader
// installed extracts them, and the PDF/A checker passes.
func TestTranscriptionsPDF(t *testing.T) {
	t.Parallel()
	if _, err := glyphlessTTF(); err != nil {
		t.Skip(err)
	}
	src, pages := samplePages(t)
	ts := testTranscriptions()[:1]
	out, notPDFA, err := SearchablePDF(src, pages, testProvenance(), PDFOptions{PDFA: true, Transcriptions: ts})
	if err != nil || notPDFA != "" {
		t.Fatalf("SearchablePDF: %v, not PDF/A: %q", err, notPDFA)
	}
	if p := pdfcheck.PDFA(out); len(p) > 0 {
		t.Errorf("PDF/A clauses broken: %v", p)
	}
	// The marker is in the layer, once, around both lines and after the
	// recognised ones (the other EMCs end the bridges within lines).
	update := inflated(t, out[len(src):])
	mark := "/Transcribed <</Source (person) /Field (participant_id)>> BDC\n"
	end := "ET\nEMC\n"
	if strings.Count(update, mark) != 1 || strings.Count(update, end) != 1 {
		t.Fatalf("the update has %d markers and %d EMC after a text object, want 1 and 1", strings.Count(update, mark), strings.Count(update, end))
	}
	body := update[strings.Index(update, mark):strings.Index(update, end)]
	if n := strings.Count(body, "BT\n"); n != 2 {
		t.Errorf("%d text objects marked, want 2", n)
	}
	if !strings.Contains(update, "ET\nEMC\nQ\n") {
		t.Error("the marked transcription does not end its page's layer")
	}

	path := filepath.Join(t.TempDir(), "out.pdf")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	pdfjs := pdfcheck.PDFJSDir("../..")
	for _, reader := range pdfcheck.Readers {
		if why := pdfcheck.ReaderAvailable(reader, pdfjs); why != "" {
			t.Logf("%s: %s", reader, why)
			continue
		}
		texts, err := pdfcheck.Extract(context.Background(), reader, path, t.TempDir(), pdfjs)
		if err != nil {
			t.Fatalf("%s: %v", reader, err)
		}
		got := strings.Join(strings.Fields(texts[0]), " ")
		for _, want := range []string{"Jane <Doe>", "12 Main St", "Dear Dr"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s does not read %q on page 1", reader, want)
			}
		}
	}
}

// inflated is the update's Flate streams, decoded and joined.
func inflated(t *testing.T, update []byte) string {
	t.Helper()
	var all strings.Builder
	for rest := update; ; {
		start := bytes.Index(rest, []byte(">>\nstream\n"))
		if start < 0 {
			break
		}
		rest = rest[start+len(">>\nstream\n"):]
		end := bytes.Index(rest, []byte("\nendstream"))
		if end < 0 {
			break
		}
		if r, err := zlib.NewReader(bytes.NewReader(rest[:end])); err == nil {
			b, _ := io.ReadAll(r)
			all.Write(b)
		}
		rest = rest[end:]
	}
	return all.String()
}
