package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/refbatch/refbatch/batch/review"
	"github.com/refbatch/refbatch/report"
)

// geometryBatch reads, with the page steps on, two documents of the
// generator's degraded corpus (150 dpi scans): G-1 is seed 3's R-0007,
// whose page 1 is skewed 2° (ccitt); G-2 is seed 4's R-0003, whose page 2
// is turned 90° in its image and skewed 1.5° (jpeg) and page 3 skewed
// 1.7°. Their participant IDs are not the letters', so they wait in
// review.
func geometryBatch(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, seed := range []string{"3", "4"} {
		cmd := exec.Command("go", "run", "./cmd/refcorpus", "--seed", seed, "--docs", "8", "--dpi-set", "150", "--degrade",
			"--out", filepath.Join(dir, "corpus"+seed))
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("generating the corpus: %v\n%s", err, out)
		}
	}
	manifest := writeRows(t, dir, [][4]string{{"G-1", "P-000000", "2020-07-02", "corpus3/docs/R-0007.pdf"},
		{"G-2", "P-000000", "2020-07-02", "corpus4/docs/R-0003.pdf"}})
	out := filepath.Join(dir, "out")
	r := refbatch(t, nil, "run", "--plaintext", "--out", out, "--workers", "1", "--quiet", manifest)
	if r.code != exitNeedsPerson {
		t.Fatalf("run: exit %d, want %d\n%s", r.code, exitNeedsPerson, r.stderr)
	}
	return out
}

// inkMeasure measures, on the page image the desk shows, the share of
// dark pixels in each word box as drawn (each box's corners taken
// through the overlay's transform to the screen, then into the image's
// own pixels); and the same boxes on the image the desk showed before
// (the render turned, not deskewed, with the boxes stretched over it).
// It returns the page's rotation and skew as read, and both lists.
const inkMeasure = `(async () => {
	const img = document.getElementById("page-img");
	const id = img.dataset.doc;
	const doc = await (await fetch("/api/doc?id=" + id, {credentials: "same-origin"})).json();
	const index = +img.dataset.page;
	const p = doc.pages_read.find((x) => x.index === index);
	const dark = (im) => {
		const c = document.createElement("canvas");
		c.width = im.naturalWidth; c.height = im.naturalHeight;
		const g = c.getContext("2d");
		g.drawImage(im, 0, 0);
		const px = g.getImageData(0, 0, c.width, c.height).data;
		// Ink is darker than halfway from the paper (the median) to the
		// darkest print (the 1st percentile): pale print counts too.
		const hist = new Array(256).fill(0);
		for (let o = 0; o < px.length; o += 4) hist[Math.round(0.3 * px[o] + 0.59 * px[o + 1] + 0.11 * px[o + 2])]++;
		const level = (q) => { let n = 0; for (let v = 0; v < 256; v++) { n += hist[v]; if (n >= q * px.length / 4) return v; } return 255; };
		const cut = (level(0.5) + level(0.01)) / 2;
		return (x0, y0, x1, y1) => {
			x0 = Math.max(0, Math.floor(x0)); y0 = Math.max(0, Math.floor(y0));
			x1 = Math.min(c.width, Math.ceil(x1)); y1 = Math.min(c.height, Math.ceil(y1));
			let n = 0, d = 0;
			for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) {
				const o = (y * c.width + x) * 4;
				n++;
				if (0.3 * px[o] + 0.59 * px[o + 1] + 0.11 * px[o + 2] < cut) d++;
			}
			return n ? d / n : 0;
		};
	};
	const now = dark(img);
	const ir = img.getBoundingClientRect();
	const sx = img.naturalWidth / ir.width, sy = img.naturalHeight / ir.height;
	const shown = [], boxes = [], texts = [];
	for (const r of document.querySelectorAll("#overlay rect.word")) {
		const b = r.getBBox(), m = r.getScreenCTM();
		const a = new DOMPoint(b.x, b.y).matrixTransform(m), z = new DOMPoint(b.x + b.width, b.y + b.height).matrixTransform(m);
		shown.push(now((a.x - ir.left) * sx, (a.y - ir.top) * sy, (z.x - ir.left) * sx, (z.y - ir.top) * sy));
		boxes.push([b.x, b.y, b.x + b.width, b.y + b.height]);
		texts.push(r.textContent);
	}
	const old = new Image();
	const rot = [90, 180, 270].includes(p.rotation) ? p.rotation : 0;
	const blob = await (await fetch("/api/page?id=" + id + "&page=" + index + "&w=1200&rot=" + rot, {credentials: "same-origin"})).blob();
	old.src = URL.createObjectURL(blob);
	await old.decode();
	const then = dark(old);
	const kx = old.naturalWidth / p.width, ky = old.naturalHeight / p.height;
	const before = boxes.map((b) => then(b[0] * kx, b[1] * ky, b[2] * kx, b[3] * ky));
	return {id: id, page: index + 1, rotation: p.rotation, skew: p.skew_degrees, shown: shown, before: before, texts: texts};
})()`

// inkFigures is what inkMeasure found on one page.
type inkFigures struct {
	ID            string
	Page          int
	Rotation      int
	Skew          float64
	Shown, Before []float64
	Texts         []string
}

// lowMedian are the smallest and the median of v.
func lowMedian(v []float64) (float64, float64) {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0, 0
	}
	return s[0], s[len(s)/2]
}

// pagingWatch records, at every change of the page's label, image or
// boxes, what is on screen; pagingBad lists the records where the label
// names a page and the image or the boxes shown are another's.
const pagingWatch = `(() => {
	window.pagingSeen = [];
	const img = document.getElementById("page-img"), svg = document.getElementById("overlay");
	const note = () => window.pagingSeen.push({label: document.getElementById("page-no").textContent,
		hidden: img.hidden, img: img.dataset.page, boxes: svg.querySelectorAll("rect").length, boxPage: svg.dataset.page});
	const o = new MutationObserver(note);
	for (const e of [document.getElementById("page-no"), img, svg]) o.observe(e, {attributes: true, childList: true, characterData: true, subtree: true});
	// Page 2's image comes late, page 3's soon: paging on past page 2
	// before its image came must not show it when it comes.
	const real = window.fetch;
	window.fetch = (url, opts) => {
		const late = String(url).includes("page=1&") ? 1500 : String(url).includes("page=2&") ? 100 : 0;
		return new Promise((res) => setTimeout(res, late)).then(() => real(url, opts));
	};
	return true;
})()`

const pagingBad = `window.pagingSeen.filter((s) => {
	const m = /^page (\d+) of/.exec(s.label);
	if (!m) return !s.hidden || s.boxes > 0;
	const want = String(+m[1] - 1);
	return (!s.hidden && s.img !== want) || (s.boxes > 0 && s.boxPage !== want);
}).map((s) => JSON.stringify(s))`

// TestDeskGeometry drives the desk in a real Chromium on a page skewed
// 2° and one turned 90° in its image: every word box, as drawn, lies on
// its word's ink in the image shown (its share of dark pixels measured
// against the image's own pixels); paging never shows the old page's
// image or boxes under the new page's label, and a page's image that
// comes after the person paged on is not shown.
func TestDeskGeometry(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed")
	}
	t.Parallel()
	out := geometryBatch(t)
	d := startDesk(t, out, "USER=alice")
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
			if _, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Minute))(ctx, tg); err != nil {
				seen, _ := chromedp.Evaluate[string](`document.getElementById("page-no").textContent + " | " + document.getElementById("msg").textContent + " | " + document.querySelectorAll("#overlay rect.word").length`)(ctx, tg)
				return fmt.Errorf("%s (%s): %w; the desk shows %q", what, expr, err, seen)
			}
			return nil
		})
	}
	shown := func(id string, page int) string {
		return fmt.Sprintf(`(() => { const i = document.getElementById("page-img"); return !i.hidden && i.dataset.doc === "%s" && i.dataset.page === "%d" && `+
			`document.getElementById("page-no").textContent.startsWith("page %d of") && document.querySelectorAll("#overlay rect.word").length > 10 })()`, id, page, page+1)
	}
	var figures []inkFigures
	measure := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		f, err := chromedp.Evaluate[inkFigures](inkMeasure, chromedp.EvalAsValue, chromedp.EvalAwaitPromise)(ctx, tg)
		figures = append(figures, f)
		return err
	})
	var bad []string
	err = chromedp.Do(ctx,
		deskLogin(d, d.Code),
		until("G-1's first page", shown("G-1", 0)),
		measure,
		chromedp.KeyEvent("j"),
		until("G-2's first page", shown("G-2", 0)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](pagingWatch)(ctx, tg)
			return err
		}),
		// Page 2 asked for, then page 3 before page 2's image came.
		chromedp.KeyEvent("]"),
		until("page 2 loading", `document.getElementById("page-no").textContent.startsWith("loading page 2")`),
		chromedp.KeyEvent("]"),
		until("page 3", shown("G-2", 2)),
		chromedp.Sleep(2*time.Second), // page 2's image has come meanwhile
		until("still page 3", shown("G-2", 2)),
		measure,
		chromedp.KeyEvent("["),
		until("page 2", shown("G-2", 1)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
			bad, err = chromedp.Evaluate[[]string](pagingBad)(ctx, tg)
			return err
		}),
		measure,
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("paging showed another page's image or boxes under the label:\n%v", bad)
	}
	checkInk(t, figures)
	if err := chromedp.Do(ctx, deskWithdrawAndUndo(until)...); err != nil {
		t.Fatal(err)
	}
	withdrawnEverywhere(t, out)
}

// deskWithdrawAndUndo, on G-2 at the desk: a transcription made and
// withdrawn (asked once), another made and kept; a reject asked once and
// cancelled by Escape, asked again and confirmed with Enter, then undone
// from the message's Undo button.
func deskWithdrawAndUndo(until func(what, expr string) chromedp.Action[chromedp.Void]) []chromedp.Action[chromedp.Void] {
	msgHas := func(s string) string { return `document.getElementById("msg").textContent.includes("` + s + `")` }
	asked := `document.getElementById("confirm").open`
	transcribe := func(text string, n int) []chromedp.Action[chromedp.Void] {
		return []chromedp.Action[chromedp.Void]{
			chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := chromedp.Evaluate[bool](deskDrag)(ctx, tg)
				return err
			}),
			until("the region chosen", `document.getElementById("region").textContent.startsWith("page 2, region")`),
			chromedp.SetValue(chromedp.ID("tr-text"), text),
			chromedp.Click(chromedp.ID("btn-transcribe")),
			until("the transcription saved", msgHas("transcription saved")+fmt.Sprintf(` && document.querySelectorAll("#transcriptions .withdraw-btn").length === %d`, n)),
		}
	}
	steps := transcribe("Zanzibar quokka", 1)
	steps = append(steps,
		chromedp.Click(chromedp.CSS("#transcriptions .withdraw-btn")),
		until("a withdrawal asks once", asked),
		chromedp.Click(chromedp.ID("confirm-yes")),
		until("withdrawn", msgHas("withdrawn for G-2")+` && document.querySelectorAll("#transcriptions li.withdrawn").length === 1 && document.querySelectorAll("#overlay rect.typed").length === 0`),
	)
	steps = append(steps, transcribe("Kept marmalade", 1)...)
	return append(steps,
		chromedp.KeyEvent("r"),
		until("a reject asks once", asked+` && document.activeElement.id === "confirm-yes"`),
		chromedp.KeyEvent(kb.Escape),
		until("cancelled by Escape", `!`+asked+` && `+msgHas("reject cancelled")+` && document.getElementById("doc-reason").textContent.startsWith("review")`),
		chromedp.Click(chromedp.ID("btn-reject")),
		until("asked again", asked),
		chromedp.KeyEvent(kb.Enter),
		until("rejected, with an undo", msgHas("G-2 reject")+` && document.getElementById("btn-undo") !== null`),
		chromedp.Click(chromedp.ID("btn-undo")),
		until("undone: in review again", msgHas("G-2 undo")+` && document.getElementById("doc-title").textContent.startsWith("G-2 ") && document.getElementById("doc-reason").textContent.startsWith("review")`),
	)
}

// withdrawnEverywhere: the withdrawal and the undo made at the desk are
// in review --json, the report and verify; the exports carry the kept
// transcription, not the withdrawn one; the kept one withdrawn from the
// CLI leaves the exports too, and a second withdrawal of it is refused.
func withdrawnEverywhere(t *testing.T, out string) {
	t.Helper()
	var items []review.ReviewItem
	r := refbatch(t, nil, "review", "--out", out, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil {
		t.Fatalf("review --json: %v\n%s", err, r.stdout)
	}
	for _, it := range items {
		if it.SourceID == "G-2" && (it.Decision == nil || it.Decision.Action != "undo" || it.Transcriptions != 2 || it.TranscriptionsWithdrawn != 1) {
			t.Errorf("review --json G-2: decision %+v, transcriptions %d, withdrawn %d; want undo, 2, 1", it.Decision, it.Transcriptions, it.TranscriptionsWithdrawn)
		}
	}
	if r := refbatch(t, nil, "report", "--out", out); r.code != exitOK {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	for _, row := range readReport(t, out).Rows {
		if row.SourceID == "G-2" && (row.Decision == nil || row.Decision.Action != "undo" || row.Transcriptions == nil || *row.Transcriptions != (report.Transcriptions{Made: 2, Withdrawn: 1})) {
			t.Errorf("report G-2: decision %+v, transcriptions %+v; want undo, 2 made, 1 withdrawn", row.Decision, row.Transcriptions)
		}
	}
	verified := func(want string) {
		if v := refbatch(t, nil, "verify", "--out", out); v.code != exitOK || !strings.Contains(v.stdout, want) {
			t.Errorf("verify: exit %d, want 0 and %q\n%s%s", v.code, want, v.stdout, v.stderr)
		}
	}
	verified("decisions checked 2, transcriptions 2 (1 withdrawn)")
	// Each transcription records the image its box was drawn on.
	if r := refbatch(t, nil, "show", "--out", out, "--json", "G-2"); !regexp.MustCompile(`"geometry":\s*"canvas"`).MatchString(r.stdout) {
		t.Errorf("show --json G-2: no transcription drawn on the canvas (exit %d)", r.code)
	}
	exported(t, out, "Kept marmalade", "Zanzibar quokka")
	if r := refbatch(t, nil, "review", "undo", "--out", out, "G-2"); r.code != exitOK {
		t.Fatalf("undo: exit %d\n%s", r.code, r.stderr)
	}
	if r := refbatch(t, nil, "review", "withdraw", "--out", out, "--note", "typed on the wrong page", "G-2", "1"); r.code != exitOK ||
		!strings.Contains(r.stdout, "withdraw G-2: transcription 1 (page 2) withdrawn") {
		t.Fatalf("review withdraw: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := refbatch(t, nil, "review", "withdraw", "--out", out, "G-2", "1"); r.code != exitUsage || !strings.Contains(r.stderr, "no such transcription") {
		t.Errorf("a second withdrawal: exit %d, want %d\n%s", r.code, exitUsage, r.stderr)
	}
	verified("transcriptions 2 (2 withdrawn)")
	exported(t, out, "", "Kept marmalade")
}

// exported accepts G-2 and exports it as text, ALTO and PDF: each holds
// the transcription kept (when not "") and not the one withdrawn.
func exported(t *testing.T, out, kept, withdrawn string) {
	t.Helper()
	if r := refbatch(t, nil, "review", "accept", "--out", out, "G-2"); r.code != exitOK {
		t.Fatalf("accept: exit %d\n%s", r.code, r.stderr)
	}
	dest := filepath.Join(t.TempDir(), "export")
	if r := refbatch(t, nil, "export", "--out", out, "--to", dest, "--format", "txt,alto,pdf", "--pdfa=best-effort"); r.code != exitOK {
		t.Fatalf("export: exit %d\n%s", r.code, r.stderr)
	}
	exts := []string{".txt", ".alto.xml", ".pdf"}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		exts = exts[:2] // the PDF's text is read by pdftotext
	}
	for _, ext := range exts {
		m, _ := filepath.Glob(filepath.Join(dest, "*G-2*"+ext))
		if len(m) != 1 {
			t.Errorf("export wrote %v for G-2, want one %s file", m, ext)
			continue
		}
		text := exportedText(t, m[0])
		if kept != "" && !strings.Contains(text, kept) {
			t.Errorf("%s: the transcription kept is not in it", filepath.Base(m[0]))
		}
		if strings.Contains(text, withdrawn) {
			t.Errorf("%s: the transcription withdrawn is in it", filepath.Base(m[0]))
		}
	}
}

// exportedText is an exported file's words, spaces collapsed: the text,
// the ALTO's CONTENT attributes, or pdftotext's reading of the PDF.
func exportedText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasSuffix(path, ".alto.xml"):
		var words []string
		for _, m := range regexp.MustCompile(`CONTENT="([^"]*)"`).FindAllStringSubmatch(string(b), -1) {
			words = append(words, m[1])
		}
		return strings.Join(words, " ")
	case strings.HasSuffix(path, ".pdf"):
		cmd := exec.Command("pdftotext", path, "-")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("pdftotext: %v", err)
		}
		b = out
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// checkInk holds the pages measured (G-1's page 1, G-2's pages 3 and 2)
// to the corpus's truth and every word box to its ink.
func checkInk(t *testing.T, figures []inkFigures) {
	t.Helper()
	if len(figures) != 3 {
		t.Fatalf("measured %d pages, want 3", len(figures))
	}
	for _, f := range figures {
		low, mid := lowMedian(f.Shown)
		blow, bmid := lowMedian(f.Before)
		t.Logf("%s page %d (rotation %d, skew %.2f°): %d word boxes, ink share min %.3f median %.3f; on the image as the desk showed it before: min %.3f median %.3f",
			f.ID, f.Page, f.Rotation, f.Skew, len(f.Shown), low, mid, blow, bmid)
		turned := f.ID == "G-2" && f.Page == 2
		if turned && f.Rotation != 90 && f.Rotation != 270 {
			t.Errorf("%s page %d read with rotation %d: the corpus turned it 90° in its image", f.ID, f.Page, f.Rotation)
		}
		if f.Skew < -2.5 || f.Skew > -1 {
			t.Errorf("%s page %d read with skew %.2f°: the corpus skewed it 1.5–2°", f.ID, f.Page, f.Skew)
		}
		if least := slices.Index(f.Shown, low); len(f.Shown) < 10 || low < 0.02 {
			t.Errorf("%s page %d: %d word boxes, the least inked %.3f dark (%q): a box off its ink", f.ID, f.Page, len(f.Shown), low, f.Texts[max(least, 0)])
		}
	}
}
