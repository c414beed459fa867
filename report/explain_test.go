package report

import (
	"bytes"
	"html"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report/outcome"
)

// TestEveryReasonExplained: report.html explains every reason of the
// vocabulary, a rejection by what it means and how to fix it, a review
// reason by what to look at, each review reason at its own place in the
// lane, and the page shows that text.
func TestEveryReasonExplained(t *testing.T) {
	ranks := map[int]outcome.Reason{}
	for _, r := range outcome.Reasons() {
		e, ok := explanations[r]
		switch {
		case !ok:
			t.Errorf("%s has no explanation", r)
		case r.State() == outcome.Rejected && (e.meaning == "" || e.fix == "" || e.action != "" || e.rank != 0 || e.retry != "" || e.noText):
			t.Errorf("rejection %s: %+v, want a meaning and a fix only", r, e)
		case r.State() == outcome.Review && (e.action == "" || e.meaning != "" || e.fix != "" || e.rank < 1):
			t.Errorf("review reason %s: %+v, want an action and a rank", r, e)
		case r.State() == outcome.Review && ranks[e.rank] != "":
			t.Errorf("review reasons %s and %s share rank %d", ranks[e.rank], r, e.rank)
		}
		if e.rank > 0 {
			ranks[e.rank] = r
		}
	}
	for r := range explanations {
		if r.State() == "" {
			t.Errorf("explanation of %q, which is not a reason of package outcome", r)
		}
	}

	rep := everyReason()
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(buf.String())
	for _, r := range outcome.Reasons() {
		texts := []string{explanations[r].meaning, explanations[r].fix}
		if r.State() == outcome.Review {
			texts = []string{reviewAction(r, 77)}
		}
		for _, text := range texts {
			if !strings.Contains(page, text) {
				t.Errorf("report.html does not say, for %s: %q", r, text)
			}
		}
	}
	if want := "(confidence below 77)"; !strings.Contains(page, want) {
		t.Errorf("report.html does not give the low band's threshold: %q", want)
	}
}

// TestLowConfidenceWithoutBands: a report without band thresholds names
// none, rather than a made-up one.
func TestLowConfidenceWithoutBands(t *testing.T) {
	if got := reviewAction(outcome.LowConfidence, 0); strings.Contains(got, "below") || strings.Contains(got, "%") {
		t.Errorf("action without a threshold: %q", got)
	}
	if got := reviewAction(outcome.LowConfidence, 60); !strings.Contains(got, "(confidence below 60)") {
		t.Errorf("action with a threshold of 60: %q", got)
	}
}

// TestManualOutcomes: the Outcomes table of the manual's outcomes topic
// (refbatch help outcomes) has a row per final state listing exactly the
// reasons of that state.
func TestManualOutcomes(t *testing.T) {
	b, err := os.ReadFile("../cmd/refbatch/topics/outcomes.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut("\n"+string(b), "\n# Outcomes\n")
	if !ok {
		t.Fatal("the outcomes topic has no Outcomes section")
	}
	section, _, _ = strings.Cut(section, "\n# ")
	code := regexp.MustCompile("`([^`]+)`")
	table := map[outcome.State][]outcome.Reason{}
	for line := range strings.Lines(section) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue // not a row of the table, or its header
		}
		m := code.FindStringSubmatch(cells[1])
		st := outcome.State(m[1])
		if _, dup := table[st]; dup {
			t.Errorf("state %s has two rows", st)
		}
		table[st] = []outcome.Reason{}
		for _, m := range code.FindAllStringSubmatch(cells[3], -1) {
			table[st] = append(table[st], outcome.Reason(m[1]))
		}
	}
	for _, st := range outcome.States() {
		if !st.Final() {
			continue
		}
		got, ok := table[st]
		if !ok {
			t.Errorf("the Outcomes table has no row for %s", st)
			continue
		}
		delete(table, st)
		var want []outcome.Reason
		for _, r := range outcome.Reasons() {
			if r.State() == st {
				want = append(want, r)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("the Outcomes table lists for %s\n  %v\nwant\n  %v", st, got, want)
		}
	}
	for st := range table {
		t.Errorf("the Outcomes table has a row for %s, which is not a final state", st)
	}
}

// TestSummaryExplains: the run's text summary explains each reason it
// counts with what report.html says of it, and Explain gives the log the
// same words.
func TestSummaryExplains(t *testing.T) {
	rep := everyReason()
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, r := range outcome.Reasons() {
		e := explanations[r]
		want := e.fix
		if r.State() == outcome.Review {
			want = reviewAction(r, 77)
		}
		if !strings.Contains(buf.String(), string(r)+" ") || !strings.Contains(buf.String(), want) {
			t.Errorf("summary does not explain %s with %q", r, want)
		}
		if got := Explain(r); got == "" || (e.fix != "" && !strings.HasSuffix(got, e.fix)) {
			t.Errorf("Explain(%s) = %q", r, got)
		}
	}
	if got := Explain(outcome.BadDate); got != "referral_date is not a real YYYY-MM-DD date. Write the date as YYYY-MM-DD, a day that exists (2024-02-30 does not)." {
		t.Errorf("Explain(bad_date) = %q", got)
	}
}

// everyReason is a report with one row of each reason, and bands set.
func everyReason() *Report {
	var rows []Row
	for i, r := range outcome.Reasons() {
		rows = append(rows, Row{ManifestLine: i + 2, SourceID: "R-" + string(r), State: r.State(), Reason: r})
	}
	rep := &Report{Rows: rows, Summary: Summarize(rows)}
	rep.Summary.ConfidenceBands = Bands{High: 94.3, Low: 77}
	return rep
}

// TestAdviceFromDetail: the advice for a refusal follows its detail: a
// page of gigapixels (the real corpus's hugemono.pdf) or a decompression
// bomb is not told to raise a limit, an ordinary oversized image is.
func TestAdviceFromDetail(t *testing.T) {
	for _, tt := range []struct {
		reason outcome.Reason
		detail string
		raise  bool
	}{
		{outcome.PageTooLarge, "image object 5 is 9000×9000 px, 81 Mpx, over the 50 Mpx cap", true},
		{outcome.PageTooLarge, "page 1 is 8400×8400 pt, 136 Mpx even at 100 dpi, over the 50 Mpx cap", false},
		{outcome.PageTooLarge, "image object 7 is 35000×35000 px, 1225 Mpx, over the 50 Mpx cap", false},
		{outcome.MalformedPDF, "object 4 decodes to more than 256 MiB (a decompression bomb)", false},
	} {
		got := Advice(tt.reason, tt.detail)
		if raises := strings.Contains(got, "Rerun with a larger"); raises != tt.raise {
			t.Errorf("Advice(%s, %q) = %q: tells to raise a limit %v, want %v", tt.reason, tt.detail, got, raises, tt.raise)
		}
	}
}
