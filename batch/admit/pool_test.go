package admit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/ocr/child"
	"github.com/refbatch/refbatch/report/outcome"
)

// hostilePDF wraps body as object 1 of a PDF whose trailer names it as
// the catalog, so that pdfcpu parses it.
func hostilePDF(body string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	off := b.Len()
	fmt.Fprintf(&b, "1 0 obj\n%s\nendobj\n", body)
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 2\n0000000000 65535 f \n%010d 00000 n \ntrailer\n<< /Size 2 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", off, xref)
	return b.Bytes()
}

// TestPoolContainsHostileInput feeds the pool what crashes or stalls a
// parser in-process: each ends in an unparseable_pdf rejection, the pool
// keeps working, and the parent neither crashes nor waits past the
// deadlines.
func TestPoolContainsHostileInput(t *testing.T) {
	pool := testPool(t, PoolConfig{Budget: child.Budget{Timeout: 500 * time.Millisecond, TimeoutPerMiB: time.Millisecond}})
	good := goodPDF()
	tests := []struct {
		name   string
		data   []byte
		detail string
	}{
		// Each level of nesting is a frame of pdfcpu's parser: a million
		// overflow the child's 16 MiB stack (and, in-process, Go's 1 GB).
		{name: "nested arrays", data: hostilePDF("<< /Type /Catalog /A " + strings.Repeat("[", 4<<20) + " >>"), detail: "crashed"},
		// Nested dictionaries without white space take pdfcpu time that
		// doubles with each level.
		{name: "nested dictionaries", data: hostilePDF("<< /Type /Catalog /A " + strings.Repeat("<</A", 40) + strings.Repeat(">>", 40) + " >>"), detail: "of CPU time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := pool.Inspect(context.Background(), tt.data, DefaultLimits())
			r, ok := IsRejection(err)
			if !ok || r.Reason != outcome.UnparseablePDF || !strings.Contains(r.Detail, tt.detail) {
				t.Fatalf("Inspect: %v; want unparseable_pdf (%s)", err, tt.detail)
			}
			t.Logf("%v in %v", r, time.Since(start).Round(time.Millisecond))
			if _, err := pool.Inspect(context.Background(), good, DefaultLimits()); err != nil {
				t.Fatalf("the pool fails a good file after a hostile one: %v", err)
			}
		})
	}
}

// TestPoolCancel: a cancelled context ends an inspection at once, kills
// its child, and is not a rejection.
func TestPoolCancel(t *testing.T) {
	pool := testPool(t, PoolConfig{Budget: child.Budget{Timeout: time.Hour}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := pool.Inspect(ctx, hostilePDF("<< /Type /Catalog /A "+strings.Repeat("<</A", 40)+strings.Repeat(">>", 40)+" >>"), DefaultLimits())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Inspect: %v; want the context's error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}
}
