package main

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gen2brain/go-fitz"
)

// TestOCRReadsIdentity checks that the documents are legible: page 1 of
// each good document, rendered by MuPDF at 300 DPI as refbatch renders
// it, must give Tesseract the participant ID and the referral date. It
// uses the 150 DPI scans, the hardest plain scans the generator makes.
//
// Set REFCORPUS_OCR_DIR to a corpus folder to read every page of every
// document expected done there instead (slow: a few seconds a page), and
// log each page's character error rate, their mean, median and p95, and
// the mean by page kind for --degrade corpora. The documents expected
// review low_confidence (those of --hard) are read too, and logged by
// kind, but left out of the mean, median and p95. There, a missed identity
// fails only on plain scans: a --degrade page may be turned or skewed past
// what Tesseract reads without help, and the log says which.
func TestOCRReadsIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Tesseract")
	}
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract is not installed")
	}
	dir := os.Getenv("REFCORPUS_OCR_DIR")
	every := dir != ""
	if !every {
		dir = t.TempDir()
		if err := run(options{Seed: 7, Docs: 3, DPIs: []int{150}, Out: dir}); err != nil {
			t.Fatal(err)
		}
	}
	rows := readCSV(t, filepath.Join(dir, "expected.csv"))
	paths := manifestPaths(t, dir)
	var cers []float64
	byKind := map[string][]float64{}
	seen := map[string]bool{}
	for i, r := range rows[1:] {
		id := r[0]
		lowConf := r[1] == "review" && r[2] == "low_confidence"
		if r[1] != "done" && !lowConf || seen[id] {
			continue
		}
		seen[id] = true
		t.Run(id, func(t *testing.T) {
			truth := readTruth(t, filepath.Join(dir, "truth", id+".json"))
			pdf, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(paths[i])))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := fitz.NewFromMemory(pdf)
			if err != nil {
				t.Fatal(err)
			}
			defer doc.Close()
			n := 1
			if every {
				n = doc.NumPage()
			}
			for p := range n {
				text := tesseract(t, doc, p)
				tp := truth.Pages[p]
				if p == 0 {
					for _, want := range []string{"Participant ID: " + truth.ParticipantID, "Referral date: " + truth.ReferralDate} {
						if strings.Contains(text, want) {
							continue
						}
						// The text is synthetic, so showing how it was
						// misread is allowed; real text is never logged.
						if tp.Scan == nil {
							t.Errorf("OCR text lacks %q; got:\n%s", want, text)
						} else {
							t.Logf("OCR text lacks %q", want)
						}
					}
				}
				kind, how := "plain", fmt.Sprintf("%d DPI, %s %.1f pt, bitonal %v", truth.DPI, truth.BodyFont, truth.BodyPt, tp.Bitonal)
				if s := tp.Scan; s != nil {
					kind, how = s.Kind, fmt.Sprintf("%s %d DPI, turned %d+%d, stamp %q", s.Kind, s.DPI, s.Rotation, s.RotateEntry, s.Stamp)
				}
				if tp.Text == "" {
					t.Logf("%s page %d: blank, read %d words", id, p+1, len(strings.Fields(text)))
					continue
				}
				cer := charErrorRate(tp.Text, text)
				t.Logf("%s page %d: %s, skew %.1f°, CER %.3f", id, p+1, how, tp.SkewDegrees, cer)
				if !lowConf {
					cers = append(cers, cer)
				}
				byKind[kind] = append(byKind[kind], cer)
			}
		})
	}
	if len(cers) == 0 {
		return
	}
	mean := func(v []float64) float64 {
		var s float64
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	slices.Sort(cers)
	t.Logf("CER over %d pages with text: mean %.3f, median %.3f, p95 %.3f",
		len(cers), mean(cers), cers[len(cers)/2], cers[min(len(cers)-1, int(math.Ceil(0.95*float64(len(cers))))-1)])
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		t.Logf("  %-12s %2d pages, mean CER %.3f", k, len(byKind[k]), mean(byKind[k]))
	}
}

// tesseract renders page p of doc at 300 DPI, as refbatch does by default,
// turns it grey as refbatch does (Tesseract reads some colour pages far
// worse than their grey rendering), and returns what the tesseract command
// reads on it.
func tesseract(t *testing.T, doc *fitz.Document, p int) string {
	t.Helper()
	img, err := doc.ImageDPI(p, 300)
	if err != nil {
		t.Fatal(err)
	}
	g := image.NewGray(img.Bounds())
	for i := range g.Pix {
		r, gr, b := int(img.Pix[4*i]), int(img.Pix[4*i+1]), int(img.Pix[4*i+2])
		g.Pix[i] = uint8((299*r + 587*gr + 114*b + 500) / 1000)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, g); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "page.png")
	if err := os.WriteFile(in, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("tesseract", in, "stdout")
	cmd.Env = append(os.Environ(), "OMP_THREAD_LIMIT=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tesseract: %v", err)
	}
	return string(out)
}

// charErrorRate is the edit distance between want and got, both with runs
// of white space collapsed to one space, divided by want's length.
func charErrorRate(want, got string) float64 {
	a := []rune(strings.Join(strings.Fields(want), " "))
	b := []rune(strings.Join(strings.Fields(got), " "))
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(b)]) / float64(max(1, len(a)))
}
