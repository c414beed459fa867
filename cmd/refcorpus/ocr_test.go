package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gen2brain/go-fitz"
)

// TestOCRReadsIdentity checks that the documents are legible: page 1 of
// each good document, rendered by MuPDF at 300 DPI as refbatch renders
// it, must give Tesseract the participant ID and the referral date. It
// uses the 150 DPI scans, the hardest the generator makes. Set
// REFCORPUS_OCR_DIR to a corpus folder to check every good document there
// instead (slow: a few seconds a page).
func TestOCRReadsIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Tesseract")
	}
	if _, err := exec.LookPath("tesseract"); err != nil {
		t.Skip("tesseract is not installed")
	}
	dir := os.Getenv("REFCORPUS_OCR_DIR")
	if dir == "" {
		dir = t.TempDir()
		if err := run(options{Seed: 7, Docs: 3, DPIs: []int{150}, Out: dir}); err != nil {
			t.Fatal(err)
		}
	}
	rows := readCSV(t, filepath.Join(dir, "expected.csv"))
	var totalCER float64
	var pages int
	for _, r := range rows[1:] {
		if r[1] != "done" {
			continue
		}
		id := r[0]
		t.Run(id, func(t *testing.T) {
			truth := readTruth(t, filepath.Join(dir, "truth", id+".json"))
			pdf, err := os.ReadFile(filepath.Join(dir, "docs", id+".pdf"))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := fitz.NewFromMemory(pdf)
			if err != nil {
				t.Fatal(err)
			}
			defer doc.Close()
			// Every page when checking a given corpus; page 1, which holds
			// the identity lines, otherwise.
			n := 1
			if os.Getenv("REFCORPUS_OCR_DIR") != "" {
				n = doc.NumPage()
			}
			for p := range n {
				text := tesseract(t, doc, p)
				if p == 0 {
					for _, want := range []string{"Participant ID: " + truth.ParticipantID, "Referral date: " + truth.ReferralDate} {
						if !strings.Contains(text, want) {
							// The text is synthetic, so showing how it was
							// misread is allowed; real text is never logged.
							t.Errorf("OCR text lacks %q; got:\n%s", want, text)
						}
					}
				}
				tp := truth.Pages[p]
				cer := charErrorRate(tp.Text, text)
				t.Logf("%s page %d: %d DPI, %s %.1f pt, bitonal %v, skew %.1f°, CER %.3f", id, p+1, truth.DPI, truth.BodyFont, truth.BodyPt, tp.Bitonal, tp.SkewDegrees, cer)
				totalCER += cer
				pages++
			}
		})
	}
	if pages > 0 {
		t.Logf("mean CER over %d pages: %.3f", pages, totalCER/float64(pages))
	}
}

// tesseract renders page p of doc at 300 DPI, as refbatch does by default,
// and returns what the tesseract command reads on it.
func tesseract(t *testing.T, doc *fitz.Document, p int) string {
	t.Helper()
	png, err := doc.ImagePNG(p, 300)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "page.png")
	if err := os.WriteFile(in, png, 0o600); err != nil {
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
