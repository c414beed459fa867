package admit

import (
	"bytes"
	"compress/zlib"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
)

// The committed fixtures in testdata/admit are written by the builders in
// this file; regenerate them with
//
//	go test ./batch/admit -run TestWriteFixtures -update
var update = flag.Bool("update", false, "rewrite the fixtures in testdata/admit")

const fixtureDir = "../../testdata/admit"

// fixtures maps each committed fixture to its builder. Files that must be
// made at test time (symlinks, encryption, the 201-page bomb) are not here.
var fixtures = map[string]func() []byte{
	"good.pdf":           goodPDF,
	"rotated.pdf":        rotatedPDF,
	"large-page.pdf":     func() []byte { return onePage("[0 0 2160 2160]", "") },
	"giant-page.pdf":     func() []byte { return onePage("[0 0 14400 14400]", "") },
	"userunit.pdf":       func() []byte { return onePage("[0 0 1000 1000]", "/UserUnit 10") },
	"huge-image.pdf":     hugeImagePDF,
	"no-pages.pdf":       noPagesPDF,
	"truncated.pdf":      truncatedPDF,
	"broken-xref.pdf":    brokenXrefPDF,
	"bad-startxref.pdf":  badStartxrefPDF,
	"junk-header.pdf":    func() []byte { return append(bytes.Repeat([]byte("junk "), 100), goodPDF()...) },
	"late-header.pdf":    func() []byte { return append(bytes.Repeat([]byte("junk "), 205), goodPDF()...) },
	"prose.pdf":          func() []byte { return []byte("%PDF-1.3\nThis is not a PDF, only its first line.\n%%EOF\n") },
	"png.pdf":            pngBytes,
	"direct-encrypt.pdf": directEncryptPDF,
	"bomb-metadata.pdf":  func() []byte { return bombPDF("/Type /Metadata /Subtype /XML", "/Metadata 5 0 R", false) },
	"bomb-objstm.pdf":    func() []byte { return bombPDF("/Type /ObjStm /N 1 /First 4", "", false) },
	"bomb-xref.pdf":      func() []byte { return bombPDF("", "", true) },
}

// TestWriteFixtures rewrites testdata/admit with -update and otherwise
// checks that the committed files are what the builders produce.
func TestWriteFixtures(t *testing.T) {
	for name, build := range fixtures {
		path := filepath.Join(fixtureDir, name)
		want := build()
		if *update {
			if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to write the fixtures)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its builder; run with -update", name)
		}
	}
}

// buildPDF writes a classic PDF: objs[i] is the body of object i+1, the
// catalog is object 1, and the xref table has the right offsets.
func buildPDF(objs []string, trailerExtra string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, trailerExtra, xref)
	return b.Bytes()
}

func stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
}

// goodPDF is one US Letter page that draws a small gray image.
func goodPDF() []byte {
	img := bytes.Repeat([]byte{0x80}, 8*8)
	return buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>",
		stream("", []byte("q 612 0 0 792 0 0 cm /Im1 Do Q")),
		stream("/Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray /BitsPerComponent 8", img),
	}, "")
}

// onePage is a single empty page with the given MediaBox and extra page
// entries.
func onePage(mediaBox, extra string) []byte {
	return buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox %s %s /Resources << >> /Contents 4 0 R >>", mediaBox, extra),
		stream("", nil),
	}, "")
}

// rotatedPDF has two pages that inherit MediaBox and /Rotate 90 from the
// page tree; the second is cut by a CropBox reaching past the MediaBox.
func rotatedPDF() []byte {
	return buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /MediaBox [0 0 842 595] /Rotate 90 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << >> /Contents 5 0 R >>",
		"<< /Type /Page /Parent 2 0 R /CropBox [-100 0 421 2000] /Resources << >> /Contents 5 0 R >>",
		stream("", nil),
	}, "")
}

// hugeImagePDF is a 1-inch page holding a 20000×20000 bitonal image (400
// Mpx) in 2.5 KB: CCITT G4 codes an all-white row in one bit.
func hugeImagePDF() []byte {
	const side = 20000
	data := append(bytes.Repeat([]byte{0xff}, side/8), 0x00, 0x10, 0x01) // one V0 per row, then EOFB
	return buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>",
		stream("", []byte("q 72 0 0 72 0 0 cm /Im1 Do Q")),
		stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns %d /Rows %d >>", side, side, side, side), data),
	}, "")
}

func noPagesPDF() []byte {
	return buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [] /Count 0 >>",
	}, "")
}

// brokenXrefPDF is goodPDF with its binary comment line stripped after
// the xref table was written, so every offset is 6 bytes too far: readers
// repair it by scanning for objects, and so must admission.
func brokenXrefPDF() []byte {
	return bytes.Replace(goodPDF(), []byte("%\xe2\xe3\xcf\xd3\n"), nil, 1)
}

// truncatedPDF is goodPDF cut off inside its image stream, like an
// interrupted copy.
func truncatedPDF() []byte {
	b := goodPDF()
	i := bytes.LastIndex(b, []byte(">>\nstream\n")) + len(">>\nstream\n")
	return b[:i+20]
}

// badStartxrefPDF is goodPDF whose startxref points into the middle of an
// object.
func badStartxrefPDF() []byte {
	b := goodPDF()
	i := bytes.LastIndex(b, []byte("startxref\n"))
	return append(b[:i:i], "startxref\n20\n%%EOF\n"...)
}

// directEncryptPDF carries its encryption dictionary directly in the
// trailer, which pdfcpu does not look at; nothing is actually encrypted.
func directEncryptPDF() []byte {
	return buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 4 0 R >>",
		stream("", nil),
	}, "/Encrypt << /Filter /Standard /V 2 /R 3 /Length 128 /P -4 /O <00> /U <00> >> /ID [<0123> <0123>] ")
}

// bombPDF is goodPDF's page plus object 5, a 0.3 GB decompression bomb
// in a few hundred bytes: RunLength runs of 128 zeros, deflated twice.
// catalogExtra can make it the catalog's metadata; startxrefAtBomb points
// startxref at it, so that pdfcpu would decode it as an xref stream.
func bombPDF(dict, catalogExtra string, startxrefAtBomb bool) []byte {
	rl := bytes.Repeat([]byte{257 - 128, 0}, 2_300_000) // 294 MB once decoded
	data := deflate(deflate(rl))
	b := buildPDF([]string{
		"<< /Type /Catalog /Pages 2 0 R " + catalogExtra + " >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 4 0 R >>",
		stream("", nil),
		stream(dict+" /Filter [/FlateDecode /FlateDecode /RunLengthDecode]", data),
	}, "")
	if startxrefAtBomb {
		i := bytes.LastIndex(b, []byte("startxref\n"))
		b = append(b[:i:i], fmt.Sprintf("startxref\n%d\n%%%%EOF\n", bytes.Index(b, []byte("5 0 obj")))...)
	}
	return b
}

func deflate(b []byte) []byte {
	var out bytes.Buffer
	w, err := zlib.NewWriterLevel(&out, zlib.BestCompression)
	if err != nil {
		panic(err)
	}
	if _, err := w.Write(b); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return out.Bytes()
}

func pngBytes() []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// manyPages is a flat page tree of n empty pages.
func manyPages(n int) []byte {
	kids := make([]string, n)
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", stream("", nil)}
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", len(objs)+1)
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 3 0 R >>")
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	return buildPDF(objs, "")
}

// encryptPDF encrypts src with pdfcpu's own encrypt API, using admission's
// configuration so that no pdfcpu config directory is written.
func encryptPDF(t *testing.T, src []byte, userPW string, aes bool, keyLength int) []byte {
	t.Helper()
	conf := pdfcpuConfig()
	conf.UserPW = userPW
	conf.OwnerPW = "owner-secret"
	conf.EncryptUsingAES = aes
	conf.EncryptKeyLength = keyLength
	var out bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(src), &out, conf); err != nil {
		t.Fatalf("encrypting fixture: %v", err)
	}
	return out.Bytes()
}
