package eval

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

func TestFaintRecall(t *testing.T) {
	tests := []struct {
		name              string
		ocr, truth, faint string
		wantFound, wantOf int
	}{
		{name: "every word read", ocr: "Body text.\nNote: latex allergy.", truth: "Body text.\nNote: latex allergy.", faint: "Note: latex allergy.", wantFound: 3, wantOf: 3},
		{name: "nothing read", ocr: "Body text.", truth: "Body text.\nNote: latex allergy.", faint: "Note: latex allergy.", wantFound: 0, wantOf: 3},
		{name: "white space and line breaks do not matter", ocr: "Body  text. Note:\n\nlatex   allergy.", truth: "Body text.\nNote: latex allergy.", faint: "Note:\nlatex allergy.", wantFound: 3, wantOf: 3},
		{name: "punctuation is part of a word", ocr: "Body text. Note; latex allergy", truth: "Body text.\nNote: latex allergy.", faint: "Note: latex allergy.", wantFound: 1, wantOf: 3},
		{name: "a word the rest of the page accounts for is not the faint one",
			ocr: "the participant the participant", truth: "the participant the participant\nthe participant is deaf", faint: "the participant is deaf", wantFound: 0, wantOf: 4},
		{name: "a copy beyond the rest of the page is",
			ocr: "the participant the participant the deaf", truth: "the participant the participant\nthe participant is deaf", faint: "the participant is deaf", wantFound: 2, wantOf: 4},
		{name: "as a multiset: one copy read once", ocr: "tests tests", truth: "x\nblood tests, blood tests", faint: "blood tests, blood tests", wantFound: 1, wantOf: 4},
		{name: "no faint print", ocr: "a", truth: "a", faint: " \n", wantFound: 0, wantOf: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := faintRecall(tc.ocr, tc.truth, tc.faint)
			if got.Found != tc.wantFound || got.Of != tc.wantOf {
				t.Fatalf("faintRecall = %+v, want %d of %d", got, tc.wantFound, tc.wantOf)
			}
			if tc.wantOf > 0 && math.Abs(got.Rate-float64(tc.wantFound)/float64(tc.wantOf)) > 1e-12 {
				t.Errorf("rate %v", got.Rate)
			}
		})
	}
}

// coverageFixture is a corpus of coverage documents: F1 reads its faint
// note (done), F2 does not (done: the failure), F3 does not and is
// flagged, C1 has a column page read in order and C2 one read across, K1
// is a clean control flagged (a false alarm), K2 a clean document done,
// S1 a stamped document allowed to end incomplete and flagged, and D1 a
// doubted document in review. shares are the artifacts' uncovered shares
// by source ID; nil leaves them out.
func coverageFixture(shares map[string]float64) Input {
	body := "Participant ID: P-1\nReferral date: 2024-01-02"
	note := "Note from the office: latex allergy, hearing poor."
	faintPage := TruthPage{Text: body + "\n" + note, FaintText: note}
	cols := "Clinical summary\nBackground\nfirst column words\nCurrent plan\nsecond column words"
	across := "Clinical summary\nBackground Current plan\nfirst column words second column words"
	maybe := []Outcome{{"done", ""}, {"review", outcome.IncompleteText}}
	done := []Outcome{{"done", ""}}
	in := Input{Truth: map[string]*Truth{}, Texts: map[string][]string{}}
	add := func(id string, allowed []Outcome, got Outcome, truth []TruthPage, ocr ...string) {
		in.Expected = append(in.Expected, Expected{id, allowed})
		in.Rows = append(in.Rows, report.Row{ManifestLine: len(in.Rows) + 2, SourceID: id, State: outcome.State(got.State), Reason: outcome.Reason(got.Reason),
			Band: outcome.BandHigh, MeanConfidence: 95, Artifact: "artifacts/" + id})
		in.Truth[id] = &Truth{SourceID: id, Pages: truth}
		in.Texts["artifacts/"+id] = ocr
		if v, ok := shares[id]; ok {
			if in.Coverage == nil {
				in.Coverage = map[string][]PageCoverage{}
			}
			words := 2
			in.Coverage["artifacts/"+id] = []PageCoverage{{UncoveredShare: &v, RecoveredWords: &words}}
		}
	}
	add("F1", maybe, Outcome{"done", ""}, []TruthPage{faintPage}, body+"\n"+note)
	add("F2", maybe, Outcome{"done", ""}, []TruthPage{faintPage}, body+"\nNote from")
	add("F3", maybe, Outcome{"review", outcome.IncompleteText}, []TruthPage{faintPage}, body)
	add("C1", done, Outcome{"done", ""}, []TruthPage{{Text: cols, Columns: true}}, cols)
	add("C2", done, Outcome{"done", ""}, []TruthPage{{Text: cols, Columns: true}}, across)
	add("K1", done, Outcome{"review", outcome.IncompleteText}, []TruthPage{{Text: body}}, body)
	add("K2", done, Outcome{"done", ""}, []TruthPage{{Text: body}}, body)
	add("S1", maybe, Outcome{"review", outcome.IncompleteText}, []TruthPage{{Text: body + "\nstamped line"}}, body)
	add("D1", []Outcome{{"review", "low_confidence"}}, Outcome{"review", "low_confidence"}, []TruthPage{{Text: body}}, "P-1")
	return in
}

func TestScoreCoverage(t *testing.T) {
	res, err := Score(coverageFixture(nil))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Coverage
	want := &Coverage{
		Documents: 6, Bands: map[outcome.Band]int{outcome.BandHigh: 6},
		FaintDocuments: 3, FaintRead: 1, FaintFlagged: 1, FaintUnflagged: 1, FaintUnflaggedIDs: []string{"F2"},
		FaintWords:  Recall{Found: 8 + 2, Of: 24, Rate: 10.0 / 24},
		ColumnPages: 2, ColumnMaxSource: "C2", ColumnMaxPage: 1,
		CleanDocuments: 4, FalseAlarms: 1, FalseAlarmIDs: []string{"K1"},
	}
	got := *c
	got.MeanCER, got.ColumnMeanCER, got.ColumnMaxCER = 0, 0, 0
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("coverage\n got %+v\nwant %+v", got, *want)
	}
	if c.ColumnMaxCER < 0.1 || math.Abs(c.ColumnMeanCER-c.ColumnMaxCER/2) > 1e-12 {
		t.Errorf("column CER mean %v max %v: C1 reads 0, C2 across its columns", c.ColumnMeanCER, c.ColumnMaxCER)
	}
	// Only K1 and K2 are ordinary documents: the coverage documents and
	// the doubted one stay out of the text figures and the calibration.
	if x := res.Text; x.Documents != 2 || x.Pages != 2 || x.Doubted != 1 {
		t.Errorf("text %d documents, %d pages, %d doubted; want 2, 2, 1", x.Documents, x.Pages, x.Doubted)
	}
	for _, b := range res.Calibration {
		if b.Band == outcome.BandHigh && !reflect.DeepEqual(b.SourceIDs, []string{"K1", "K2", "D1"}) {
			t.Errorf("high band holds %v, want K1, K2 and the doubted D1", b.SourceIDs)
		}
	}
	for _, d := range res.Text.Docs {
		if want := strings.ContainsAny(d.SourceID[:1], "FCS"); d.Coverage != want {
			t.Errorf("%s: coverage %v, want %v", d.SourceID, d.Coverage, want)
		}
		if (d.FaintWords != nil) != (d.SourceID[0] == 'F') {
			t.Errorf("%s: faint words %+v", d.SourceID, d.FaintWords)
		}
		if d.MaxUncoveredShare != nil || d.Pages[0].UncoveredShare != nil {
			t.Errorf("%s: an uncovered share with no artifact recording one", d.SourceID)
		}
	}
	if res.SuggestedCoverage != nil {
		t.Errorf("suggested %+v with no share recorded", res.SuggestedCoverage)
	}
}

func TestScoreCoverageShares(t *testing.T) {
	// K2 records none: once any artifact does, a page without one counts
	// as covered (a build may leave out a share of 0).
	res, err := Score(coverageFixture(map[string]float64{"F1": 0.01, "F2": 0.2, "F3": 0.3, "C1": 0.02, "K1": 0.05, "S1": 0.4, "D1": 0.9}))
	if err != nil {
		t.Fatal(err)
	}
	shares := map[string]*float64{}
	for _, d := range res.Text.Docs {
		shares[d.SourceID] = d.MaxUncoveredShare
	}
	if s := shares["K2"]; s == nil || *s != 0 {
		t.Errorf("K2's share %v, want 0", s)
	}
	if s := shares["F2"]; s == nil || *s != 0.2 {
		t.Errorf("F2's share %v, want 0.2", s)
	}
	var f1 DocScore
	for _, d := range res.Text.Docs {
		if d.SourceID == "F1" {
			f1 = d
		}
	}
	if f1.RecoveredWords == nil || *f1.RecoveredWords != 2 {
		t.Errorf("F1's recovered words %v, want 2", f1.RecoveredWords)
	}
	// Flag F2 (0.2) and F3 (0.3); the clean ones are C1 0.02, C2 0, K1
	// 0.05, K2 0: the middle of 0.05 and 0.2.
	want := CoverageThreshold{Threshold: 0.1, MustFlag: 2, MustMin: 0.2, Clean: 4, CleanFlagged: 0, CleanMax: 0.05, FaintRead: 1, FaintReadFlagged: 0}
	if res.SuggestedCoverage == nil || *res.SuggestedCoverage != want {
		t.Errorf("suggested %+v, want %+v", res.SuggestedCoverage, want)
	}
}

func TestSuggestCoverage(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	faint := func(id string, rate, v float64) DocScore {
		return DocScore{SourceID: id, Read: true, FaintWords: &Recall{Found: int(rate * 10), Of: 10, Rate: rate}, MaxUncoveredShare: share(v)}
	}
	clean := func(id string, v float64) DocScore {
		return DocScore{SourceID: id, Read: true, MaxUncoveredShare: share(v)}
	}
	tests := []struct {
		name string
		docs []DocScore
		want CoverageThreshold
		ok   bool
	}{
		{name: "no share recorded", docs: []DocScore{{SourceID: "A", Read: true}}},
		{name: "a clear gap", ok: true, docs: []DocScore{faint("A", 0.3, 0.12), faint("B", 0, 0.4), clean("C", 0.01), clean("D", 0.03)},
			want: CoverageThreshold{Threshold: 0.08, MustFlag: 2, MustMin: 0.12, Clean: 2, CleanMax: 0.03}},
		{name: "rounded to the fewest decimals inside the gap", ok: true, docs: []DocScore{faint("A", 0.3, 0.037), clean("C", 0.031)},
			want: CoverageThreshold{Threshold: 0.034, MustFlag: 1, MustMin: 0.037, Clean: 1, CleanMax: 0.031}},
		{name: "overlap: the clean documents above are flagged", ok: true, docs: []DocScore{faint("A", 0.5, 0.1), clean("C", 0.04), clean("D", 0.2)},
			want: CoverageThreshold{Threshold: 0.07, MustFlag: 1, MustMin: 0.1, Clean: 2, CleanFlagged: 1, CleanMax: 0.2}},
		{name: "faint print read well is neither side, but counted when flagged", ok: true,
			docs: []DocScore{faint("A", 0.2, 0.3), faint("B", 0.9, 0.5), faint("E", 0.85, 0.01), clean("C", 0.1)},
			want: CoverageThreshold{Threshold: 0.2, MustFlag: 1, MustMin: 0.3, Clean: 1, CleanMax: 0.1, FaintRead: 2, FaintReadFlagged: 1}},
		{name: "nothing to flag", ok: true, docs: []DocScore{faint("A", 0.9, 0.02), clean("C", 0.04)},
			want: CoverageThreshold{Clean: 1, CleanMax: 0.04, FaintRead: 1}},
		{name: "no clean document", ok: true, docs: []DocScore{faint("A", 0, 0.34)},
			want: CoverageThreshold{Threshold: 0.2, MustFlag: 1, MustMin: 0.34}},
		{name: "unread, doubted and stamped documents are left out", ok: true, docs: []DocScore{
			faint("A", 0.1, 0.3), clean("C", 0.1),
			{SourceID: "U", FaintWords: &Recall{Of: 1}, MaxUncoveredShare: share(0.01)},
			{SourceID: "D", Read: true, Doubted: true, MaxUncoveredShare: share(0.5)},
			{SourceID: "S", Read: true, incompleteAllowed: true, MaxUncoveredShare: share(0.25)},
		}, want: CoverageThreshold{Threshold: 0.2, MustFlag: 1, MustMin: 0.3, Clean: 1, CleanMax: 0.1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SuggestCoverage(tc.docs)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && got != tc.want {
				t.Errorf("SuggestCoverage = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCheckCoverage(t *testing.T) {
	res, err := Score(coverageFixture(nil))
	if err != nil {
		t.Fatal(err)
	}
	i := func(v int) *int { return &v }
	f := func(v float64) *float64 { return &v }
	mismatches := Thresholds{OutcomeMismatchesMax: i(1)} // K1 is flagged, expected done
	gate := func(g Thresholds) Thresholds { g.OutcomeMismatchesMax = mismatches.OutcomeMismatchesMax; return g }
	none := &Result{Outcomes: res.Outcomes, Text: res.Text, Coverage: &Coverage{}}
	tests := []struct {
		name string
		res  *Result
		t    Thresholds
		want []string
	}{
		{"not gated", res, mismatches, nil},
		{"within every threshold", res, gate(Thresholds{FaintUnflaggedMax: i(1), ColumnPageCERMax: f(0.9), CoverageFalseAlarmsMax: i(1)}), nil},
		{"every figure regressed", res, gate(Thresholds{FaintUnflaggedMax: i(0), ColumnPageCERMax: f(0.05), CoverageFalseAlarmsMax: i(0)}), []string{
			"documents done reading under 80% of their faint print 1 > threshold 0 (F2)",
			"worst column page CER 0.",
			"documents without faint print in review incomplete_text 1 > threshold 0 (K1)",
		}},
		{"nothing to measure", none, gate(Thresholds{FaintUnflaggedMax: i(0), ColumnPageCERMax: f(0.05), CoverageFalseAlarmsMax: i(0)}), []string{
			"faint_unflagged not measured (no readable document has faint print in its truth)",
			"column_page_cer not measured (no readable page has columns in its truth)",
			"coverage_false_alarms not measured (no readable document without faint print)",
		}},
		{"no truth", &Result{Outcomes: res.Outcomes}, gate(Thresholds{FaintUnflaggedMax: i(0)}), []string{"text figures not measured (no --truth given)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			regs := tc.res.Check(tc.t)
			if len(regs) != len(tc.want) {
				t.Fatalf("regressions %+v, want %d", regs, len(tc.want))
			}
			for k, w := range tc.want {
				if !strings.HasPrefix(regs[k].Message, w) {
					t.Errorf("regression %d: %q, want it to start %q", k, regs[k].Message, w)
				}
			}
		})
	}
}

func TestReportTextCoverage(t *testing.T) {
	i := func(v int) *int { return &v }
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name   string
		shares map[string]float64
		t      Thresholds
		want   []string
		absent []string
	}{
		{name: "without shares", t: Thresholds{FaintUnflaggedMax: i(0), ColumnPageCERMax: f(0.05), CoverageFalseAlarmsMax: i(1)},
			want: []string{
				"6 documents scored apart", "high 6",
				"faint print", "3 documents: 1 read 80% or more of it, 1 in review incomplete_text, 1 done reading less (threshold 0); words read 10 of 24",
				"done, unread", "F2",
				"column pages", "2: CER mean", "(C2 page 1) (threshold 0.05)",
				"false alarms", "1 of 4 documents without faint print in review incomplete_text (threshold 1): K1",
			},
			absent: []string{"suggested  incomplete_text", "uncovered share"}},
		{name: "with shares", shares: map[string]float64{"F1": 0.01, "F2": 0.2, "F3": 0.3, "K1": 0.05},
			want: []string{"incomplete_text from uncovered share 0.1: flags 2 of 2 documents with faint print unread (0 of them by their share before the second reading, least 0.2), 0 of 4 without faint print (most 0.05; and 0 of 1 reading it)"}},
		{name: "nothing to flag", shares: map[string]float64{"F2": 0.01, "F3": 0.01, "K1": 0.05},
			want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := coverageFixture(tc.shares)
			if tc.name == "nothing to flag" {
				// Both read their note after all.
				in.Texts["artifacts/F2"] = in.Texts["artifacts/F1"]
				in.Texts["artifacts/F3"] = in.Texts["artifacts/F1"]
				tc.want = []string{"no document reads under 80% of its faint print; documents without it reach uncovered share 0.05 at most (4 documents)"}
			}
			res, err := Score(in)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := NewReport(res, tc.t, "out", nil).WriteText(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("text lacks %q", w)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(out, w) {
					t.Errorf("text has %q", w)
				}
			}
			for _, secret := range []string{"latex", "P-1", "column words"} {
				if strings.Contains(out, secret) {
					t.Errorf("text holds document data %q", secret)
				}
			}
			if t.Failed() {
				t.Log("\n" + out)
			}
		})
	}
}
