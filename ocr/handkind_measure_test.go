package ocr

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/ocr/page"
)

// TestMeasureHandKinds reads the letters of a refcorpus corpus in
// process and logs each handwritten region with the cues its kind was
// told by:
//
//	OCR_HANDS=/tmp/corpus OCR_HANDS_IDS=R-0003,R-0007 go test -run TestMeasureHandKinds -v ./ocr
func TestMeasureHandKinds(t *testing.T) {
	dir := os.Getenv("OCR_HANDS")
	if dir == "" {
		t.Skip("set OCR_HANDS to a refcorpus folder to log its regions")
	}
	e := inProcessEngine(t, childConfig{Policy: page.Default()})
	var doc string
	handTrace = func(r handRegion, kind string, rows, strokes int, signed, stamp bool) {
		var ls []string
		for i, l := range r.lines {
			w, even, _ := centreLine(l.comps)
			ang, cv := lineShape(l.comps)
			ls = append(ls, fmt.Sprintf("[%d comps h%.2f j%.2f cov%.2f wan%.3f cw%.2f even%v uni%v ang%.1f cv%.3f]", len(l.comps), r.feats[i].height, r.feats[i].joined, r.feats[i].covered, r.feats[i].wander, w, even, r.feats[i].uniform, ang, cv))
		}
		t.Logf("%s %s box %v rows %d strokes %d signed %v stamp %v lines %s", doc, kind, r.box, rows, strokes, signed, stamp, strings.Join(ls, " "))
		for _, row := range stampRows(r) {
			w, even, ang := centreLine(row)
			var hs []int
			for _, c := range row {
				hs = append(hs, c[3]-c[1])
			}
			slices.Sort(hs)
			iqr := float64(hs[len(hs)*3/4]-hs[len(hs)/4]) / float64(hs[len(hs)/2])
			t.Logf("   stamprow %d wan%.3f even%v ang%.1f iqr%.3f mh%d kind? %s", len(row), w, even, ang, iqr, hs[len(hs)/2], kind)
		}
		if os.Getenv("OCR_HANDS_COMPS") != "" {
			for _, l := range r.lines {
				t.Logf("   comps %v", l.comps)
			}
		}
	}
	defer func() { handTrace = nil }()
	for _, id := range strings.Split(os.Getenv("OCR_HANDS_IDS"), ",") {
		pdf, err := os.ReadFile(filepath.Join(dir, "docs", id+".pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if resp := e.open(pdf); resp.Cause != "" {
			t.Fatalf("%s: %s", id, resp.Err)
		}
		for i := range e.doc.NumPage() {
			doc = fmt.Sprintf("%s p%d", id, i+1)
			resp := e.page(i, 0)
			for _, hr := range resp.Result.HandwritingRegions {
				t.Logf("%s => %s read %v words %d box %v", doc, hr.Kind, hr.Read, hr.Words, hr.Box)
			}
		}
	}
}

// TestMeasureHandWords logs the lines of print a sign-off is looked for
// in (see printLines), and the words read under handConf:
//
//	OCR_HANDS=/tmp/corpus OCR_HANDS_IDS=R-0003 go test -run TestMeasureHandWords -v ./ocr
func TestMeasureHandWords(t *testing.T) {
	dir := os.Getenv("OCR_HANDS")
	if dir == "" {
		t.Skip("set OCR_HANDS")
	}
	e := inProcessEngine(t, childConfig{Policy: page.Default()})
	for _, id := range strings.Split(os.Getenv("OCR_HANDS_IDS"), ",") {
		pdf, _ := os.ReadFile(filepath.Join(dir, "docs", id+".pdf"))
		e.open(pdf)
		resp := e.page(0, 0)
		for _, l := range printLines(resp.Result.Words, float64(resp.Result.DPI)) {
			so, nm, sh := l.signs()
			var ws []string
			for _, w := range l.words {
				ws = append(ws, fmt.Sprintf("%s(%.0f)", w.Text, w.Conf))
			}
			t.Logf("%s line %v signoff %v name %v short %v: %s", id, l.box, so, nm, sh, strings.Join(ws, " "))
		}
		for _, w := range resp.Result.Words {
			if w.Conf < handConf {
				t.Logf("%s low %v %.0f %q", id, w.Box, w.Conf, w.Text)
			}
		}
	}
}

// lineShape is a line's angle in degrees (centreLine's) and its glyphs'
// height spread.
func lineShape(boxes [][4]int) (float64, float64) {
	_, _, angle := centreLine(boxes)
	var hs []float64
	for _, b := range boxes {
		hs = append(hs, float64(b[3]-b[1]))
	}
	m := median(hs)
	lo, hi := len(hs)/5, len(hs)-len(hs)/5
	var ss float64
	for _, h := range hs[lo:hi] {
		ss += (h - m) * (h - m)
	}
	return angle, math.Sqrt(ss/float64(hi-lo)) / m
}
