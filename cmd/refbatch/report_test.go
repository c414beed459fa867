package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/report"
)

// TestReportCommand runs the sample, then regenerates its reports from the
// journal, renders report.html in headless Chromium, and reads the status
// of the finished batch.
func TestReportCommand(t *testing.T) {
	reads(t)
	out := filepath.Join(t.TempDir(), "out")
	r := sampleRun(t, out)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if hasBar(r.stdout) || hasBar(r.stderr) {
		t.Errorf("a bar without a terminal:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}
	written := readReport(t, out)

	t.Run("report regenerates what run wrote", func(t *testing.T) {
		r := refbatch(t, nil, "report", "--out", out)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, want := range []string{"batch        complete", "report: ", "csv:    ", "html:   "} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
			}
		}
		again := readReport(t, out)
		written.GeneratedAt, again.GeneratedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(written, again) {
			a, _ := json.MarshalIndent(written, "", " ")
			b, _ := json.MarshalIndent(again, "", " ")
			t.Errorf("the regenerated report differs from run's:\nrun:\n%s\nreport:\n%s", a, b)
		}
		f, err := os.Open(filepath.Join(out, report.CSVFile))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(again.Rows)+1 || recs[0][2] != "source_id" {
			t.Errorf("report.csv has %d records for %d rows; header %q", len(recs), len(again.Rows), recs[0])
		}
		assertModes(t, out)
	})

	t.Run("report.html in headless Chromium", func(t *testing.T) {
		renderInChromium(t, filepath.Join(out, report.HTMLFile))
	})

	t.Run("status of a finished batch", func(t *testing.T) {
		r := refbatch(t, nil, "status", "--out", out)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, want := range []string{"batch       complete", "leases      none", "eta         none"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("status lacks %q:\n%s", want, r.stdout)
			}
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		empty := t.TempDir()
		for _, args := range [][]string{
			{"report", "--out", empty},
			{"status", "--out", empty},
			{"report", "--out", out, "--manifest", filepath.Join(empty, "other.csv")},
			{"status", "--out", out, "extra"},
		} {
			if r := refbatch(t, nil, args...); r.code != exitUsage || !strings.Contains(r.stderr, "refbatch: hint:") {
				t.Errorf("%q: exit %d, want 2 with a hint\n%s", args, r.code, r.stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(empty, "journal.db")); err == nil {
			t.Error("status created a journal in an empty folder")
		}
	})
}

// TestStatusWhileRunning runs `refbatch status` and `refbatch report`
// against a batch another process is running (slowed down by the worker's
// test fault), then against the same batch interrupted. Its documents are
// tiny referrals (bigManifest): what status says of a run is the point,
// not the text.
func TestStatusWhileRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	manifest := bigManifest(t, dir, 12)
	cmd := exec.Command(binary, runArgs(out, "--root", "/", "--workers", "1", manifest)...)
	cmd.Env = append(os.Environ(), "REFBATCH_TEST_FAULTS=slow500ms=*")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor(t, 60*time.Second, func() bool { return strings.Contains(stderr.String(), "document finished") })

	r := refbatch(t, nil, "status", "--out", out, "--json")
	if r.code != 0 {
		t.Fatalf("status: exit %d\n%s", r.code, r.stderr)
	}
	var st standing.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, r.stdout)
	}
	total := 0
	for _, n := range st.Rows {
		total += n
	}
	pid := fmt.Sprintf("/%d/", cmd.Process.Pid)
	checks := []struct {
		name string
		ok   bool
	}{
		{"running", st.State == "running" && st.LiveRuns == 1},
		{"one document finished at least", st.Rows["done"]+st.Rows["review"] >= 1},
		{"no more rows than the manifest's", total+st.NotRecorded == st.Manifests[0].Rows && total >= 1},
		{"one engine at work", st.Running == 1},
		{"its lease held by the run's process", len(st.Leases) == 1 && st.Leases[0].Live && strings.Contains(st.Leases[0].Owner, pid)},
		{"pages per minute measured", st.PagesPerMinute > 0},
		{"an ETA", st.ETASeconds > 0 && st.RemainingPages > 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not so in %s", c.name, r.stdout)
		}
	}
	// Between two documents the run holds no lease: on a loaded machine
	// the text status can land there, so it is asked until a lease shows.
	var text result
	waitFor(t, 30*time.Second, func() bool {
		text = refbatch(t, nil, "status", "--out", out)
		return text.code != 0 || strings.Contains(text.stdout, pid)
	})
	if text.code != 0 || !strings.Contains(text.stdout, "batch       running (1 run going)") || !strings.Contains(text.stdout, pid) {
		t.Errorf("status: exit %d\n%s", text.code, text.stdout)
	}
	t.Logf("status during the run:\n%s", text.stdout)

	rep := refbatch(t, nil, "report", "--out", out)
	if rep.code != 0 || !strings.Contains(rep.stdout, "batch        running") {
		t.Errorf("report during the run: exit %d\n%s\n%s", rep.code, rep.stdout, rep.stderr)
	}
	if got := readReport(t, out); got.Complete || !got.InProgress {
		t.Errorf("report during the run: complete %v, in progress %v", got.Complete, got.InProgress)
	}

	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err == nil {
		t.Log("the run finished before the interrupt reached it")
	}
	after := refbatch(t, nil, "status", "--out", out, "--json")
	var st2 standing.Status
	if after.code != 0 || json.Unmarshal([]byte(after.stdout), &st2) != nil {
		t.Fatalf("status after: exit %d\n%s", after.code, after.stdout)
	}
	if st2.LiveRuns != 0 || st2.Running != 0 {
		t.Errorf("after the interrupt: %+v", st2)
	}
	if rep := refbatch(t, nil, "report", "--out", out); rep.code != 0 {
		t.Fatalf("report after the interrupt: exit %d\n%s", rep.code, rep.stderr)
	}
	got := readReport(t, out)
	page, _ := os.ReadFile(filepath.Join(out, report.HTMLFile))
	if st2.State == "incomplete" && (got.Complete || got.InProgress || !bytes.Contains(page, []byte("<strong>Incomplete.</strong>"))) {
		t.Errorf("the report of the interrupted batch is not marked incomplete (complete %v, in progress %v)", got.Complete, got.InProgress)
	}
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// chromiumFlags keep headless Chromium from talking to anyone: no
// background services, no updates, every host name unresolvable.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-default-apps", "--disable-extensions", "--hide-scrollbars",
	"--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,2000",
}

// chromium returns Debian's chromium, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (make deps installs it when it can): skipping the rendering test")
	}
	return path
}

// screenshot renders an HTML file to a PNG, logging the network to a net
// log, and returns both paths.
func screenshot(t *testing.T, html string) (shot, netlog string) {
	t.Helper()
	dir := chromiumDir(t)
	shot, netlog = filepath.Join(dir, "shot.png"), filepath.Join(dir, "net.json")
	runChromium(t, dir, "--log-net-log="+netlog, "--screenshot="+shot, "file://"+html)
	return shot, netlog
}

// dumpDOM loads an HTML file, runs its scripts, and returns the DOM
// Chromium then holds, serialised.
func dumpDOM(t *testing.T, html string) string {
	t.Helper()
	return string(runChromium(t, chromiumDir(t), "--dump-dom", "file://"+html))
}

// chromiumDir is a folder for one Chromium run: its profile and what it
// writes. Not t.TempDir: Chromium's helpers may still be writing the
// profile when it exits, and a failed cleanup would fail the test.
func chromiumDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "refbatch-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// runChromium runs headless Chromium (chromiumFlags, a profile in dir) with
// args, and returns its stdout.
func runChromium(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append(slices.Clone(chromiumFlags), "--user-data-dir="+filepath.Join(dir, "profile"))
	cmd := exec.CommandContext(ctx, bin, append(all, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // helpers left behind, if any
	return stdout.Bytes()
}

// pageRequests returns the URLs of the network requests a page made, from
// Chromium's net log. Chromium's own background requests carry the
// initiator "not an origin" and are not the page's; anything the page
// asked for carries its origin (a file:// page's is "null").
func pageRequests(t *testing.T, netlog string) []string {
	t.Helper()
	b, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int            `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		// A net log cut short lacks its closing brackets.
		if err2 := json.Unmarshal(append(bytes.TrimRight(b, ",\n"), "]}"...), &log); err2 != nil {
			t.Fatalf("reading the net log: %v", err)
		}
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatal("net log without URL_REQUEST_START_JOB: has Chromium's format changed?")
	}
	var urls []string
	for _, e := range log.Events {
		url, _ := e.Params["url"].(string)
		if e.Type != start || url == "" {
			continue
		}
		initiator, _ := e.Params["initiator"].(string)
		nik, _ := e.Params["network_isolation_key"].(string)
		if initiator != "not an origin" || strings.Contains(nik, "file://") {
			urls = append(urls, url)
		}
	}
	return urls
}

// renderInChromium checks that report.html refers to nothing outside
// itself, that Chromium rendering it makes no request, and that what it
// draws is not blank.
func renderInChromium(t *testing.T, html string) {
	chromium(t)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	lower := strings.ToLower(string(page))
	for _, banned := range []string{"http://", "https://", "src=", "url(", "<link", "<script", "@import", "@font-face"} {
		if strings.Contains(lower, banned) {
			t.Errorf("report.html contains %q", banned)
		}
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(lower, -1) {
		if id, ok := strings.CutPrefix(m[1], "#"); !ok || !strings.Contains(lower, `id="`+id+`"`) {
			t.Errorf("report.html links to %q, not to a section of its own", m[1])
		}
	}
	if n := strings.Count(lower, "<svg "); n != 4 {
		t.Errorf("report.html has %d charts, want 4", n)
	}

	// The detector must see a request when there is one, or its silence
	// about the report proves nothing.
	bad := filepath.Join(t.TempDir(), "bad.html")
	os.WriteFile(bad, []byte(`<!doctype html><html><body style="background:url(https://example.invalid/b.png)"><img src="http://example.invalid/x.png"><p>x</p></body></html>`), 0o600)
	_, badLog := screenshot(t, bad)
	if got := pageRequests(t, badLog); len(got) < 2 {
		t.Fatalf("the net log check missed a page's requests: %q", got)
	}

	shot, netlog := screenshot(t, html)
	if got := pageRequests(t, netlog); len(got) > 0 {
		t.Errorf("report.html made network requests: %q", got)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding the screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Errorf("screenshot is %v, want 1280x2000", b)
	}
	mean, sd, ink := lumaStats(img)
	t.Logf("screenshot %s: luminance mean %.1f, sd %.1f, %.1f%% of pixels not white", shot, mean, sd, 100*ink)
	if sd < 10 || ink < 0.02 {
		t.Errorf("the screenshot looks blank: luminance sd %.1f, %.2f%% ink", sd, 100*ink)
	}
	if keep := os.Getenv("REFBATCH_SCREENSHOT"); keep != "" {
		b, _ := os.ReadFile(shot)
		os.WriteFile(keep, b, 0o644)
	}
}

// lumaStats returns the mean and standard deviation of the luminance
// (0..255) of every fourth pixel, and the share of those not near white.
func lumaStats(img image.Image) (mean, sd, ink float64) {
	var sum, sq float64
	var n, dark int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			sum += l
			sq += l * l
			n++
			if l < 230 {
				dark++
			}
		}
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(max(0, sq/float64(n)-mean*mean)), float64(dark) / float64(n)
}
