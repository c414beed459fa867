package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/batch/batchtest/finished"
	"github.com/refbatch/refbatch/batch/export/pdfcheck"
)

// deskBatch runs a plaintext batch of documents, each with a participant
// ID its text does not have (review id_not_found), plus rows rejected
// before admission (bad_date, with a detail), at 100 dpi with the page
// steps off, on one worker: the desk shows what was read, whichever
// reading it was. The ids in scanned are the sample's scans, whose text
// and page a test looks at; the others are tiny referrals of their own,
// cheaper to read.
func deskBatch(t *testing.T, dir string, ids, scanned []string, rejected int) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("source_id,participant_id,referral_date,consent,path,sha256\n")
	for i, id := range ids {
		doc := filepath.Join(dir, "docs", id+".pdf")
		if slices.Contains(scanned, id) {
			copyFile(t, filepath.Join(sampleDir(t), "docs", id+".pdf"), doc)
		} else {
			writeFile(t, filepath.Dir(doc), filepath.Base(doc), tinyReferral(600+i, fmt.Sprintf("P-%06d", 600600+i), "2024-01-01"))
		}
		fmt.Fprintf(&b, "%s,P-000000,2024-01-01,yes,docs/%s.pdf,\n", id, id)
	}
	for i := range rejected {
		fmt.Fprintf(&b, "R-09%02d,P-000001,2024-02-30,yes,docs/missing-%d.pdf,\n", i, i)
	}
	manifest := filepath.Join(dir, "m.csv")
	if err := os.WriteFile(manifest, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := append([]string{"run", "--plaintext", "--out", out, "--root", dir, "--quiet", "--dpi", "100", "--workers", "1"}, noPageSteps...)
	r := refbatch(t, nil, append(args, manifest)...)
	if r.code != runNeedsPerson {
		t.Fatalf("run: exit %d, want %d\n%s", r.code, runNeedsPerson, r.stderr)
	}
	return out
}

// deskProc is a `refbatch desk` started by startDesk: URL is its address
// ("http://host:port", no path), Code the one-time code it printed.
type deskProc struct {
	URL, Code string
	cmd       *exec.Cmd
	out       *bufio.Reader
}

// startDesk starts `refbatch desk` on out and reads its address and code;
// the desk is stopped with SIGINT at the end of the test, and must exit 0.
func startDesk(t *testing.T, out string, env ...string) *deskProc {
	t.Helper()
	cmd := exec.Command(binary, "desk", "--out", out)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		// A desk that does not stop must not hold the suite until its
		// timeout: it is killed after 10 s, and that is a failure.
		stopped := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
		defer stopped.Stop()
		if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "Wait was already called") {
			t.Errorf("desk after SIGINT: %v\n%s", err, stderr.String())
		}
	})
	d := &deskProc{cmd: cmd, out: bufio.NewReader(stdout)}
	line, err := d.out.ReadString('\n')
	if err != nil {
		t.Fatalf("desk printed no address: %v\n%s", err, stderr.String())
	}
	d.URL = strings.TrimSuffix(strings.TrimSpace(line), "/")
	d.Code = d.readCode(t)
	return d
}

// readCode reads the next code the desk prints.
func (d *deskProc) readCode(t *testing.T) string {
	t.Helper()
	line, err := d.out.ReadString('\n')
	code, ok := strings.CutPrefix(strings.TrimSpace(line), "code ")
	if err != nil || !ok || code == "" {
		t.Fatalf("desk printed no code: %q %v", line, err)
	}
	return code
}

// newCode asks the desk for a new code (SIGHUP) and returns it.
func (d *deskProc) newCode(t *testing.T) string {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	return d.readCode(t)
}

// open exchanges code at the desk for a session, as the page does: a
// client with the session's cookie, and its CSRF token.
func (d *deskProc) open(t *testing.T, code string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Post(d.URL+"/api/open", "application/json", strings.NewReader(`{"code":"`+code+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct{ CSRF, Error string }
	json.NewDecoder(resp.Body).Decode(&s)
	if resp.StatusCode != http.StatusOK || s.CSRF == "" {
		t.Fatalf("opening a session: status %d %s", resp.StatusCode, s.Error)
	}
	return c, s.CSRF
}

// deskLogin opens the desk in the browser and enters code, as a person
// does.
func deskLogin(d *deskProc, code string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		return chromedp.Do(ctx, chromedp.Navigate(d.URL+"/"), chromedp.WaitVisible(chromedp.ID("code")),
			chromedp.SetValue(chromedp.ID("code"), code), chromedp.Click(chromedp.ID("open-btn")))
	})
}

// TestDeskBrowser drives a real headless Chromium through the desk: the
// page image with the words drawn over it; accept, reject and retry one
// document each; a decision on a document the CLI decided meanwhile is
// refused and the document shown as it is now; then every id_not_found
// of a second batch accepted at once. Requests without the session, with
// a wrong Host or without the CSRF token are refused and change nothing.
// Afterwards review --json, report.json and verify agree.
func TestDeskBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed")
	}
	t.Parallel()
	var a, b string
	var wg sync.WaitGroup
	// R-0002's scan is read: its page, its words and its text are looked
	// at. The rest are tiny referrals, and the second batch, whose rows
	// are only accepted, is built without OCR (batchtest/finished).
	wg.Go(func() {
		a = deskBatch(t, t.TempDir(), []string{"R-0002", "R-0004", "R-0006", "R-0010"}, []string{"R-0002"}, 1)
	})
	wg.Go(func() {
		dir := t.TempDir()
		var rows []finished.Row
		for i, id := range []string{"R-0015", deskLongID} {
			r := finished.Good(id, fmt.Sprintf("P-%06d", 600700+i), "2024-01-01")
			r.ParticipantID = "P-000000"
			rows = append(rows, r)
		}
		b = filepath.Join(dir, "out")
		finishedBatchWith(t, dir, b, rows, func(o *batch.Options) { o.DPI = 100 })
	})
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	deskA := startDesk(t, a, "USER=alice")
	deskRefusals(t, deskA, a)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	until := func(what, expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Minute))(ctx, tg)
			if err != nil {
				msg, _ := chromedp.TextContent(chromedp.ID("msg"))(ctx, tg)
				return fmt.Errorf("%s (%s): %w; the desk says %q", what, expr, err, msg)
			}
			return nil
		})
	}
	title := func(id string) string {
		return `document.getElementById("doc-title").textContent.startsWith("` + id + ` ")`
	}
	msgHas := func(s string) string { return `document.getElementById("msg").textContent.includes("` + s + `")` }
	err = chromedp.Do(ctx,
		deskLogin(deskA, deskA.newCode(t)),
		until("the queue", `document.querySelectorAll("#queue li").length === 4 && document.querySelectorAll("#rejected li").length === 1`),
		until("the first document", title("R-0002")),
		until("the page image with word boxes", `document.getElementById("page-img").naturalWidth > 0 && document.querySelectorAll("#overlay rect.word").length > 20`),
		until("the fields", `document.querySelector("#fields li.missing") !== null`),
		deskScreenshot(t),
		// A handwritten note refbatch could not read: a region dragged
		// over the page, its text typed.
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](deskDrag)(ctx, tg)
			return err
		}),
		// Named in words, where it is and how large, never in pixels.
		until("the region chosen", `/^page 1, region at the (top|bottom|middle|left|right|top left|top right|bottom left|bottom right), `+
			`\d+\.\d cm wide and \d+\.\d cm high$/.test(document.getElementById("region").textContent)`),
		until("every outline's kind in the legend", deskLegendCovers),
		chromedp.SetValue(chromedp.ID("tr-text"), "Seen by Dr Hand, urgent"),
		chromedp.Click(chromedp.ID("btn-transcribe")),
		until("the transcription saved", msgHas("transcription saved")+` && document.querySelectorAll("#transcriptions li").length === 1 && document.querySelectorAll("#overlay rect.typed").length === 1`),
		until("the transcription placed in words", `/^page 1 at the [a-z ]+, by alice@/.test(document.querySelector("#transcriptions li").textContent)`),
		chromedp.SetValue(chromedp.ID("note"), "checked against the paper file"),
		chromedp.Click(chromedp.ID("btn-accept")),
		until("accepted, the next shown", msgHas("R-0002 accept")+` && `+title("R-0004")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Decided meanwhile from the CLI: the desk's decision is refused and
	// the document shown as it is now.
	if r := refbatch(t, []string{"USER=bob"}, "review", "accept", "--out", a, "--note", "from the terminal", "R-0004"); r.code != 0 {
		t.Fatalf("review accept R-0004: exit %d\n%s", r.code, r.stderr)
	}
	err = chromedp.Do(ctx,
		chromedp.KeyEvent("r"),
		until("reject asks once", `document.getElementById("confirm").open`),
		chromedp.Click(chromedp.ID("confirm-yes")),
		until("refused, shown as it is now", msgHas("R-0004 changed since it was shown")+` && document.getElementById("doc-reason").textContent === "done"`),
		chromedp.Click(chromedp.CSS(`#queue li[data-id="R-0006"]`)),
		until("R-0006 shown", title("R-0006")),
		chromedp.Click(chromedp.ID("btn-reject")),
		until("reject asks once", `document.getElementById("confirm").open`),
		chromedp.Click(chromedp.ID("confirm-yes")),
		until("rejected, the next shown", msgHas("R-0006 reject")+` && `+title("R-0010")),
		chromedp.SetValue(chromedp.ID("retry-dpi"), "150"),
		chromedp.Click(chromedp.ID("btn-retry")),
		until("retried, the lane empty", msgHas("R-0010 retry")+` && !document.getElementById("empty").hidden`),
		// The empty lane says so, shows nothing of the last document,
		// and its buttons are disabled; a key decides nothing.
		until("the empty lane said and its buttons off", deskLaneEmpty("The review lane is empty")),
		chromedp.KeyEvent("a"),
		chromedp.Sleep(300*time.Millisecond),
		until("still empty, no decision", deskLaneEmpty("The review lane is empty")+` && !document.getElementById("confirm").open && `+msgHas("R-0010 retry")),
		// The retry is not lost from sight: it waits for the next run.
		until("the retry waiting for the next run", `document.getElementById("empty").textContent.includes("1 document sent back to be read again (retry) waits for the next refbatch run") && `+
			`document.getElementById("count").textContent === "0 in review; 1 sent back, read again by the next refbatch run"`),
		// The icon the page names is served: no 404 at every load.
		until("the icon", `(async () => (await fetch(document.querySelector('link[rel="icon"]').href)).ok && (await fetch("/favicon.ico")).ok)()`),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The row rejected before admission: its detail and advice shown,
	// open, then dismissed with a note; then a rejected document shown.
	rej := `#rejected li[data-id="R-0900"] `
	var detail, advice string
	err = chromedp.Do(ctx,
		until("the rejection's detail, open", `document.querySelector('`+rej+`.detail') !== null && document.querySelector('`+rej+`.status').textContent === "open"`),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			if detail, err = chromedp.TextContent(chromedp.CSS(rej+".detail"))(ctx, tg); err == nil {
				advice, err = chromedp.TextContent(chromedp.CSS(rej+".advice"))(ctx, tg)
			}
			return err
		}),
		chromedp.SetValue(chromedp.CSS(rej+".dismiss-note"), "date unreadable on the paper too"),
		chromedp.Click(chromedp.CSS(rej+".dismiss-btn")),
		until("dismissed", msgHas("R-0900 dismiss")+` && document.querySelector('`+rej+`.status').textContent.startsWith("dismissed by alice@") && document.querySelector('`+rej+`.dismiss') === null`),
		// A rejected document's view: its status, no review decision.
		chromedp.Click(chromedp.CSS(`#rejected li[data-id="R-0006"] .open-doc`)),
		until("R-0006's view", title("R-0006")+` && document.querySelector("#doc-rejection .status").textContent === "no action needed" && document.getElementById("decide").hidden`),
	)
	if err != nil {
		t.Fatal(err)
	}

	// The second batch: all id_not_found at once, with one note.
	deskB := startDesk(t, b, "USER=alice")
	err = chromedp.Do(ctx,
		deskLogin(deskB, deskB.Code),
		until("the queue", `document.querySelectorAll("#queue li").length === 2`),
		// A long source_id keeps to one line in the queue, whole in its
		// title, and whole in the document's title.
		until("the long ID on one line", `(() => { const s = document.querySelector('#queue li[data-id="`+deskLongID+`"] .id');
			return s.title === "`+deskLongID+`" && s.getBoundingClientRect().height < 1.5 * parseFloat(getComputedStyle(s).lineHeight) })()`),
		chromedp.Click(chromedp.CSS(`#queue li[data-id="`+deskLongID+`"]`)),
		until("the long ID's document", title(deskLongID)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`(() => { const f = document.getElementById("filter"); f.value = "id_not_found"; f.dispatchEvent(new Event("change")); return true })()`)(ctx, tg)
			return err
		}),
		chromedp.Click(chromedp.ID("select-reason")),
		chromedp.SetValue(chromedp.ID("note"), "both checked by hand"),
		chromedp.Click(chromedp.ID("btn-accept")),
		until("a bulk decision asks once", `document.getElementById("confirm").open && document.getElementById("confirm-text").textContent === "accept 2 documents?"`),
		chromedp.Click(chromedp.ID("confirm-yes")),
		until("both accepted, the reason's lane empty", msgHas("2 decided")+` && `+deskLaneEmpty("The review lane is empty")),
	)
	if err != nil {
		t.Fatal(err)
	}
	deskAgrees(t, a, map[string][3]string{"R-0002": {"done", "accept", "alice"}, "R-0004": {"done", "accept", "bob"},
		"R-0006": {"rejected", "reject", "alice"}, "R-0010": {"queued", "retry", "alice"}, "R-0900": {"rejected", "dismiss", "alice"}}, 5)
	for _, row := range readReport(t, a).Rows {
		if row.SourceID == "R-0900" && row.Decision != nil && (row.Detail == "" || row.Detail != detail || row.Advice != advice || row.Decision.Note != "date unreadable on the paper too") {
			t.Errorf("report.json R-0900: detail %q advice %q note %q; the desk showed %q and %q", row.Detail, row.Advice, row.Decision.Note, detail, advice)
		}
	}
	if r := refbatch(t, nil, "review", "--out", a); r.code != 0 || strings.Contains(r.stdout, "R-0900") {
		t.Errorf("review after the dismissal: exit %d, want R-0900 no longer listed\n%s", r.code, r.stdout)
	}
	deskAgrees(t, b, map[string][3]string{"R-0015": {"done", "accept", "alice"}, deskLongID: {"done", "accept", "alice"}}, 2)

	// The transcription: in a new artifact beside the old one, counted by
	// verify, shown by show marked as a person's.
	if r := refbatch(t, nil, "verify", "--out", a); !strings.Contains(r.stdout, "transcriptions 1") {
		t.Errorf("verify does not count the transcription:\n%s", r.stdout)
	}
	r := refbatch(t, nil, "show", "--out", a, "R-0002")
	if r.code != 0 || !strings.Contains(r.stdout, "[transcribed by a person, not recognised]") || !strings.Contains(r.stdout, "by alice@") ||
		!strings.Contains(r.stdout, "Seen by Dr Hand, urgent") || !strings.Contains(r.stdout, "Willowwick") {
		t.Errorf("show R-0002: exit %d, want the text and the transcription, marked\n%s%s", r.code, r.stdout, r.stderr)
	}
	deskExported(t, a)
	for _, name := range []string{"R-0002_*_a1.json", "R-0002_*_a1_t1-*.json"} {
		if m, _ := filepath.Glob(filepath.Join(a, "artifacts", name)); len(m) != 1 {
			t.Errorf("artifacts %s: %v, want one", name, m)
		}
	}
}

// deskLongID is a source_id longer than the desk's queue is wide.
const deskLongID = "R-0016-NORTHWESTREGIONALHOSPITALTRUST-CARDIOLOGY-2024"

// deskLegendCovers is true when every kind of outline drawn on the page
// (the chosen region's among them) has a key in the legend shown.
const deskLegendCovers = `(() => {
	const key = (c) => c.contains("low") ? "low" : c.contains("hand") ? (c.contains("note") ? "hand" : "mark") : c[0];
	const kinds = new Set([...document.querySelectorAll("#overlay rect")].map((r) => key(r.classList)));
	const legend = document.getElementById("legend");
	return kinds.has("word") && kinds.has("pick") && legend.offsetParent !== null &&
		[...kinds].every((k) => legend.querySelector(".key." + k) !== null);
})()`

// deskLaneEmpty is true when the desk shows an empty lane saying said:
// no document on screen, the decision and selection buttons disabled.
func deskLaneEmpty(said string) string {
	return `(() => { const $ = (id) => document.getElementById(id);
		return !$("empty").hidden && $("empty").textContent.startsWith("` + said + `") && $("head").hidden && $("work").hidden && $("decide").hidden &&
			["btn-accept", "btn-reject", "btn-retry", "select-reason", "select-none"].every((b) => $(b).disabled) &&
			document.querySelector("#queue li.current") === null })()`
}

// deskExported: the transcription of R-0002 in batch a is in its
// exports, marked as a person's: after the text, in the ALTO as a block
// tagged "transcribed", in the PDF/A's text layer.
func deskExported(t *testing.T, a string) {
	t.Helper()
	dest := filepath.Join(t.TempDir(), "export")
	if r := refbatch(t, nil, "export", "--out", a, "--to", dest, "--format", "txt,alto,pdf", "--pdfa=best-effort"); r.code != 0 {
		t.Errorf("export: exit %d\n%s", r.code, r.stderr)
		return
	}
	files := func(ext string) []byte {
		m, _ := filepath.Glob(filepath.Join(dest, "*R-0002*"+ext))
		if len(m) != 1 {
			t.Errorf("export wrote %v for R-0002, want one %s file", m, ext)
			return nil
		}
		b, _ := os.ReadFile(m[0])
		return b
	}
	if b := files(".txt"); !strings.Contains(string(b), "[transcribed by a person, not recognised]\npage 1") {
		t.Errorf("the exported text of R-0002 has no transcription, marked:\n%s", b)
	}
	if b := string(files(".alto.xml")); !strings.Contains(b, `TAGREFS="transcribed" PROCESSINGREFS="transcr1"`) ||
		!strings.Contains(b, `CONTENT="Hand,"/>`) || !strings.Contains(b, `<OtherTag ID="transcribed"`) {
		t.Errorf("the ALTO of R-0002 has no transcription, tagged")
	}
	pdf := files(".pdf")
	if p := pdfcheck.PDFA(pdf); len(p) > 0 {
		t.Errorf("the PDF/A of R-0002 breaks %v", p)
	}
	if _, err := exec.LookPath("pdftotext"); err != nil || pdf == nil {
		return
	}
	cmd := exec.Command("pdftotext", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	if out, err := cmd.Output(); err != nil || !strings.Contains(strings.Join(strings.Fields(string(out)), " "), "Seen by Dr Hand, urgent") {
		t.Errorf("pdftotext does not read the transcription in R-0002's PDF (%v)", err)
	}
}

// deskDrag drags the mouse over a region of the page shown.
const deskDrag = `(() => {
	const r = document.getElementById("stage").getBoundingClientRect();
	const at = (type, fx, fy, target) => target.dispatchEvent(new MouseEvent(type, {bubbles: true, button: 0,
		clientX: r.left + fx * r.width, clientY: r.top + fy * r.height}));
	at("mousedown", 0.5, 0.8, document.getElementById("stage"));
	at("mouseup", 0.9, 0.9, document);
	return true;
})()`

// deskRefusals sends the desk at url requests it must refuse: no session,
// a wrong token, a wrong Host, a decision without the CSRF token. Each
// gets a 4xx and the review lane of out stays as it was.
func deskRefusals(t *testing.T, d *deskProc, out string) {
	t.Helper()
	before := refbatch(t, nil, "review", "--out", out, "--json").stdout
	base := d.URL
	get := func(c *http.Client, u string, h map[string]string) int {
		req, _ := http.NewRequest("GET", u, nil)
		for k, v := range h {
			if k == "Host" {
				req.Host = v
			}
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	post := func(u, body string, h map[string]string) int {
		req, _ := http.NewRequest("POST", u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			if k == "Host" {
				req.Host = v
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for name, code := range map[string]int{
		"no session":        get(http.DefaultClient, base+"/api/queue", nil),
		"the code in a URL": get(http.DefaultClient, base+"/api/queue?token="+d.Code, nil),
		"a wrong code":      post(base+"/api/open", `{"code":"guessed"}`, nil),
		"wrong Host":        post(base+"/api/open", `{"code":"`+d.Code+`"}`, map[string]string{"Host": "evil.example:80"}),
		"another origin":    post(base+"/api/open", `{"code":"`+d.Code+`"}`, map[string]string{"Origin": "http://evil.example"}),
	} {
		if code < 400 || code > 499 {
			t.Errorf("%s: status %d, want 4xx", name, code)
		}
	}
	c, csrf := d.open(t, d.Code)
	resp, err := c.Post(base+"/api/decide", "application/json", strings.NewReader(`{"action":"accept","ids":["R-0002"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a decision without the CSRF token: status %d, want 403", resp.StatusCode)
	}
	// A retry in a language that is not installed is the person's
	// mistake, not the desk's: 400, naming the language.
	req, _ := http.NewRequest("POST", base+"/api/decide", strings.NewReader(`{"action":"retry","ids":["R-0002"],"retry":{"lang":"eng+zzz"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	if resp, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "zzz") {
		t.Errorf("a retry in a language not installed: status %d, want 400 naming zzz\n%s", resp.StatusCode, body)
	}
	if after := refbatch(t, nil, "review", "--out", out, "--json").stdout; after != before {
		t.Errorf("refused requests changed the review lane:\n%s\nto\n%s", before, after)
	}
}

// deskAgrees checks that review --json, report.json and verify agree on
// the decisions made: want is each row's state, decision and who.
func deskAgrees(t *testing.T, out string, want map[string][3]string, decisions int) {
	t.Helper()
	if r := refbatch(t, nil, "review", "--out", out, "--json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("review --json after the desk: exit %d, want an empty lane\n%s", r.code, r.stdout)
	}
	if r := refbatch(t, nil, "report", "--out", out); r.code != 0 && r.code != exitNeedsPerson {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	for _, row := range readReport(t, out).Rows {
		w, ok := want[row.SourceID]
		if !ok {
			continue
		}
		if string(row.State) != w[0] || row.Decision == nil || row.Decision.Action != w[1] || row.Decision.User != w[2] || row.Decision.Host == "" {
			t.Errorf("report.json: %s %s decision %+v, want %s after %s by %s", row.SourceID, row.State, row.Decision, w[0], w[1], w[2])
		}
	}
	if r := refbatch(t, nil, "verify", "--out", out); r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("decisions checked %d", decisions)) {
		t.Errorf("verify: exit %d, want 0 counting %d decisions\n%s%s", r.code, decisions, r.stdout, r.stderr)
	}
}

// deskScreenshot writes the browser's view to the file
// REFBATCH_DESK_SCREENSHOT names, if any: the README's picture of the
// desk, made from the synthetic sample.
func deskScreenshot(t *testing.T) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		path := os.Getenv("REFBATCH_DESK_SCREENSHOT")
		if path == "" {
			return nil
		}
		png, err := chromedp.CaptureScreenshot()(ctx, tg)
		if err != nil {
			return err
		}
		return os.WriteFile(path, png, 0o644)
	})
}
