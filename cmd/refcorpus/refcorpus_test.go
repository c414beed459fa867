package main

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"image"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/ocr/child"
)

// small is a corpus that exercises every kind of row and stays fast.
var small = options{Seed: 1, Docs: 4, DPIs: []int{150, 200}, Bad: true}

// smallDir, smallAllDir and smallCovDir hold small, smallAll and
// smallCov, generated once for the tests that only read them.
var smallDir, smallAllDir, smallCovDir string

func TestMain(m *testing.M) {
	// The test binary doubles as refbatch's admission child (admitPool).
	if os.Getenv("REFCORPUS_ADMIT_CHILD") == "1" {
		os.Exit(admit.ServeMain())
	}
	// Keep pdfcpu from creating a configuration folder in $HOME.
	model.ConfigPath = "disable"
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	for _, c := range []struct {
		o   options
		dir *string
	}{{small, &smallDir}, {smallAll, &smallAllDir}, {smallCov, &smallCovDir}} {
		dir, err := os.MkdirTemp("", "refcorpus-test-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		c.o.Out = dir
		if err := run(c.o); err != nil {
			panic(err)
		}
		*c.dir = dir
	}
	defer admitPool.Close()
	return m.Run()
}

// admitPool is a pool of real admission children for the tests; its
// children are the test binary.
var admitPool = admit.NewPool(admit.PoolConfig{Command: child.Command{Path: os.Args[0], Env: []string{"REFCORPUS_ADMIT_CHILD=1"}}})

// admitCheck admits a generated file as refbatch would, through a real
// admission child.
func admitCheck(t *testing.T, root, path, sha string, lim admit.Limits) (*admit.Doc, error) {
	t.Helper()
	return admit.Check(context.Background(), root, path, sha, lim, admitPool)
}

// generate writes o to a fresh temporary folder and returns it.
func generate(t *testing.T, o options) string {
	t.Helper()
	o.Out = t.TempDir()
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	return o.Out
}

// hashes maps every file below dir, by slash path, to its SHA-256.
func hashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = sum(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDeterministic: another seed makes another corpus. That one seed
// makes the same corpus twice is TestSampleRegenerates's to show: it
// makes the sample (small's seed and rows, and more) again and compares
// it with the committed one, byte for byte.
func TestDeterministic(t *testing.T) {
	a := hashes(t, smallDir)
	if len(a) == 0 {
		t.Fatal("no files written")
	}
	other := small
	other.Seed = 2
	c := hashes(t, generate(t, other))
	if c["manifest.csv"] == a["manifest.csv"] {
		t.Error("seeds 1 and 2 gave the same manifest")
	}
}

// TestGoodDocsIndependentOfBad checks that adding --bad leaves the good
// documents byte-identical, so a corpus can grow without churning.
func TestGoodDocsIndependentOfBad(t *testing.T) {
	good := small
	good.Bad = false
	a := hashes(t, generate(t, good))
	b := hashes(t, smallDir)
	for p, h := range a {
		if strings.HasPrefix(p, "docs/") && b[p] != h {
			t.Errorf("%s changed when --bad was added", p)
		}
	}
}

func TestPDFsValidate(t *testing.T) {
	dir := smallDir
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	rows := readCSV(t, filepath.Join(dir, "manifest.csv"))
	want := expectations(t, dir)
	for i, r := range rows[1:] {
		id, path, reason := r[0], r[4], want[i][2]
		full := filepath.Join(dir, filepath.FromSlash(path))
		switch reason {
		case "", "no_consent", "hash_mismatch", "missing_field", "bad_date", "conflict":
			t.Run(id+"-"+reason, func(t *testing.T) {
				if err := api.ValidateFile(full, conf); err != nil {
					t.Fatalf("pdfcpu rejects %s: %v", path, err)
				}
			})
		case "malformed_pdf":
			t.Run(id+"-"+reason, func(t *testing.T) {
				if err := api.ValidateFile(full, conf); err == nil {
					t.Fatalf("pdfcpu accepts the truncated %s", path)
				}
			})
		}
	}
}

func TestManifestExpectedTruthAgree(t *testing.T) {
	dir := smallDir
	manifest := readCSV(t, filepath.Join(dir, "manifest.csv"))
	expected := expectations(t, dir)
	if got, want := manifest[0], []string{"source_id", "participant_id", "referral_date", "consent", "path", "sha256"}; !slices.Equal(got, want) {
		t.Fatalf("manifest header = %v, want %v", got, want)
	}
	if len(manifest)-1 != len(expected) {
		t.Fatalf("manifest has %d rows, expected.csv %d", len(manifest)-1, len(expected))
	}
	conf := model.NewDefaultConfiguration()
	seen := map[string]bool{}
	for i, r := range manifest[1:] {
		e := expected[i]
		id, pid, date, consent, path, hash := r[0], r[1], r[2], r[3], r[4], r[5]
		state, reason := e[1], e[2]
		if e[0] != id {
			t.Fatalf("row %d: manifest has %s, expected.csv %s", i+1, id, e[0])
		}
		if !regexp.MustCompile(`^R-\d{4}$`).MatchString(id) {
			t.Errorf("row %d: source_id %q is not R-nnnn", i+1, id)
		}
		if state == "done" || state == "duplicate" {
			if reason != "" {
				t.Errorf("%s: state %s with reason %q", id, state, reason)
			}
		} else if state != "rejected" || reason == "" {
			t.Errorf("%s: state %q reason %q", id, state, reason)
		}
		if state == "duplicate" && !seen[id] {
			t.Errorf("%s: duplicate before its first row", id)
		}
		if reason == "conflict" && !seen[id] {
			t.Errorf("%s: conflict before its first row", id)
		}
		seen[id] = true

		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
		if state != "done" {
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if !regexp.MustCompile(`^P-\d{6}$`).MatchString(pid) || !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString(date) || consent != "yes" {
			t.Errorf("%s: bad identity fields %q %q %q", id, pid, date, consent)
		}
		if hash != sum(data) {
			t.Errorf("%s: manifest sha256 does not match %s", id, path)
		}
		truth := readTruth(t, filepath.Join(dir, "truth", id+".json"))
		if truth.SourceID != id || truth.ParticipantID != pid || truth.ReferralDate != date {
			t.Errorf("%s: truth identity %s %s %s does not match the manifest", id, truth.SourceID, truth.ParticipantID, truth.ReferralDate)
		}
		pages, err := api.PageCount(bytes.NewReader(data), conf)
		if err != nil {
			t.Errorf("%s: counting pages: %v", id, err)
		} else if pages != len(truth.Pages) || pages < 1 || pages > 3 {
			t.Errorf("%s: %d pages in the PDF, %d in the truth", id, pages, len(truth.Pages))
		}
		first := truth.Pages[0].Text
		for _, want := range []string{"Participant ID: " + pid, "Referral date: " + date} {
			if !strings.Contains(first, want) {
				t.Errorf("%s: page 1 truth lacks %q", id, want)
			}
		}
	}
}

// TestBadRows checks each bad input is what its expected reason says.
func TestBadRows(t *testing.T) {
	dir := smallDir
	manifest := readCSV(t, filepath.Join(dir, "manifest.csv"))
	expected := expectations(t, dir)
	rows := map[string][]string{}  // by reason; duplicates under "duplicate"
	first := map[string][]string{} // first row of each source_id
	for i, r := range manifest[1:] {
		key := expected[i][2]
		if expected[i][1] == "duplicate" {
			key = "duplicate"
		}
		if key != "" {
			if _, dup := rows[key]; dup {
				t.Errorf("reason %s appears twice", key)
			}
			rows[key] = r
		}
		if _, ok := first[r[0]]; !ok {
			first[r[0]] = r
		}
	}
	read := func(r []string) ([]byte, error) {
		return os.ReadFile(filepath.Join(dir, filepath.FromSlash(r[4])))
	}
	for _, tc := range []struct {
		reason string
		check  func(r []string) error
	}{
		{"empty_file", func(r []string) error {
			data, err := read(r)
			if err == nil && len(data) != 0 {
				err = errors.New("file is not empty")
			}
			return err
		}},
		{"not_pdf", func(r []string) error {
			data, err := read(r)
			if err == nil && (len(data) == 0 || bytes.HasPrefix(data, []byte("%PDF"))) {
				err = errors.New("file is empty or a PDF")
			}
			return err
		}},
		{"malformed_pdf", func(r []string) error {
			data, err := read(r)
			if err == nil && (!bytes.HasPrefix(data, []byte("%PDF-")) || bytes.Contains(data, []byte("%%EOF"))) {
				err = errors.New("not a truncated PDF")
			}
			return err
		}},
		{"missing_file", func(r []string) error {
			if _, err := read(r); !errors.Is(err, fs.ErrNotExist) {
				return errors.New("file exists")
			}
			return nil
		}},
		{"no_consent", func(r []string) error { return want(r[3] == "no", "consent is "+r[3]) }},
		{"hash_mismatch", func(r []string) error {
			data, err := read(r)
			if err != nil {
				return err
			}
			return want(len(r[5]) == 64 && r[5] != sum(data), "sha256 matches or is malformed")
		}},
		{"path_outside_root", func(r []string) error { return want(strings.HasPrefix(r[4], "../"), "path "+r[4]) }},
		{"missing_field", func(r []string) error { return want(r[1] == "", "participant_id "+r[1]) }},
		{"bad_date", func(r []string) error { return want(r[2] == "2024-02-30", "date "+r[2]) }},
		{"duplicate", func(r []string) error {
			return want(slices.Equal(r, first[r[0]]), "row differs from the first with its source_id")
		}},
		{"conflict", func(r []string) error {
			a, err := read(r)
			if err != nil {
				return err
			}
			return want(r[4] != first[r[0]][4] && sum(a) != first[r[0]][5], "same file as the first row")
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			r, ok := rows[tc.reason]
			if !ok {
				t.Fatal("no row")
			}
			if err := tc.check(r); err != nil {
				t.Error(err)
			}
		})
	}
}

func want(ok bool, msg string) error {
	if ok {
		return nil
	}
	return errors.New(msg)
}

// TestLayoutFits renders many forms at a low DPI: no combination of
// content, paper and type size may overflow a page.
func TestLayoutFits(t *testing.T) {
	if _, err := build(options{Seed: 9, Docs: 60, DPIs: []int{72}}); err != nil {
		t.Fatal(err)
	}
}

func TestImagePDF(t *testing.T) {
	img := image.NewGray(image.Rect(0, 0, 21, 5))
	fill(img, 255)
	for x := 0; x < 21; x += 2 {
		img.Pix[2*img.Stride+x] = 0
	}
	pdf, err := imagePDF([]pdfPage{{Img: img, DPI: 150, Bitonal: true}, {Img: img, DPI: 200}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
		t.Fatal("missing header or trailer")
	}

	t.Run("xref offsets", func(t *testing.T) {
		start := bytes.LastIndex(pdf, []byte("startxref\n"))
		xref, err := strconv.Atoi(strings.Fields(string(pdf[start+len("startxref\n"):]))[0])
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(pdf[xref:]), "\n")
		if lines[0] != "xref" {
			t.Fatalf("startxref points at %q", lines[0])
		}
		n, _ := strconv.Atoi(strings.Fields(lines[1])[1])
		for obj := 1; obj < n; obj++ {
			entry := lines[2+obj]
			if len(entry) != 19 { // 20 bytes with the newline
				t.Errorf("entry %d is %q", obj, entry)
			}
			off, _ := strconv.Atoi(entry[:10])
			if !bytes.HasPrefix(pdf[off:], []byte(strconv.Itoa(obj)+" 0 obj\n")) {
				t.Errorf("object %d is not at offset %d", obj, off)
			}
		}
	})

	t.Run("page size", func(t *testing.T) {
		for _, want := range []string{"/MediaBox [0 0 10.08 2.4]", "/MediaBox [0 0 7.56 1.8]"} {
			if !bytes.Contains(pdf, []byte(want)) {
				t.Errorf("no %s", want)
			}
		}
	})

	t.Run("bitonal stream", func(t *testing.T) {
		i := bytes.Index(pdf, []byte("/BitsPerComponent 1"))
		s := bytes.Index(pdf[i:], []byte("stream\n")) + i + len("stream\n")
		zr, err := zlib.NewReader(bytes.NewReader(pdf[s:]))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		// 21 pixels are 3 bytes a row; row 2 alternates black and white,
		// starting black, so its bits are 0101... with 1 for white and the
		// row padded with zero bits.
		wantRow := []byte{0x55, 0x55, 0x50}
		if len(data) != 15 || !bytes.Equal(data[6:9], wantRow) || data[0] != 0xff || data[2] != 0xf8 {
			t.Errorf("decoded bits = % x", data)
		}
	})

	t.Run("pdfcpu", func(t *testing.T) {
		conf := model.NewDefaultConfiguration()
		conf.ValidationMode = model.ValidationRelaxed
		if err := api.Validate(bytes.NewReader(pdf), conf); err != nil {
			t.Fatal(err)
		}
	})
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // error substring; empty for success
	}{
		{"defaults", []string{"--out", "x"}, ""},
		{"dpi set", []string{"--out", "x", "--dpi-set", "150, 200,200"}, ""},
		{"no out", nil, "--out is required"},
		{"bad dpi", []string{"--out", "x", "--dpi-set", "150,abc"}, "not a DPI"},
		{"dpi too high", []string{"--out", "x", "--dpi-set", "1200"}, "not a DPI"},
		{"negative docs", []string{"--out", "x", "--docs", "-1"}, "--docs"},
		{"bad needs docs", []string{"--out", "x", "--docs", "1", "--bad"}, "at least 2"},
		{"degrade and bad-all", []string{"--out", "x", "--degrade", "--bad-all", "--max-bytes", "3000000"}, ""},
		{"bad-all needs docs", []string{"--out", "x", "--docs", "2", "--bad-all"}, "at least 3"},
		{"max-bytes too small", []string{"--out", "x", "--max-bytes", "1000"}, "--max-bytes"},
		{"hard", []string{"--out", "x", "--hard", "8"}, ""},
		{"hard too many", []string{"--out", "x", "--hard", "100"}, "--hard"},
		{"hard negative", []string{"--out", "x", "--hard", "-1"}, "--hard"},
		{"coverage", []string{"--out", "x", "--coverage", "16", "--faint-ink", "125-195"}, ""},
		{"coverage too many", []string{"--out", "x", "--coverage", "100"}, "--coverage"},
		{"faint ink not a range", []string{"--out", "x", "--faint-ink", "150"}, "--faint-ink"},
		{"faint ink reversed", []string{"--out", "x", "--faint-ink", "190-130"}, "--faint-ink"},
		{"faint ink too light", []string{"--out", "x", "--faint-ink", "130-250"}, "--faint-ink"},
		{"handwriting", []string{"--out", "x", "--handwriting", "12", "--signatures", "4", "--columns", "3", "--hand-dpi-set", "300"}, ""},
		{"handwriting too many", []string{"--out", "x", "--handwriting", "100"}, "--handwriting"},
		{"columns negative", []string{"--out", "x", "--columns", "-1"}, "--columns"},
		{"marks too many", []string{"--out", "x", "--marks", "1000"}, "--marks"},
		{"no such mark family", []string{"--out", "x", "--marks", "3", "--mark-families", "tick,blot"}, "blot"},
		{"bad hand dpi", []string{"--out", "x", "--hand-dpi-set", "300,x"}, "--hand-dpi-set"},
		{"stray argument", []string{"--out", "x", "y"}, "unexpected argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args, io.Discard)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(o.DPIs) == 0 || o.Seed != 1 || o.Docs != 12 {
					t.Errorf("options = %+v", o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestRefusesExistingCorpus(t *testing.T) {
	dir := generate(t, options{Seed: 1, Docs: 1, DPIs: []int{72}})
	err := run(options{Seed: 1, Docs: 1, DPIs: []int{72}, Out: dir})
	if err == nil || !strings.Contains(err.Error(), "already holds a corpus") {
		t.Fatalf("second run into %s: %v", dir, err)
	}
}

func TestCharErrorRate(t *testing.T) {
	for _, tc := range []struct {
		name, want, got string
		cer             float64
	}{
		{"same", "Participant ID", "Participant ID", 0},
		{"whitespace ignored", "a b\nc", " a  b c\n\n", 0},
		{"one substitution", "P-0001", "P-O001", 1.0 / 6},
		{"empty got", "abcd", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := charErrorRate(tc.want, tc.got); got != tc.cer {
				t.Errorf("CER = %v, want %v", got, tc.cer)
			}
		})
	}
}

// expectations reads expected.csv without its header.
func expectations(t *testing.T, dir string) [][]string {
	t.Helper()
	rows := readCSV(t, filepath.Join(dir, "expected.csv"))
	if got := rows[0]; !slices.Equal(got, []string{"source_id", "state", "reason"}) {
		t.Fatalf("expected.csv header = %v", got)
	}
	return rows[1:]
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return rows
}

func readTruth(t *testing.T, path string) truthDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var td truthDoc
	if err := json.Unmarshal(data, &td); err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	return td
}
