package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

var (
	hrefAttr = regexp.MustCompile(`href="([^"]*)"`)
	idAttr   = regexp.MustCompile(`id="([^"]*)"`)
)

// checkLinks fails unless every link of page goes to a section of the
// page itself: report.html links nowhere else.
func checkLinks(t *testing.T, page string) {
	t.Helper()
	ids := map[string]bool{}
	for _, m := range idAttr.FindAllStringSubmatch(page, -1) {
		ids[m[1]] = true
	}
	for _, m := range hrefAttr.FindAllStringSubmatch(page, -1) {
		target, ok := strings.CutPrefix(m[1], "#")
		if !ok {
			t.Errorf("link to %q, out of the page", m[1])
		} else if !ids[target] {
			t.Errorf("link to %q, which no element of the page has as its id", m[1])
		}
	}
}

// TestHTMLLeadsWithWork: report.html puts what needs a person right after
// the state cards (the review lane, then the rejected rows with their
// fixes), then the figures and charts, then the lists of rows that need
// nothing, and the settings and versions last; each final state's card
// links to its list.
func TestHTMLLeadsWithWork(t *testing.T) {
	var buf bytes.Buffer
	if err := fixture().WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	order := []string{`<section id="outcome">`, `<section id="review"`, `<section id="rejected"`, `<section id="throughput">`,
		"<svg ", `<section id="done">`, `<section id="duplicate">`, `<details class="allrows">`, "<h2>Settings</h2>", "<h2>Versions</h2>"}
	last := -1
	for _, mark := range order {
		i := strings.Index(page, mark)
		switch {
		case i < 0:
			t.Errorf("page lacks %q", mark)
		case i < last:
			t.Errorf("%q comes before what should precede it (order %q)", mark, order)
		default:
			last = i
		}
	}
	for _, st := range finalStates() {
		if !strings.Contains(page, `<a class="card `+stateClass(st)+`" href="#`+string(st)+`">`) {
			t.Errorf("the %s card does not link to its list", st)
		}
	}
	checkLinks(t, page)

	text := html.UnescapeString(page)
	wants := []string{
		"5 rows need a person: 2 to review, 3 rejected to fix.",
		// The fixture's rejections, with their fixes and rows.
		explanations[outcome.NotPDF].fix, explanations[outcome.MissingField].fix,
		`5 R-0004, 8 R-0006`,
		// The review lane names the commands that decide a row.
		"refbatch review accept --note TEXT SOURCE_ID",
		"refbatch review retry --dpi 400 SOURCE_ID",
		"refbatch review reject --note TEXT SOURCE_ID",
		// The rows that need nothing, compactly.
		"Done (2)", "Duplicates (1)",
	}
	for _, want := range wants {
		if !strings.Contains(stripTags(text), want) {
			t.Errorf("page does not say %q", want)
		}
	}
}

// TestReviewDecisions: a review reason whose document has no text is not
// offered accept; every one is offered retry and reject.
func TestReviewDecisions(t *testing.T) {
	for _, r := range outcome.Reasons() {
		if r.State() != outcome.Review {
			continue
		}
		var cmds []string
		for _, d := range reviewDecisions(r) {
			cmds = append(cmds, d.Command)
		}
		all := strings.Join(cmds, "\n")
		accept := strings.Contains(all, "review accept")
		if accept == explanations[r].noText {
			t.Errorf("%s: accept offered %v, but noText is %v", r, accept, explanations[r].noText)
		}
		if !strings.Contains(all, "review retry") || !strings.Contains(all, "review reject") {
			t.Errorf("%s: decisions %q lack retry or reject", r, cmds)
		}
	}
}

var tag = regexp.MustCompile(`<[^>]*>`)

// stripTags leaves the text of an HTML fragment, its markup removed.
func stripTags(s string) string { return tag.ReplaceAllString(s, "") }

// TestRejectedFixNamesRoot: the fix of path_outside_root names the root the
// run had, when the report recorded it.
func TestRejectedFixNamesRoot(t *testing.T) {
	rows := []Row{{ManifestLine: 2, SourceID: "R-1", State: outcome.Rejected, Reason: outcome.PathOutsideRoot}}
	for root, want := range map[string]string{"/srv/scans": "The root was /srv/scans.", "": "or fix the path.</td>"} {
		r := &Report{Run: Run{Manifest: "m.csv", Settings: map[string]string{"root": root}}, Rows: rows, Summary: Summarize(rows)}
		var buf bytes.Buffer
		if err := r.WriteHTML(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("root %q: page lacks %q", root, want)
		}
	}
}
