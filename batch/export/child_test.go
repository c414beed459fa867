package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/ocr/result"
)

// testRenderer is a Renderer whose children are this test binary in its
// export child mode, closed with the test.
func testRenderer(t *testing.T, cfg RendererConfig) *Renderer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path, cfg.Env = exe, append(cfg.Env, "EXPORT_TEST_CHILD=render")
	r := NewRenderer(cfg)
	t.Cleanup(func() { r.Close() })
	return r
}

// samplePages returns the sample's first document and made-up OCR pages
// for each of its pages.
func samplePages(t *testing.T) ([]byte, []result.PageResult) {
	t.Helper()
	src, err := os.ReadFile("../../testdata/sample/docs/R-0001.pdf")
	if err != nil {
		t.Fatal(err)
	}
	frames, err := ReadFrames(src)
	if err != nil {
		t.Fatal(err)
	}
	pages := make([]result.PageResult, len(frames))
	for i := range pages {
		pages[i] = testPages()[0]
		pages[i].Index = i
	}
	return src, pages
}

// TestRendererMatchesInProcess: the child makes the same bytes and frames
// as the functions it runs, and only the frames when no PDF is asked for.
func TestRendererMatchesInProcess(t *testing.T) {
	if _, err := glyphlessTTF(); err != nil {
		t.Skip(err)
	}
	r := testRenderer(t, RendererConfig{})
	src, pages := samplePages(t)
	meta := testProvenance()
	opt := PDFOptions{PDFA: true, Title: "a title"}
	want, notPDFA, err := SearchablePDF(src, pages, meta, opt)
	if err != nil {
		t.Fatal(err)
	}
	frames, _ := ReadFrames(src)
	got, err := r.Render(context.Background(), src, pages, meta, &opt)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if got.NotPDFA != notPDFA {
		t.Errorf("the child says %q of PDF/A, in process %q", got.NotPDFA, notPDFA)
	}
	if !bytes.Equal(got.PDF, want) || !slices.Equal(got.Frames, frames) {
		t.Errorf("the child's PDF (%d bytes) or frames %v differ from the in-process ones (%d bytes, %v)", len(got.PDF), got.Frames, len(want), frames)
	}
	got, err = r.Render(context.Background(), src, pages, meta, nil)
	if err != nil || got.PDF != nil || !slices.Equal(got.Frames, frames) {
		t.Errorf("frames only: %v, %d PDF bytes, frames %v", err, len(got.PDF), got.Frames)
	}
}

// TestRendererContainsFailures: what crashes, stalls, fills or fails the
// child is a *RenderError that says how, without the parser's message;
// the next document is rendered by a new child.
func TestRendererContainsFailures(t *testing.T) {
	if _, err := glyphlessTTF(); err != nil {
		t.Skip(err)
	}
	src, pages := samplePages(t)
	// Documents are known to the faults by their source's SHA-256.
	hung, filled := strings.Repeat("1", 64), strings.Repeat("2", 64)
	env := []string{FaultsEnv + "=hang=" + hung[:8] + ";alloc=" + filled[:8]}
	r := testRenderer(t, RendererConfig{Budget: child.Budget{Timeout: 200 * time.Millisecond, Memory: 200 << 20}, Command: child.Command{Env: env}})
	// The child's CPU limit follows the timeout: on a loaded machine, 200
	// ms of CPU can run out before the allocation reaches the memory
	// limit, so the memory case has time enough to fill it.
	roomy := testRenderer(t, RendererConfig{Budget: child.Budget{Timeout: 10 * time.Second, Memory: 200 << 20}, Command: child.Command{Env: env}})
	// Each level of nesting is a frame of pdfcpu's parser: a million
	// overflow the child's 16 MiB stack.
	nested := []byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog /A " + strings.Repeat("[", 4<<20) + " >>\nendobj\n")
	nested = fmt.Appendf(nested, "xref\n0 2\n0000000000 65535 f \n0000000009 00000 n \ntrailer\n<< /Size 2 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(nested))
	tests := []struct {
		name   string
		r      *Renderer
		src    []byte
		sha    string
		reason string
	}{
		{"stack overflow", r, nested, "", "the PDF child crashed twice"},
		{"hang", r, src, hung, "the PDF child did not finish in time twice"},
		{"memory", roomy, src, filled, "the PDF child ran out of memory"},
		{"not a PDF", r, []byte("%PDF-1.7\n(secret words) garbage"), "", "reading the source PDF failed (pdfcpu's message is not kept"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			meta := testProvenance()
			meta.SourceSHA256 = tc.sha
			start := time.Now()
			_, err := r.Render(context.Background(), tc.src, pages, meta, &PDFOptions{})
			var re *RenderError
			if !errors.As(err, &re) || !strings.Contains(re.Reason, tc.reason) || strings.Contains(re.Reason, "secret") {
				t.Fatalf("Render: %v; want a RenderError %q", err, tc.reason)
			}
			t.Logf("%v in %v", re, time.Since(start).Round(time.Millisecond))
			if _, err := r.Render(context.Background(), src, pages, testProvenance(), &PDFOptions{}); err != nil {
				t.Fatalf("a good document after it: %v", err)
			}
		})
	}
}

// TestRendererCancel: a cancelled context ends a render at once and is
// not a RenderError.
func TestRendererCancel(t *testing.T) {
	src, pages := samplePages(t)
	r := testRenderer(t, RendererConfig{Budget: child.Budget{Timeout: time.Hour}, Command: child.Command{Env: []string{FaultsEnv + "=hang=*"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.Render(ctx, src, pages, testProvenance(), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Render: %v; want the context's error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func (f PageFrame) String() string {
	return fmt.Sprintf("%gx%g@%d", f.Width, f.Height, f.Rotate)
}
