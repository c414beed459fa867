package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/refbatch/refbatch/batch/batchtest/finished"
)

// deskGet GETs path at the desk with c and returns the status and body.
func deskGet(t *testing.T, c *http.Client, d *deskProc, path string) (int, string) {
	t.Helper()
	resp, err := c.Get(d.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDeskCodeIsSingleUse, through the real binary and an HTTP client:
// the code printed opens one session; a second use is refused with a
// message saying how to get a new code; SIGHUP prints one, which opens a
// second client a session of its own; a session ends with the desk.
func TestDeskCodeIsSingleUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	finishedBatch(t, dir, out, []finished.Row{finished.Good("R-1", "P-000101", "2024-01-02")})
	d := startDesk(t, out)
	a, csrfA := d.open(t, d.Code)
	resp, err := http.Post(d.URL+"/api/open", "application/json", strings.NewReader(`{"code":"`+d.Code+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "already used") || !strings.Contains(string(body), "SIGHUP") {
		t.Errorf("the code a second time: %d %s, want 403 saying it was used and how to get a new one", resp.StatusCode, body)
	}
	b, csrfB := d.open(t, d.newCode(t))
	if csrfA == csrfB {
		t.Error("two clients got the same CSRF token")
	}
	for name, c := range map[string]*http.Client{"first": a, "second": b} {
		if code, _ := deskGet(t, c, d, "/api/queue"); code != http.StatusOK {
			t.Errorf("%s client's session: %d", name, code)
		}
	}
	// The desk stops: a desk started again knows no session.
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()
	if _, err := a.Get(d.URL + "/api/queue"); err == nil {
		t.Error("the session still answers after the desk stopped")
	}
}

// TestDeskCodeOutOfHistory drives headless Chromium to the desk and
// enters the code as a person does; once the browser is closed, no file
// of its profile (History included) holds the code. The earlier desk's
// /?token= URL was in Chromium's History. On the way, a drag that ends
// off the page image makes a region that ends at the image's edge, which
// the desk takes (it made boxes off the page).
func TestDeskCodeOutOfHistory(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed")
	}
	t.Parallel()
	_, out := inReview(t)
	d := startDesk(t, out)
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.UserDataDir(profile))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	if _, err := chromedp.Run(ctx, deskLogin(d, d.Code)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("open").hidden && document.getElementById("who").textContent.startsWith("deciding as")`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the desk did not open with the code: %v", err)
	}
	clamped := `(() => { const m = (document.getElementById("region").dataset.box || "").match(/^(\d+),(\d+),(\d+),(\d+)$/);
		const vb = document.getElementById("overlay").getAttribute("viewBox").split(" ").map(Number);
		return m !== null && +m[3] === vb[2] && +m[4] === vb[3] && +m[1] < vb[2] && +m[2] < vb[3]; })()`
	for i, step := range []chromedp.Action[bool]{
		// The page drawn: its image shown and its boxes' frame set (no
		// region is drawn while a page loads).
		chromedp.Poll[bool](`!document.getElementById("page-img").hidden && document.getElementById("page-img").naturalWidth > 0 && !document.getElementById("stage").classList.contains("loading")`,
			chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Evaluate[bool](deskDragOff),
		chromedp.Poll[bool](clamped, chromedp.WithPollingTimeout(5*time.Second)),
	} {
		if _, err := chromedp.Run(ctx, step); err != nil {
			t.Fatalf("a drag off the image, step %d: %v", i, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("tr-text"), "stamp"), chromedp.Click(chromedp.ID("btn-transcribe"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("msg").textContent.includes("transcription saved")`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the region clamped to the image was not saved: %v", err)
	}
	cancel() // closes the browser, which writes its History
	cancelA()
	time.Sleep(500 * time.Millisecond)
	found := 0
	filepath.WalkDir(profile, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(d.Code)) {
			t.Errorf("%s holds the code", strings.TrimPrefix(p, profile))
		}
		if e.Name() == "History" {
			found++
		}
		return nil
	})
	if found == 0 {
		t.Error("the profile has no History file: the test looked at nothing")
	}
}

// deskDragOff drags the mouse from the middle of the page shown to well
// past its bottom right corner.
const deskDragOff = `(() => {
	const r = document.getElementById("stage").getBoundingClientRect();
	const at = (type, fx, fy, target) => target.dispatchEvent(new MouseEvent(type, {bubbles: true, button: 0,
		clientX: r.left + fx * r.width, clientY: r.top + fy * r.height}));
	at("mousedown", 0.5, 0.5, document.getElementById("stage"));
	at("mouseup", 1.6, 1.9, document);
	return true;
})()`

// TestDeskReadsCarefully: a FIFO in an artifact's place or in the
// manifest's, and a 10 GB sparse artifact, are answered by /api/doc
// within 2 s with the reason shown (they hung it, or held it for
// seconds); a manifest edited after admission is shown as edited, naming
// the field; and the desk ends within 2 s of SIGTERM.
func TestDeskReadsCarefully(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	manifest, _ := finishedBatch(t, dir, out, []finished.Row{finished.Good("R-1", "P-000101", "2024-01-02"),
		finished.Good("R-2", "P-000102", "2024-01-02"), finished.Good("R-3", "P-000103", "2024-01-02")})
	art := artifactOf(t, out, "R-1")
	os.Remove(art)
	if err := syscall.Mkfifo(art, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(artifactOf(t, out, "R-2"), 10<<30); err != nil {
		t.Fatal(err)
	}
	d := startDesk(t, out)
	c, _ := d.open(t, d.Code)
	doc := func(id string) map[string]any {
		start := time.Now()
		code, body := deskGet(t, c, d, "/api/doc?id="+id)
		if took := time.Since(start); took > 2*time.Second || code != http.StatusOK {
			t.Fatalf("/api/doc %s: %d after %v, want 200 within 2s\n%s", id, code, took, body)
		}
		var m map[string]any
		json.Unmarshal([]byte(body), &m)
		return m
	}
	if e, _ := doc("R-1")["artifact_error"].(string); !strings.Contains(e, "FIFO") {
		t.Errorf("a FIFO artifact: artifact_error %q, want it named a FIFO", e)
	}
	if e, _ := doc("R-2")["artifact_error"].(string); !strings.Contains(e, "10737418240 bytes") {
		t.Errorf("a sparse artifact: artifact_error %q, want its size refused", e)
	}
	// The manifest edited after admission: R-3's participant_id.
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, bytes.Replace(b, []byte("P-000103"), []byte("P-999999"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	m := doc("R-3")
	if ch, _ := m["manifest_changed"].([]any); len(ch) != 1 || ch[0] != "participant_id" {
		t.Errorf("an edited manifest: manifest_changed %v, want [participant_id]", m["manifest_changed"])
	}
	// The manifest replaced by a FIFO.
	os.Remove(manifest)
	if err := syscall.Mkfifo(manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	if e, _ := doc("R-3")["manifest_error"].(string); !strings.Contains(e, "not a regular file") {
		t.Errorf("a FIFO manifest: manifest_error %q, want it refused", e)
	}
	start := time.Now()
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the desk took %v to end after SIGTERM, want under 2s", took)
	}
}

// deskPost POSTs body as JSON to path at the desk with c and the CSRF
// token, and returns the status and body.
func deskPost(t *testing.T, c *http.Client, d *deskProc, csrf, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", d.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDeskRefusesBadRequests: a transcription's box off the page,
// inverted, of ±2^62 or of three or five numbers is answered 400 naming
// the rule (all were 200, and the export kept them); one inside the page
// is saved. A retry with a setting that does not exist is 400, not 500;
// page 2^63-1 is reported as asked, not as a negative page.
func TestDeskRefusesBadRequests(t *testing.T) {
	t.Parallel()
	_, out := inReview(t)
	d := startDesk(t, out)
	c, csrf := d.open(t, d.Code)
	_, body := deskGet(t, c, d, "/api/doc?id=R-1")
	var doc struct {
		Version int64 `json:"version"`
		State   string
		Pages   []struct{ Width, Height int } `json:"pages_read"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.State != "review" || len(doc.Pages) == 0 || doc.Pages[0].Width == 0 {
		t.Fatalf("the document: %v %s", err, body)
	}
	w, h := doc.Pages[0].Width, doc.Pages[0].Height
	tr := func(box string) string {
		return fmt.Sprintf(`{"id":"R-1","since":%d,"page":0,"box":%s,"text":"Seen by Dr Hand"}`, doc.Version, box)
	}
	for _, tc := range []struct{ name, box, rule string }{
		{"off the page", fmt.Sprintf("[%d,10,%d,40]", w-5, w+600), "ends off the page"},
		{"negative", "[-600,10,40,40]", "starts off the page"},
		{"inverted", "[40,40,10,10]", "not ordered"},
		{"2^62", "[0,0,4611686018427387904,4611686018427387904]", "ends off the page"},
		{"-2^62", "[-4611686018427387904,0,10,10]", "starts off the page"},
		{"three numbers", "[1,2,3]", "exactly four numbers"},
		{"five numbers", "[1,2,3,4,5]", "exactly four numbers"},
		{"a fraction", "[1.5,2,30,40]", "whole numbers"},
	} {
		code, body := deskPost(t, c, d, csrf, "/api/transcribe", tr(tc.box))
		if code != http.StatusBadRequest || !strings.Contains(body, tc.rule) {
			t.Errorf("a box %s %s: %d %s, want 400 naming %q", tc.name, tc.box, code, body, tc.rule)
		}
	}
	if code, body := deskPost(t, c, d, csrf, "/api/transcribe", tr(fmt.Sprintf("[0,0,%d,%d]", w, h))); code != http.StatusOK {
		t.Errorf("a box of the whole page: %d %s, want 200", code, body)
	}
	code, body := deskPost(t, c, d, csrf, "/api/decide", `{"action":"retry","ids":["R-1"],"retry":{"no_such_setting":true}}`)
	if code != http.StatusBadRequest || !strings.Contains(body, "no_such_setting") {
		t.Errorf("a retry with an unknown setting: %d %s, want 400 naming it", code, body)
	}
	code, body = deskGet(t, c, d, "/api/page?id=R-1&page=9223372036854775807&w=200")
	if code < 400 || code > 499 || strings.Contains(body, "-9223372036854775808") || !strings.Contains(body, "9223372036854775807") {
		t.Errorf("page 2^63-1: %d %s, want a 4xx naming the page as asked", code, body)
	}
}
