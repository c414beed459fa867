package admit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// parser in-process. Each file ends in an unparseable_pdf rejection that
// names the limit that cut it off, the children it cost are dead and
// reaped, the pool answers the next, sound file, and the parent is never
// at risk. Nothing here depends on how fast the machine is: the file that
// overflows the stack is given CPU time to spare, so only the stack cap
// can end it, and the one that never ends is held to its CPU budget by
// the CPU its children used (a loaded machine may starve it into the
// wall-clock backstop first, which is a limit too; it cannot make a child
// use more than its budget).
func TestPoolContainsHostileInput(t *testing.T) {
	good := goodPDF()
	tests := []struct {
		name   string
		budget time.Duration
		data   []byte
		detail []string // one of them, the limits that may cut it off
	}{
		// Each level of nesting is a frame of pdfcpu's parser: a million
		// overflow the child's 16 MiB stack (and, in-process, Go's 1 GB).
		// A crash is tried once more, in a new child.
		{name: "nested arrays", budget: time.Minute,
			data: hostilePDF("<< /Type /Catalog /A " + strings.Repeat("[", 4<<20) + " >>"), detail: []string{"crashed twice"}},
		// Nested dictionaries without white space take pdfcpu time that
		// doubles with each level: 2^40 steps.
		{name: "nested dictionaries", budget: 500 * time.Millisecond,
			data:   hostilePDF("<< /Type /Catalog /A " + strings.Repeat("<</A", 40) + strings.Repeat(">>", 40) + " >>"),
			detail: []string{"used more than 500ms of CPU time", "did not finish in time"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := testPool(t, PoolConfig{Budget: child.Budget{Timeout: tt.budget, TimeoutPerMiB: time.Millisecond}})
			cpu := childrenCPU(t)
			_, err := pool.Inspect(context.Background(), tt.data, DefaultLimits())
			used := childrenCPU(t) - cpu
			r, ok := IsRejection(err)
			if !ok || r.Reason != outcome.UnparseablePDF || !containsAny(r.Detail, tt.detail) {
				t.Fatalf("Inspect: %v; want unparseable_pdf (%s)", err, strings.Join(tt.detail, " or "))
			}
			t.Logf("%v; the children used %v of CPU time", r, used)
			// Each try may overrun the budget by a poll of /proc and the
			// child's own start; a CPU overrun is not tried again.
			if most := 2 * (pool.budget.CPU(len(tt.data)) + 250*time.Millisecond); used > most {
				t.Errorf("the children used %v of CPU time on the file, more than %v", used, most)
			}
			if kids := childProcesses(t); len(kids) != 0 {
				t.Errorf("child processes left after the rejection: %v", kids)
			}
			started := pool.children.Started()
			if _, err := pool.Inspect(context.Background(), good, DefaultLimits()); err != nil {
				t.Fatalf("the pool fails a good file after a hostile one: %v", err)
			}
			if n := pool.children.Started() - started; n != 1 {
				t.Errorf("the good file started %d children; want 1 in place of the dead", n)
			}
		})
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// childrenCPU is the CPU time this process's reaped children have used.
func childrenCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childProcesses lists the processes whose parent is this one, zombies
// included, from /proc.
func childProcesses(t *testing.T) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var kids []string
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // ended meanwhile
		}
		// The command name, field 2, is in parentheses and may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if fields := strings.Fields(string(b[i+1:])); i > 0 && len(fields) > 1 && fields[1] == me {
			kids = append(kids, strings.TrimSuffix(strings.TrimPrefix(f, "/proc/"), "/stat")+" "+fields[0])
		}
	}
	return kids
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
