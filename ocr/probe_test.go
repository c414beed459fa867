package ocr

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/probe"
)

// TestProbePage: a fresh worker reads the probe page, from its layer or by
// recognising it, with the probe's words.
func TestProbePage(t *testing.T) {
	t.Parallel()
	w := startWorker(t, testConfig(t, 100))
	ctx := context.Background()
	n, err := w.Open(ctx, probe.PDF)
	if err != nil || n != 1 {
		t.Fatalf("Open = %d, %v; want 1 page", n, err)
	}
	start := time.Now()
	res, err := w.Page(ctx, 0, 0, time.Minute)
	if err != nil {
		t.Fatalf("Page: %v", err)
	}
	if !strings.Contains(strings.ToLower(res.Text), "quick brown fox") {
		t.Errorf("probe page read as %q", res.Text)
	}
	t.Logf("probe page: %s, %d words, %v", res.TextSource, len(res.Words), time.Since(start).Round(time.Millisecond))
}

// TestLayerOverBoundIsIgnored: a page whose text layer holds more than
// maxLayerBytes, here the page's own lines followed by invisible filler,
// is recognised instead; under the bound, the same page's layer is used.
func TestLayerOverBoundIsIgnored(t *testing.T) {
	t.Parallel()
	w := startWorker(t, testConfig(t, 100))
	ctx := context.Background()
	for _, tc := range []struct {
		filler int
		want   string
	}{{0, TextFromLayer}, {maxLayerBytes, TextFromOCR}} {
		n, err := w.Open(ctx, layerPDF(tc.filler))
		if err != nil || n != 1 {
			t.Fatalf("Open = %d, %v; want 1 page", n, err)
		}
		res, err := w.Page(ctx, 0, 0, time.Minute)
		if err != nil {
			t.Fatalf("filler %d: Page: %v", tc.filler, err)
		}
		if res.TextSource != tc.want {
			t.Errorf("filler %d bytes: text from %s, want %s", tc.filler, res.TextSource, tc.want)
		}
	}
}

// layerPDF is the probe page's lines, followed by filler bytes of invisible
// "a " (text render mode 3): in the layer, not on the page.
func layerPDF(filler int) []byte {
	var c bytes.Buffer
	c.WriteString("BT /F1 16 Tf 20 TL 72 760 Td\n")
	for _, l := range probe.Lines {
		fmt.Fprintf(&c, "(%s) Tj T*\n", l)
	}
	c.WriteString("ET\nBT 3 Tr /F1 1 Tf 72 72 Td\n")
	for range filler / 1000 {
		c.WriteString("(" + strings.Repeat("a ", 500) + ") Tj\n")
	}
	c.WriteString("ET\n")
	return probe.OnePagePDF(c.Bytes())
}
