package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/batchtest"
	"github.com/refbatch/refbatch/ocr/probe"
)

// These tests hold refbatch to its promise that documents that break the
// engines cost their own rows, never the batch: a run of them in a row is
// not taken for broken engines, and no document holds the workers past its
// time budget.

// pdfFile writes a PDF of the given objects (numbered from 1, the first
// the catalog) with its cross-reference table.
func pdfFile(objs ...string) []byte { return probe.ClassicPDF(objs...) }

// deflated is a stream object holding content, compressed.
func deflated(content []byte) string { return batchtest.Deflated(content) }

// textBomb is a one-page PDF of a few KB whose text layer claims about
// layer bytes of text: four lines of print anyone reads, and under them,
// invisible (text render mode 3), "a " over and over. The visible lines
// are the layer's words, so the layer rule believed the layer; its words,
// millions of them, made the worker's answer larger than the parent
// accepts, and the parent killed the worker: a crash, on every attempt.
// seed makes each file's bytes its own.
func textBomb(seed, layer int) []byte {
	var c bytes.Buffer
	c.WriteString("BT /F1 18 Tf 24 TL 72 700 Td\n")
	for _, l := range []string{
		fmt.Sprintf("Referral letter %d for the outpatient clinic", seed),
		"The quick brown fox jumps over the lazy dog",
		"Please see the patient next week about the results",
		"Kind regards from the general practice team",
	} {
		fmt.Fprintf(&c, "(%s) Tj T*\n", l)
	}
	c.WriteString("ET\nBT 3 Tr /F1 1 Tf 72 72 Td\n")
	chunk := "(" + strings.Repeat("a ", 500) + ") Tj\n"
	for range layer / 1000 {
		c.WriteString(chunk)
	}
	c.WriteString("ET\n")
	return pdfFile(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		deflated(c.Bytes()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	)
}

// slowForms is a PDF of pages pages, each drawing one form XObject that
// costs a render of fan^3 fills: the form draws a form fan times, which
// draws a form fan times, which fills a square fan times, all on one spot
// (the page stays white, so the reading after the render is quick). The
// pages share the forms, so the file stays a few KB however slow it is.
func slowForms(pages, fan int) []byte {
	repeat := func(op string) string {
		return strings.Repeat(op, fan)
	}
	const first = 3 // objects 1 and 2 are the catalog and the page tree
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	formObj := first + pages + 1 // the page content stream is object first+pages
	var kids []string
	for i := range pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", first+i))
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /X %d 0 R >> >> /Contents %d 0 R >>", formObj, first+pages))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages)
	objs = append(objs, deflated([]byte("q /X Do Q\n")))
	form := func(body string, next int) string {
		res := ""
		if next > 0 {
			res = fmt.Sprintf(" /Resources << /XObject << /X %d 0 R >> >>", next)
		}
		var z bytes.Buffer
		w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
		w.Write([]byte(body))
		w.Close()
		return fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 612 792]%s /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", res, z.Len(), z.Bytes())
	}
	objs = append(objs,
		form(repeat("/X Do\n"), formObj+1),
		form(repeat("/X Do\n"), formObj+2),
		form("1 g "+repeat("300 400 2 2 re f\n"), 0),
	)
	return pdfFile(objs...)
}

// writeFile writes b at dir/name and returns its path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tinyReferral is a good document as cheap as one can be
// (batchtest.TinyReferral): read at 100 dpi in a fraction of a second.
// seed makes each file's bytes its own.
func tinyReferral(seed int, id, date string) []byte { return batchtest.TinyReferral(seed, id, date) }

// tinyRow writes tinyReferral(seed) into dir and returns its manifest row.
func tinyRow(t *testing.T, dir, sourceID string, seed int) [4]string {
	t.Helper()
	id, date := fmt.Sprintf("P-%06d", 100000+seed), "2024-03-14"
	return [4]string{sourceID, id, date, writeFile(t, dir, sourceID+".pdf", tinyReferral(seed, id, date))}
}

// cheapRun is run's arguments for these tests, whose good documents are
// tiny referrals: tinyReading, no cascade, the rest as given.
func cheapRun(out string, extra ...string) []string {
	args := append([]string{"run", "--plaintext", "--out", out, "--no-cascade"}, tinyReading...)
	return append(args, extra...)
}

// TestFiveTextBombsDoNotStopTheBatch is issue 28's first failure: five
// different small PDFs whose text layers claim megabytes of text each
// crashed their workers (the answer over the size the parent accepts), and
// after the fifth in a row the breaker took the engines for broken: exit
// 1, the last good row still queued. Now a layer larger than any page
// shows is not considered (the page is read instead), and documents
// failing in a row only make the run probe the engines.
func TestFiveTextBombsDoNotStopTheBatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := [][4]string{tinyRow(t, dir, "G-0", 0)}
	for i := range 5 {
		// 7 MB of layer: the smallest that was over the answer's cap
		// (the report's files claimed 10 MB); admission now refuses a
		// stream showing over 2 MiB of text. The last two claim 1.5 MB:
		// admitted, their layers are left unconsidered by the workers.
		layer := 7_000_000
		if i >= 3 {
			layer = 1_500_000
		}
		p := writeFile(t, dir, fmt.Sprintf("bomb-%d.pdf", i), textBomb(i, layer))
		rows = append(rows, [4]string{fmt.Sprintf("B-%d", i), "P-000000", "2024-01-01", p})
	}
	rows = append(rows, tinyRow(t, dir, "G-1", 1))
	out := filepath.Join(dir, "out")
	// One worker: the bombs come one after another, as in the report.
	r := refbatch(t, nil, cheapRun(out, "--workers", "1", writeRows(t, dir, rows))...)
	if r.code != 0 && r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d, want 0 or 4\n%s", r.code, lastLines(r.stderr, 10))
	}
	states := rowStates(t, out)
	for _, g := range []string{"G-0", "G-1"} {
		if states[g] != "done/" {
			t.Errorf("good row %s: %s, want done", g, states[g])
		}
	}
	for i := range 5 {
		id := fmt.Sprintf("B-%d", i)
		want := "rejected/malformed_pdf"
		if i >= 3 {
			want = "done or review"
		}
		if st := states[id]; (i < 3 && st != want) || (i >= 3 && !strings.HasPrefix(st, "done/") && !strings.HasPrefix(st, "review/")) {
			t.Errorf("%s: %s, want %s", id, st, want)
		} else {
			t.Logf("%s: %s", id, st)
		}
	}
	t.Logf("five text bombs between two good rows: exit %d in %v (%s)", r.code, r.elapsed.Round(time.Millisecond), runCost(r.stderr))
}

// TestTenCrashersInARow is issue 28's acceptance 3: ten documents that
// crash, kill or fail their engines in different ways, in a row between
// good ones. Each costs its one attempt (--attempts 1: each attempt of a
// crasher is a worker started again, with its Tesseract, and batch's
// TestFaults holds the retries of a crashing document) and goes to
// review; the engines read the probe page, so the run goes on and every
// good row is done.
func TestTenCrashersInARow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rows := [][4]string{tinyRow(t, dir, "G-0", 0)}
	kinds := []string{"crash", "hugereply", "transient9", "crash", "alloc", "hugereply", "crash", "transient9", "crash", "hugereply"}
	var faults []string
	for i, kind := range kinds {
		row := tinyRow(t, dir, fmt.Sprintf("C-%d", i), 10+i)
		rows = append(rows, row)
		faults = append(faults, kind+"="+faultKey(t, row[3]))
	}
	rows = append(rows, tinyRow(t, dir, "G-1", 1), tinyRow(t, dir, "G-2", 2))
	out := filepath.Join(dir, "out")
	// 2 GiB of address space lets the runaway allocation start (an idle
	// worker reserves about 1.3 GiB) and stops it sooner than the default.
	r := refbatch(t, []string{"REFBATCH_TEST_FAULTS=" + strings.Join(faults, ";")},
		cheapRun(out, "--attempts", "1", "--worker-memory", "2GiB", writeRows(t, dir, rows))...)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d, want 4\n%s", r.code, lastLines(r.stderr, 10))
	}
	states := rowStates(t, out)
	for _, g := range []string{"G-0", "G-1", "G-2"} {
		if states[g] != "done/" {
			t.Errorf("good row %s: %s, want done", g, states[g])
		}
	}
	for i, kind := range kinds {
		if st := states[fmt.Sprintf("C-%d", i)]; st != "review/attempts_exhausted" {
			t.Errorf("C-%d (%s): %s, want review/attempts_exhausted", i, kind, st)
		}
	}
	if !strings.Contains(r.stderr, "reads the probe page") {
		t.Errorf("the run never probed the engines:\n%s", lastLines(r.stderr, 10))
	}
	t.Logf("ten crashers between good rows: exit %d in %v (%s)", r.code, r.elapsed.Round(time.Millisecond), runCost(r.stderr))
}

// TestSlowPagesStopAtTheDocumentBudget is issue 28's fourth failure: a
// small file of 200 pages, each drawing forms that take a while to
// render but less than the page deadline, held a worker for half an hour,
// the document deadline being off by default. Now every document has a
// time budget from its page count: the page timeout, plus a twentieth of
// it per page, counted in the engines' time on its pages. The test scales
// it down: 25 pages that each take 0.6 s under --page-timeout 3s (a
// budget of 6.75 s, which a page begun earns a share of); the document
// ends in review timeout, stopped at its budget after about seven pages,
// while the other rows are done. The pages are slow by the engine's own
// test fault (slow600ms on this file: each page sleeps first) rather than
// by a costly render: the budget counts the engines' time whatever fills
// it, and a sleep fills it without the CPU a render burns, and without a
// loaded machine stretching a page past its timeout, so the test runs
// beside the others. testdata/admit/budget/slow-forms.pdf, the render that
// really takes seconds a page, is make bench-hostile's.
func TestSlowPagesStopAtTheDocumentBudget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// slowForms at a fan of 1: a file of 25 pages as small as the slow
	// one, each a white page quick to draw.
	slow := writeFile(t, dir, "slow-pages.pdf", slowForms(25, 1))
	rows := [][4]string{tinyRow(t, dir, "G-0", 0), {"S-0", "P-000000", "2024-01-01", slow}, tinyRow(t, dir, "G-1", 1)}
	out := filepath.Join(dir, "out")
	r := refbatch(t, []string{"REFBATCH_TEST_FAULTS=slow600ms=" + faultKey(t, slow)},
		cheapRun(out, "--page-timeout", "3s", writeRows(t, dir, rows))...)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d, want 4\n%s", r.code, lastLines(r.stderr, 10))
	}
	states := rowStates(t, out)
	for _, g := range []string{"G-0", "G-1"} {
		if states[g] != "done/" {
			t.Errorf("good row %s: %s, want done", g, states[g])
		}
	}
	if st := states["S-0"]; st != "review/timeout" {
		t.Errorf("the slow document: %s, want review/timeout", st)
	}
	if !strings.Contains(r.stderr, "over its time budget") {
		t.Errorf("the slow document was not stopped at its budget:\n%s", lastLines(r.stderr, 10))
	}
	t.Logf("%d-byte file of 25 slow pages: exit %d in %v (%s)", fileSize(t, slow), r.code, r.elapsed.Round(time.Millisecond), runCost(r.stderr))
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// runCost is the wall and CPU time the run's last log line reports.
func runCost(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if _, rest, ok := strings.Cut(l, `msg="run ended" `); ok {
			return rest
		}
	}
	return "no end of run logged"
}
