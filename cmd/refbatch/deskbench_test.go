package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/refbatch/refbatch/ocr/probe"
)

// BenchmarkDesk measures the review desk as a person uses it (make
// bench-desk): a headless Chromium opens the desk on a batch of 300 dpi
// Letter scans and multi-page sample documents and views 50 pages. It
// reports how long a page not rendered before takes to be on screen,
// how long the next document takes when the desk preloaded it, the desk's
// peak resident memory, and the files created meanwhile under the output
// folder (the journal's own aside), the desk's temp folder and its working
// folder, which must be none. It is a measurement, not a timed test: run
// it with -benchtime 1x.
func BenchmarkDesk(b *testing.B) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("chromium is not installed")
	}
	dir := b.TempDir()
	out := deskBenchBatch(b, dir)
	work, tmp := filepath.Join(dir, "work"), filepath.Join(dir, "tmp")
	for _, d := range []string{work, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	before := map[string]string{out: listFiles(b, out), tmp: listFiles(b, tmp), work: listFiles(b, work)}

	cmd := exec.Command(binary, "desk", "--out", out)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGINT)
	lines := bufio.NewReader(stdout)
	url, _ := lines.ReadString('\n')
	code, _ := lines.ReadString('\n')
	d := &deskProc{URL: strings.TrimSuffix(strings.TrimSpace(url), "/"), Code: strings.TrimPrefix(strings.TrimSpace(code), "code ")}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.UserDataDir(filepath.Join(dir, "chromium")), chromedp.WindowSize(1600, 1200))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx, deskLogin(d, d.Code)); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("page-img").complete && document.getElementById("page-img").naturalWidth > 0`,
		chromedp.WithPollingTimeout(time.Minute))); err != nil {
		b.Fatal(err)
	}
	measure := func(js string) float64 {
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](deskMeasure+"("+js+")", chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		return ms
	}
	b.ResetTimer()
	// A 300 dpi Letter page not rendered before: clicked in the queue.
	var cold []float64
	for _, id := range []string{"L-3", "L-2"} {
		cold = append(cold, measure(`() => document.querySelector('#queue li[data-id="`+id+`"]').click(), true`))
	}
	// The next document, preloaded while the person looks at this one.
	var next []float64
	views := 2
	for views < 50 {
		time.Sleep(1500 * time.Millisecond) // the person looks; the desk preloads
		ms := measure(`() => document.dispatchEvent(new KeyboardEvent("keydown", {key: "j"})), true`)
		if ms < 0 {
			measure(`() => document.querySelector("#queue li").click(), true`)
		} else {
			next = append(next, ms)
		}
		views++
		for range 2 { // the next pages of the document, if any
			if measure(`() => document.dispatchEvent(new KeyboardEvent("keydown", {key: "]"})), false`) >= 0 {
				views++
			}
		}
	}
	b.StopTimer()
	rss := peakRSS(b, cmd.Process.Pid)
	b.ReportMetric(median(cold), "ms/uncached-page")
	b.ReportMetric(median(next), "ms/next-doc")
	b.ReportMetric(float64(rss)/(1<<20), "MiB-peak-rss")
	b.ReportMetric(float64(views), "page-views")
	b.Logf("uncached 300 dpi Letter page on screen: %v ms; next document preloaded: median %.0f ms, max %.0f ms over %d; peak RSS %d MiB",
		cold, median(next), maxOf(next), len(next), rss>>20)
	for d, was := range before {
		if now := listFiles(b, d); now != was {
			b.Errorf("files created or changed under %s during the session:\n%s\nwas\n%s", d, now, was)
		}
	}
	if rss >= 300<<20 {
		b.Errorf("peak RSS %d MiB, want under 300", rss>>20)
	}
}

// deskMeasure is a script that runs act and resolves to the milliseconds
// until the page image is a new one, loaded (and, with doc, the document
// a new one), or to -1 when nothing changes within 5 s.
const deskMeasure = `(async (act, doc) => {
	const img = document.getElementById("page-img"), title = document.getElementById("doc-title");
	const src = img.src, was = title.textContent, t0 = performance.now();
	act();
	for (;;) {
		await new Promise((r) => requestAnimationFrame(r));
		if (img.src !== src && img.complete && img.naturalWidth > 0 && (!doc || title.textContent !== was)) return performance.now() - t0;
		if (performance.now() - t0 > 5000) return -1;
	}
})`

// deskBenchBatch makes a batch of four 300 dpi Letter scans (sample pages
// rendered again at 300 dpi) and six multi-page sample documents, all in
// review, read at a low resolution to keep it quick.
func deskBenchBatch(b *testing.B, dir string) string {
	docs := filepath.Join(dir, "docs")
	if err := os.Mkdir(docs, 0o700); err != nil {
		b.Fatal(err)
	}
	var m strings.Builder
	m.WriteString("source_id,participant_id,referral_date,consent,path,sha256\n")
	for i, src := range []string{"R-0002", "R-0004", "R-0006", "R-0010"} {
		pdf := letter300(b, filepath.Join(sampleDir(b), "docs", src+".pdf"), dir)
		name := fmt.Sprintf("L-%d.pdf", i)
		if err := os.WriteFile(filepath.Join(docs, name), pdf, 0o600); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&m, "L-%d,P-000000,2024-01-01,yes,docs/%s,\n", i, name)
	}
	for _, id := range []string{"R-0001", "R-0003", "R-0005", "R-0007", "R-0008", "R-0009"} {
		data, err := os.ReadFile(filepath.Join(sampleDir(b), "docs", id+".pdf"))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, id+".pdf"), data, 0o600); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&m, "%s,P-000000,2024-01-01,yes,docs/%s.pdf,\n", id, id)
	}
	manifest := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(manifest, []byte(m.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(binary, "run", "--plaintext", "--out", out, "--root", dir, "--quiet", "--dpi", "70", manifest)
	if o, err := cmd.CombinedOutput(); exitStatus(err) != runNeedsPerson {
		b.Fatalf("run: %v\n%s", err, o)
	}
	return out
}

// letter300 is the first page of the PDF at src rendered at 300 dpi and
// stored as a Letter page of one gray JPEG image, as a scanner makes it.
func letter300(b *testing.B, src, dir string) []byte {
	prefix := filepath.Join(dir, "page")
	if o, err := exec.Command("pdftoppm", "-r", "300", "-gray", "-jpeg", "-singlefile", "-f", "1", "-l", "1", src, prefix).CombinedOutput(); err != nil {
		b.Fatalf("pdftoppm: %v\n%s", err, o)
	}
	img, err := os.ReadFile(prefix + ".jpg")
	if err != nil {
		b.Fatal(err)
	}
	os.Remove(prefix + ".jpg")
	content := "q 612 0 0 792 0 0 cm /Im0 Do Q\n"
	return probe.ClassicPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content),
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width 2550 /Height 3300 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n%s\nendstream", len(img), img),
	)
}

// listFiles lists the files under dir with their sizes, the journal's
// own (journal.db and its -wal and -shm) aside.
func listFiles(b *testing.B, dir string) string {
	var s strings.Builder
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(fi.Name(), "journal.db") {
			return nil
		}
		fmt.Fprintf(&s, "%s %d %s\n", path, fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s.String()
}

// peakRSS is the peak resident memory of process pid (VmHWM).
func peakRSS(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
