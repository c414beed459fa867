package main

import (
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/batch"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// offsetsScript, appended to a copy of report.html, writes where Chromium
// laid out each part of the page (its top, in CSS pixels from the top of
// the page) into an element at the end of the page, after every other:
// --dump-dom then carries the layout out. The report itself has no script.
const offsetsScript = `<script>
(function () {
  var marks = {outcome: "#outcome", review: "#review", rejected: "#rejected", chart: "svg.chart",
    done: "#done", duplicate: "#duplicate", runs: "table.runs"};
  var out = {};
  for (var k in marks) {
    var e = document.querySelector(marks[k]);
    out[k] = e ? Math.round(e.getBoundingClientRect().top + window.scrollY) : -1;
  }
  var p = document.createElement("pre");
  p.id = "refbatch-offsets";
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
})();
</script>`

// TestReportHTMLLeadsWithWork builds, without OCR (batchtest/finished),
// the batch a run of part of the sample leaves with a participant ID
// changed in one row (review id_not_found: its document reads at 96) and
// the low band raised to 95.8, so that a document read at 95.7 goes to
// review low_confidence, beside the sample's rejections, a duplicate and
// a conflict. Headless Chromium then renders report.html: the
// review lane and the rejected rows must come before the first chart, in
// the page's source and as laid out, and the review lane must be on the
// first screen. The screenshot is kept in REFBATCH_SCREENSHOT_DIR when set,
// else in the test's temporary folder (its path is logged).
func TestReportHTMLLeadsWithWork(t *testing.T) {
	chromium(t) // skip before the run when there is no Chromium
	t.Parallel()
	dir := t.TempDir()
	rows := sampleRows(t, dir, "R-0001", "R-0002", "R-0003", "R-0007", "R-0011", "R-0012", "R-0014", "R-0015", "R-0017", "R-0019")
	for i, r := range rows {
		switch r.SourceID {
		case "R-0003":
			rows[i] = withConf(r, "95.7")
		case "R-0007":
			rows[i] = withConf(r, "96.2")
			rows[i].ParticipantID = "P-000000"
		default:
			rows[i] = withConf(r, "99")
		}
	}
	out := filepath.Join(dir, "out")
	finishedBatchWith(t, dir, out, rows, func(o *batch.Options) { o.HighConfidence, o.LowConfidence = 98, 95.8 })
	rep := readReport(t, out)
	if rep.Summary.States[outcome.Review] == 0 || rep.Summary.States[outcome.Rejected] == 0 {
		t.Fatalf("the batch has no review or no rejected rows to show: %v", rep.Summary.States)
	}
	if rep.Summary.Reasons[outcome.IDNotFound] != 1 || rep.Summary.Reasons[outcome.LowConfidence] == 0 {
		t.Errorf("reasons %v, want one id_not_found and some low_confidence", rep.Summary.Reasons)
	}
	page := filepath.Join(out, report.HTMLFile)
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("source order", func(t *testing.T) {
		s := string(src)
		at := func(mark string) int {
			i := strings.Index(s, mark)
			if i < 0 {
				t.Fatalf("report.html lacks %q", mark)
			}
			return i
		}
		review, rejected, chart := at(`<section id="review"`), at(`<section id="rejected"`), at("<svg ")
		if !(at(`<section id="outcome">`) < review && review < rejected && rejected < chart && chart < at(`<section id="done">`)) {
			t.Error("report.html is not in the order: state cards, review lane, rejected rows, charts, done rows")
		}
		// Within the lane, id_not_found (the most urgent) leads.
		if i, j := at("<h3>id_not_found"), at("<h3>low_confidence"); !(review < i && i < j && j < rejected) {
			t.Error("id_not_found does not lead the review lane")
		}
		text := html.UnescapeString(s)
		for _, want := range []string{"rerun with --root DIR", "date as YYYY-MM-DD", "Add the file at the path, or fix the path",
			"refbatch review retry --dpi 400 SOURCE_ID", `href="#review"`, `href="#rejected"`} {
			if !strings.Contains(text, want) {
				t.Errorf("report.html does not say %q", want)
			}
		}
	})

	t.Run("layout in Chromium", func(t *testing.T) {
		probe := filepath.Join(t.TempDir(), "probe.html")
		withScript := strings.Replace(string(src), "</body>", offsetsScript+"\n</body>", 1)
		if err := os.WriteFile(probe, []byte(withScript), 0o600); err != nil {
			t.Fatal(err)
		}
		dom := dumpDOM(t, probe)
		m := regexp.MustCompile(`<pre id="refbatch-offsets">([^<]*)</pre>`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("the DOM Chromium dumped has no offsets (did the script run?):\n%.2000s", dom)
		}
		var top map[string]int
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &top); err != nil {
			t.Fatalf("offsets %q: %v", m[1], err)
		}
		t.Logf("offsets (CSS px from the top): %v", top)
		for _, k := range []string{"outcome", "review", "rejected", "chart", "done", "duplicate", "runs"} {
			if top[k] < 0 {
				t.Errorf("Chromium found no %s on the page", k)
			}
		}
		if !(top["outcome"] < top["review"] && top["review"] < top["rejected"] && top["rejected"] < top["chart"]) {
			t.Errorf("as laid out, the review lane (%d) and the rejected rows (%d) are not between the state cards (%d) and the first chart (%d)",
				top["review"], top["rejected"], top["outcome"], top["chart"])
		}
		if !(top["chart"] < top["runs"] && top["runs"] < top["done"] && top["done"] < top["duplicate"]) {
			t.Errorf("as laid out, the charts (%d), runs (%d), done (%d) and duplicate (%d) rows are out of order",
				top["chart"], top["runs"], top["done"], top["duplicate"])
		}
		const screen = 2000 // --window-size's height: the screenshot
		if top["review"] >= screen/2 {
			t.Errorf("the review lane starts at %dpx, not in the top half of the first screen", top["review"])
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		shot, netlog := screenshot(t, page)
		if got := pageRequests(t, netlog); len(got) > 0 {
			t.Errorf("report.html made network requests: %q", got)
		}
		keep := os.Getenv("REFBATCH_SCREENSHOT_DIR")
		if keep == "" {
			keep = t.TempDir()
		}
		dst := filepath.Join(keep, "report-leads-with-work.png")
		copyFile(t, shot, dst)
		t.Logf("screenshot of report.html: %s", dst)
	})
}
