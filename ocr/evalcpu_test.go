package ocr

import (
	"github.com/otiai10/gosseract/v2"

	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/page"
)

// TestMeasureEvalCPU reads the evaluation corpus's first rows in process,
// each page's CPU time measured on the engine's thread.
//
//	OCR_MEASURE=1 OMP_THREAD_LIMIT=1 go test -run TestMeasureEvalCPU -v ./ocr
//
// OCR_MEASURE_ROWS (default 40) sets how many rows.
func TestMeasureEvalCPU(t *testing.T) {
	if os.Getenv("OCR_MEASURE") == "" {
		t.Skip("set OCR_MEASURE=1 to measure the eval corpus's CPU")
	}
	rows := 40
	if s := os.Getenv("OCR_MEASURE_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	dir := filepath.Join("..", "testdata", "eval")
	f, err := os.Open(filepath.Join(dir, "manifest.csv"))
	if err != nil {
		t.Fatal(err)
	}
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	e := inProcessEngine(t, childConfig{Policy: page.Default()})
	if vars := os.Getenv("OCR_MEASURE_VARS"); vars != "" {
		for v := range strings.SplitSeq(vars, ",") {
			name, value, _ := strings.Cut(v, "=")
			if err := e.tess.SetVariable(gosseract.SettableVariable(name), value); err != nil {
				t.Fatal(err)
			}
		}
	}
	var edits, chars float64
	var total time.Duration
	pages := 0
	for _, r := range recs[1:min(len(recs), rows+1)] {
		if len(r) < 5 {
			continue
		}
		pdf, err := os.ReadFile(filepath.Join(dir, r[4]))
		if err != nil || len(pdf) > 2000000 {
			continue
		}
		if resp := e.open(pdf); resp.Cause != "" {
			t.Logf("%s: %s", r[0], resp.Err)
			continue
		}
		var truth struct {
			Pages []struct {
				Text string `json:"text"`
			} `json:"pages"`
		}
		if b, err := os.ReadFile(filepath.Join(dir, "truth", r[0]+".json")); err == nil {
			_ = json.Unmarshal(b, &truth)
		}
		for i := range e.doc.NumPage() {
			passes := e.passes
			cpu := threadCPU(t)
			resp := e.page(i, 0)
			cpu = threadCPU(t) - cpu
			total += cpu
			pages++
			p := resp.Result
			rec, hand := "", 0
			if p.Recovery != nil {
				rec = strconv.Itoa(p.Recovery.Added)
			}
			for range p.HandwritingRegions {
				hand++
			}
			if dump := os.Getenv("OCR_MEASURE_DUMP"); dump != "" {
				var sb strings.Builder
				for _, w := range p.Words {
					fmt.Fprintf(&sb, "%v %.2f %q\n", w.Box, w.Conf, w.Text)
				}
				fmt.Fprintf(&sb, "---\n%s\n", p.Text)
				if err := os.WriteFile(filepath.Join(dump, fmt.Sprintf("%s-p%d.txt", r[0], i+1)), []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rate := -1.0
			if i < len(truth.Pages) {
				rate = cer(truth.Pages[i].Text, p.Text)
				n := float64(len([]rune(strings.Join(strings.Fields(truth.Pages[i].Text), " "))))
				edits += rate * n
				chars += n
			}
			t.Logf("%s p%d passes %d rot %d cer %.4f cpu %5dms dpi %d unc1 %.3f unc %.3f rec %s cols %d reread %d hand %d src %s err %s",
				r[0], i+1, e.passes-passes, p.Rotation, rate, cpu.Milliseconds(), p.DPI, p.UncoveredFirst, p.UncoveredShare, rec, p.Columns, p.ColumnsReread, hand, p.TextSource, resp.Err)
		}
	}
	t.Logf("total %d pages, %v CPU, %.3f s/page, overall CER %.4f", pages, total, total.Seconds()/float64(pages), edits/max(1, chars))
}
