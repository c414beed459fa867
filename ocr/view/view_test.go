package view

import (
	"bytes"
	"context"
	"errors"
	"image/jpeg"
	"os"
	"testing"

	"github.com/refbatch/refbatch/ocr/child"
)

// The test binary doubles as the view child: testPool's children
// re-execute it with VIEW_TEST_CHILD=1.
func TestMain(m *testing.M) {
	if os.Getenv("VIEW_TEST_CHILD") == "1" {
		os.Exit(ServeMain())
	}
	os.Exit(m.Run())
}

// TestRenderInChild renders a page of the sample in a real view child,
// twice from the source it keeps open, and refuses what is not a PDF.
func TestRenderInChild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := NewPool(Config{Command: child.Command{Path: exe, Env: []string{"VIEW_TEST_CHILD=1"}}, Children: 1})
	defer p.Close()
	src, err := os.ReadFile("../../testdata/sample/docs/R-0001.pdf")
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	source := func() ([]byte, error) { sent++; return src, nil }
	for _, rotate := range []int{0, 90} {
		img, err := p.Render(context.Background(), "r1", source, 0, 400, Geometry{Rotate: rotate})
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(img.JPEG))
		if err != nil || cfg.Width != img.Width || img.Width != 400 || img.Pages < 1 {
			t.Fatalf("rendered %dx%d of %d pages (%v), JPEG %+v", img.Width, img.Height, img.Pages, err, cfg)
		}
	}
	if sent != 1 {
		t.Errorf("the source was sent %d times; want once", sent)
	}
	_, err = p.Render(context.Background(), "junk", func() ([]byte, error) { return []byte("not a PDF"), nil }, 0, 400, Geometry{})
	var re *RenderError
	if !errors.As(err, &re) {
		t.Errorf("Render of junk: %v; want a RenderError", err)
	}
}
