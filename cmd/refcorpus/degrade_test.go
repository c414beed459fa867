package main

import (
	"bytes"
	"errors"
	"image"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gen2brain/go-fitz"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"golang.org/x/image/ccitt"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/manifest"
)

// The commands behind the committed corpora, as their READMEs give them.
var (
	sampleOptions  = options{Seed: 1, Docs: 10, DPIs: []int{150, 200, 200}, Bad: true, MaxBytes: DefaultMaxBytes}
	evalOptions    = options{Seed: 3, Docs: 30, DPIs: []int{150, 200, 300}, Degrade: true, BadAll: true, Bad: true, MaxBytes: DefaultMaxBytes, Hard: 8, Coverage: 16, FaintInk: DefaultFaintInk, Handwriting: 8, Signatures: 3, HandDPIs: []int{200, 300}}
	holdoutOptions = options{Seed: 11, Docs: 0, DPIs: []int{150, 200, 300}, MaxBytes: DefaultMaxBytes, Coverage: 8, FaintInk: [2]int{125, 195}, Handwriting: 6, Signatures: 2, HandDPIs: []int{200, 300}}
)

// smallAll exercises every --degrade, --bad-all and --hard path and stays
// fast.
var smallAll = options{Seed: 5, Docs: 6, DPIs: []int{150, 200}, Degrade: true, BadAll: true, Bad: true, MaxBytes: DefaultMaxBytes, Hard: 2}

// repoDir returns the folder below the repository root, or skips.
func repoDir(t *testing.T, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test's folder")
		}
		dir = parent
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Stat(filepath.Join(p, "manifest.csv")); err != nil {
		t.Skipf("%s holds no corpus", rel)
	}
	return p
}

// sameFiles fails unless got holds exactly the files of want, byte for
// byte; files named in skip are left out of want.
func sameFiles(t *testing.T, want, got map[string]string, skip ...string) {
	t.Helper()
	for p, h := range want {
		if slices.Contains(skip, p) {
			continue
		}
		if g, ok := got[p]; !ok {
			t.Errorf("%s is not generated any more", p)
		} else if g != h {
			t.Errorf("%s differs from the generator's output", p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is generated but not committed", p)
		}
	}
}

// TestSampleRegenerates checks that the built-in sample, which other
// packages' tests read byte for byte, is still exactly what its command
// makes.
func TestSampleRegenerates(t *testing.T) {
	dir := repoDir(t, "testdata/sample")
	sameFiles(t, hashes(t, dir), hashes(t, generate(t, sampleOptions)), "README.md")
}

// TestEvalCorpusRegenerates checks that testdata/eval is what its command
// makes, so the corpus and its truth cannot drift from the generator.
func TestEvalCorpusRegenerates(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the whole evaluation corpus")
	}
	dir := repoDir(t, "testdata/eval")
	sameFiles(t, hashes(t, dir), hashes(t, generate(t, evalOptions)), "README.md", "thresholds.json", ".gitattributes")
}

// TestHoldoutRegenerates checks that testdata/holdout is what its command
// makes.
func TestHoldoutRegenerates(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the held-out corpus")
	}
	dir := repoDir(t, "testdata/holdout")
	sameFiles(t, hashes(t, dir), hashes(t, generate(t, holdoutOptions)), "README.md", "thresholds.json", ".gitattributes")
}

// TestDegradeDeterministic regenerates smallAll, every --degrade,
// --bad-all and --hard path, and compares. Without -short it is
// TestEvalCorpusRegenerates's to show, with the same paths against the
// committed corpus: it runs here only when that test does not.
func TestDegradeDeterministic(t *testing.T) {
	if !testing.Short() {
		t.Skip("TestEvalCorpusRegenerates regenerates the same paths and compares them with testdata/eval")
	}
	a := hashes(t, smallAllDir)
	b := hashes(t, generate(t, smallAll))
	if len(a) < 20 {
		t.Fatalf("only %d files written", len(a))
	}
	sameFiles(t, a, b)
}

// TestSmallAllAdmission and TestEvalAdmission run every row through the
// manifest parser and admission exactly as refbatch does, and compare
// with expected.csv.
func TestSmallAllAdmission(t *testing.T) {
	checkAdmission(t, smallAllDir)
}

func TestEvalAdmission(t *testing.T) {
	checkAdmission(t, repoDir(t, "testdata/eval"))
}

func checkAdmission(t *testing.T, dir string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("\ufeff")) || bytes.Count(raw, []byte("\r\n")) != bytes.Count(raw, []byte("\n")) {
		t.Error("the manifest lacks its byte order mark or has a bare LF")
	}
	if !bytes.Contains(raw, []byte("\r\n\r\n")) || !bytes.Contains(raw, []byte(`"`)) {
		t.Error("the manifest lacks its blank line or a quoted field")
	}
	mr, err := manifest.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	expected := expectations(t, dir)
	limits := admit.DefaultLimits()
	limits.MaxBytes = DefaultMaxBytes
	var done, reasons []string
	for i := 0; ; i++ {
		row, err := mr.Next()
		if errors.Is(err, io.EOF) {
			if i != len(expected) {
				t.Errorf("manifest has %d rows, expected.csv %d", i, len(expected))
			}
			break
		}
		if err != nil {
			t.Fatalf("manifest: %v", err)
		}
		if i >= len(expected) {
			t.Fatalf("manifest has more rows than expected.csv")
		}
		want := expected[i]
		id, state, reason := want[0], want[1], want[2]
		if row.SourceID != id {
			t.Fatalf("row %d: manifest has %s, expected.csv %s", i+1, row.SourceID, id)
		}
		name := id + "-" + state + "-" + reason
		reasons = append(reasons, reason)
		t.Run(name, func(t *testing.T) {
			if row.Err != nil {
				if state != "rejected" || string(row.Err.Reason) != reason {
					t.Fatalf("the manifest rejects it as %s, expected %s %s", row.Err.Reason, state, reason)
				}
				return
			}
			doc, err := admitCheck(t, dir, row.Path, row.SHA256, limits)
			rej, isRej := admit.IsRejection(err)
			switch {
			case err != nil && !isRej:
				t.Fatalf("admission failed: %v", err)
			case state == "rejected" && reason != "conflict":
				if !isRej || string(rej.Reason) != reason {
					t.Fatalf("admission gives %v, expected %s", err, reason)
				}
			case isRej:
				t.Fatalf("admission rejects it (%v), expected %s %s", rej, state, reason)
			case state == "done" || state == "review":
				done = append(done, id)
				truth := readTruth(t, filepath.Join(dir, "truth", id+".json"))
				if doc.Pages != len(truth.Pages) {
					t.Errorf("%d pages admitted, %d in the truth", doc.Pages, len(truth.Pages))
				}
			}
		})
	}
	for _, r := range []string{"empty_file", "not_pdf", "malformed_pdf", "missing_file", "no_consent", "hash_mismatch",
		"path_outside_root", "missing_field", "bad_date", "encrypted", "too_many_pages", "page_too_large", "too_large", "conflict", "empty_text"} {
		if !slices.Contains(reasons, r) {
			t.Errorf("no row expects %s", r)
		}
	}
	if len(done) == 0 {
		t.Error("no readable document")
	}
}

// TestOverCapOnlyByBytes checks that the too_large input is otherwise a
// good PDF: under the default cap it is admitted.
func TestOverCapOnlyByBytes(t *testing.T) {
	dir := smallAllDir
	p := pathOf(t, varOverCap)
	if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.Size() <= DefaultMaxBytes {
		t.Fatalf("the input is not over %d bytes: %v", DefaultMaxBytes, err)
	}
	if _, err := admitCheck(t, dir, p, "", admit.DefaultLimits()); err != nil {
		t.Fatalf("under the default cap: %v", err)
	}
}

// pathOf returns the path of a variant's row in smallAll: every variant
// whose file a test reads is written as docs/<source_id>.pdf.
func pathOf(t *testing.T, variant string) string {
	t.Helper()
	for _, e := range plan(smallAll) {
		if e.Variant == variant && !e.Dup {
			return "docs/" + e.Spec.SourceID + ".pdf"
		}
	}
	t.Fatalf("no %s row", variant)
	return ""
}

func TestEncryptedInputs(t *testing.T) {
	dir := smallAllDir
	read := func(variant string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, pathOf(t, variant)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	conf := func(pw string) *model.Configuration {
		c := model.NewDefaultConfiguration()
		c.ValidationMode = model.ValidationRelaxed
		c.UserPW = pw
		return c
	}

	t.Run("empty user password", func(t *testing.T) {
		data := read(varEncrypted)
		if err := api.Validate(bytes.NewReader(data), conf("")); err != nil {
			t.Fatalf("pdfcpu cannot decrypt it: %v", err)
		}
		doc, err := fitz.NewFromMemory(data)
		if err != nil {
			t.Fatalf("MuPDF cannot open it: %v", err)
		}
		defer doc.Close()
		if !hasInk(t, doc, 0) {
			t.Error("MuPDF renders a blank page: the image did not decrypt")
		}
	})
	t.Run("user password", func(t *testing.T) {
		data := read(varEncryptedPW)
		if err := api.Validate(bytes.NewReader(data), conf("")); !errors.Is(err, pdfcpu.ErrWrongPassword) {
			t.Fatalf("without the password pdfcpu says %v", err)
		}
		if err := api.Validate(bytes.NewReader(data), conf(userPassword)); err != nil {
			t.Fatalf("with the password pdfcpu says %v", err)
		}
		if _, err := fitz.NewFromMemory(data); !errors.Is(err, fitz.ErrNeedsPassword) {
			t.Fatalf("MuPDF opens it without a password: %v", err)
		}
	})
}

// hasInk reports whether page p of doc, rendered at 72 DPI, has ink on
// it: a pixel darker than the lightest by 50 levels or more, in green
// (which every kind of ink darkens).
func hasInk(t *testing.T, doc *fitz.Document, p int) bool {
	t.Helper()
	img, err := doc.ImageDPI(p, 72)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 255, 0
	for i := 1; i < len(img.Pix); i += 4 {
		lo, hi = min(lo, int(img.Pix[i])), max(hi, int(img.Pix[i]))
	}
	return hi-lo >= 50
}

// TestScanPages and TestEvalPages render every page of the readable
// documents with MuPDF: each turned page must come out in the orientation
// its truth states, each page with text must show ink, and a text layer
// must hold exactly the page's text.
func TestScanPages(t *testing.T) {
	checkPages(t, smallAllDir)
}

func TestEvalPages(t *testing.T) {
	checkPages(t, repoDir(t, "testdata/eval"))
}

func checkPages(t *testing.T, dir string) {
	t.Helper()
	rows := readCSV(t, filepath.Join(dir, "expected.csv"))
	paths := manifestPaths(t, dir)
	seen := map[string]bool{}
	for i, r := range rows[1:] {
		id, state := r[0], r[1]
		if (state != "done" && state != "review") || seen[id] {
			continue
		}
		seen[id] = true
		path := paths[i]
		t.Run(id, func(t *testing.T) {
			truth := readTruth(t, filepath.Join(dir, "truth", id+".json"))
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := fitz.NewFromMemory(data)
			if err != nil {
				t.Fatal(err)
			}
			defer doc.Close()
			if doc.NumPage() != len(truth.Pages) {
				t.Fatalf("%d pages, truth has %d", doc.NumPage(), len(truth.Pages))
			}
			for p, tp := range truth.Pages {
				s := tp.Scan
				if s == nil {
					t.Fatalf("page %d has no scan record", p+1)
				}
				b, err := doc.Bound(p)
				if err != nil {
					t.Fatal(err)
				}
				// Paper is portrait, so a rendered page is landscape
				// exactly when it is shown a quarter turn round.
				if landscape, quarter := b.Dx() > b.Dy(), s.ShownRotation%180 != 0; landscape != quarter {
					t.Errorf("page %d renders %dx%d, shown rotation %d", p+1, b.Dx(), b.Dy(), s.ShownRotation)
				}
				if s.ShownRotation != (s.Rotation+s.RotateEntry)%360 {
					t.Errorf("page %d: shown rotation %d for %d+%d", p+1, s.ShownRotation, s.Rotation, s.RotateEntry)
				}
				if (tp.Text == "") != s.Blank {
					t.Errorf("page %d: blank %v with %d characters of text", p+1, s.Blank, len(tp.Text))
				}
				if !s.Blank && !hasInk(t, doc, p) {
					t.Errorf("page %d shows no ink", p+1)
				}
				if s.TextLayer != "" {
					text, err := doc.Text(p)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(tp.Text), " "); got != want {
						t.Errorf("page %d text layer:\n got %q\nwant %q", p+1, got, want)
					}
				}
			}
		})
	}
	if len(seen) < 8 {
		t.Errorf("only %d readable documents", len(seen))
	}
}

// manifestPaths returns the path of every row of dir's manifest, in order.
func manifestPaths(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "manifest.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mr, err := manifest.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for {
		row, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return paths
		}
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, row.Path)
	}
}

// TestKindsAndTurnsDealt checks that the decks give every kind and every
// turned case in a cycle of slots.
func TestKindsAndTurnsDealt(t *testing.T) {
	d := newDeck(1)
	kinds := map[string]int{}
	for s := range 3 * len(scanKinds) {
		kinds[d.kind(s)]++
	}
	for _, k := range scanKinds {
		if kinds[k] != 3 {
			t.Errorf("kind %s dealt %d times in 3 cycles", k, kinds[k])
		}
	}
	got := map[turn]int{}
	n := len(turns) * (1 + uprightPerTurned)
	for s := range n {
		got[d.turn(s)]++
	}
	for _, tu := range turns {
		if got[tu] != 1 {
			t.Errorf("turn %v dealt %d times in one cycle", tu, got[tu])
		}
	}
	if got[turn{}] != len(turns)*uprightPerTurned {
		t.Errorf("%d upright pages in a cycle of %d", got[turn{}], n)
	}
}

func TestTurnGray(t *testing.T) {
	// 3x2 image: 0 1 2 / 3 4 5.
	img := image.NewGray(image.Rect(0, 0, 3, 2))
	copy(img.Pix, []uint8{0, 1, 2, 3, 4, 5})
	for _, tc := range []struct {
		deg  int
		w, h int
		want []uint8
	}{
		{0, 3, 2, []uint8{0, 1, 2, 3, 4, 5}},
		{90, 2, 3, []uint8{3, 0, 4, 1, 5, 2}},
		{180, 3, 2, []uint8{5, 4, 3, 2, 1, 0}},
		{270, 2, 3, []uint8{2, 5, 1, 4, 0, 3}},
	} {
		out := turnGray(img, tc.deg)
		if out.Bounds().Dx() != tc.w || out.Bounds().Dy() != tc.h || !bytes.Equal(out.Pix, tc.want) {
			t.Errorf("turn %d: %dx%d %v, want %dx%d %v", tc.deg, out.Bounds().Dx(), out.Bounds().Dy(), out.Pix, tc.w, tc.h, tc.want)
		}
	}
}

func TestCCITTRoundTrip(t *testing.T) {
	r := rng(1, 1)
	mk := func(w, h int, f func(x, y int) bool) *image.Gray {
		img := image.NewGray(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				img.Pix[y*w+x] = 255
				if f(x, y) {
					img.Pix[y*w+x] = 0
				}
			}
		}
		return img
	}
	fonts, err := loadFonts()
	if err != nil {
		t.Fatal(err)
	}
	ds := docStyle{DPI: 150, Paper: papers[1], BodyPt: 11}
	fc, err := newFaces(fonts, ds)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	form := newForm(rng(1, 2), "P-123456", "2024-01-02", true, 1)
	page, _, err := layout(form.Pages[0], ds, fc)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range page.Pix {
		if v < 128 {
			page.Pix[i] = 0
		} else {
			page.Pix[i] = 255
		}
	}
	for _, tc := range []struct {
		name string
		img  *image.Gray
	}{
		{"white", mk(17, 3, func(x, y int) bool { return false })},
		{"black", mk(17, 3, func(x, y int) bool { return true })},
		{"first pixel black", mk(9, 4, func(x, y int) bool { return x == 0 })},
		{"last pixel black", mk(9, 4, func(x, y int) bool { return x == 8 })},
		{"checkerboard", mk(13, 7, func(x, y int) bool { return (x+y)%2 == 0 })},
		{"stripes", mk(40, 9, func(x, y int) bool { return (x/3+y)%4 == 0 })},
		{"random", mk(101, 50, func(x, y int) bool { return r.IntN(3) == 0 })},
		{"long runs", mk(6000, 4, func(x, y int) bool { return y%2 == 1 && x >= 64*y && x < 5900-y*700 })},
		{"makeup lengths", mk(2600, 40, func(x, y int) bool { return x >= y*64 && x < y*64+64*(y%28)+y })},
		{"form page", page},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.img.Bounds()
			got := image.NewGray(b)
			if err := ccitt.DecodeIntoGray(got, bytes.NewReader(encodeG4(tc.img)), ccitt.MSB, ccitt.Group4, nil); err != nil {
				t.Fatal(err)
			}
			for i := range got.Pix {
				if got.Pix[i] != tc.img.Pix[i] {
					t.Fatalf("pixel (%d,%d) decodes as %d, drawn %d", i%b.Dx(), i/b.Dx(), got.Pix[i], tc.img.Pix[i])
				}
			}
		})
	}
}

// TestTruthRecordsScans checks the truth of --degrade pages: every page
// has its scan record, and the deck's kinds all appear in smallAll.
func TestTruthRecordsScans(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(smallAllDir, "truth", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, f := range files {
		td := readTruth(t, f)
		for i, p := range td.Pages {
			if p.Scan == nil {
				continue // the rejected rows of --bad are plain scans
			}
			kinds[p.Scan.Kind] = true
			if p.Scan.DPI == 0 || p.Scan.Encoding == "" || p.Scan.Colour == "" {
				t.Errorf("%s page %d: incomplete scan record %+v", td.SourceID, i+1, *p.Scan)
			}
		}
	}
	for _, k := range scanKinds {
		if !kinds[k] {
			t.Errorf("no %s page in smallAll", k)
		}
	}
}
