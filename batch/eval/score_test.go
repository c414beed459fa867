package eval

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

func TestReadExpected(t *testing.T) {
	tests := []struct {
		name    string
		csv     string
		want    []Expected
		wantErr string
	}{
		{
			name: "one outcome per row, BOM and CRLF",
			csv:  "\ufeffsource_id,state,reason\r\nR-1,done,\r\nR-2,rejected,not_pdf\r\n",
			want: []Expected{
				{"R-1", []Outcome{{"done", ""}}},
				{"R-2", []Outcome{{"rejected", "not_pdf"}}},
			},
		},
		{
			name: "columns in another order, extra column",
			csv:  "Reason,note,STATE,source_id\nempty_text,blank scan,review,R-9\n",
			want: []Expected{{"R-9", []Outcome{{"review", "empty_text"}}}},
		},
		{
			name: "alternatives paired by position",
			csv:  "source_id,state,reason\nc02-22,done|review,|low_confidence\n",
			want: []Expected{{"c02-22", []Outcome{{"done", ""}, {"review", "low_confidence"}}}},
		},
		{
			name: "one reason for every state",
			csv:  "source_id,state,reason\nX,review|rejected,empty_text\n",
			want: []Expected{{"X", []Outcome{{"review", "empty_text"}, {"rejected", "empty_text"}}}},
		},
		{
			name: "any reason",
			csv:  "source_id,state,reason\ngraph,review,*\n",
			want: []Expected{{"graph", []Outcome{{"review", "*"}}}},
		},
		{name: "no reason column", csv: "source_id,state\nR-1,done\n", wantErr: "no reason column"},
		{name: "unpaired alternatives", csv: "source_id,state,reason\nR-1,done|review|rejected,a|b\n", wantErr: "line 2: 3 states but 2 reasons"},
		{name: "empty state", csv: "source_id,state,reason\nR-1,,\n", wantErr: "line 2: empty state"},
		{name: "empty file", csv: "", wantErr: "header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadExpected(strings.NewReader(tc.csv))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestReadThresholds(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		wantErr string
	}{
		{"every key", `{"outcome_mismatches_max":0,"known_mismatches":["R-1"],"mean_cer_max":0.04,"p95_cer_max":0.1,"mean_wer_max":0.1,"id_recall_min":0.99,"date_recall_min":0.99,"band_mean_cer_max":{"high":0.05},"band_documents_min":{"low":1},"bands_ordered":true,"faint_unflagged_max":0,"column_page_cer_max":0.05,"coverage_false_alarms_max":1}`, ""},
		{"coverage keys alone", `{"faint_unflagged_max":0,"column_page_cer_max":0.05,"coverage_false_alarms_max":1}`, ""},
		{"misspelt coverage key", `{"faint_unflagged":0}`, "unknown field"},
		{"empty", `{}`, ""},
		{"misspelt key", `{"mean_cer_maxx":0.04}`, "unknown field"},
		{"unknown band", `{"band_mean_cer_max":{"great":0.01}}`, "unknown band"},
		{"not JSON", `mean_cer_max: 0.04`, "reading thresholds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadThresholds([]byte(tc.json))
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestLoadTruth(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("R-1.json", `{"source_id":"R-1","participant_id":"P-1","referral_date":"2024-01-01","pages":[{"text":"a"},{"text":""}],"dpi":200}`)
	write("R-3.json", `{"source_id":"R-3","variant":"coverage","pages":[{"text":"a\nb c","faint_text":"b c","columns":true,"scan":{"coverage":{"kind":"faint_note"}}}]}`)
	write("renamed.json", `{"source_id":"R-2","pages":[]}`)
	got, err := LoadTruth(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(got["R-1"].Pages) != 2 || got["R-2"] == nil {
		t.Errorf("got %+v", got)
	}
	// Older truth has no faint text; newer truth's other fields are ignored.
	if p := got["R-1"].Pages[0]; p.FaintText != "" || p.Columns {
		t.Errorf("R-1 page 1 %+v", p)
	}
	if p := got["R-3"].Pages[0]; !reflect.DeepEqual(p, TruthPage{Text: "a\nb c", FaintText: "b c", Columns: true}) {
		t.Errorf("R-3 page 1 %+v", p)
	}
	write("again.json", `{"source_id":"R-1","pages":[]}`)
	if _, err := LoadTruth(dir); err == nil || !strings.Contains(err.Error(), "second file") {
		t.Errorf("two files for one source_id: %v", err)
	}
	if _, err := LoadTruth(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing folder loaded")
	}
}

// fixture is a small corpus: R-1 read well, R-2 read badly (low band),
// R-3 expected done but rejected, a rejected row, and a duplicate of R-1.
func fixture() Input {
	exp := func(id string, state outcome.State, reason outcome.Reason) Expected {
		return Expected{id, []Outcome{{state, reason}}}
	}
	return Input{
		Expected: []Expected{
			exp("R-1", "done", ""),
			{"R-2", []Outcome{{"done", ""}, {"review", "low_confidence"}}},
			exp("R-3", "done", ""),
			exp("R-4", "rejected", "not_pdf"),
			exp("R-1", "duplicate", ""),
		},
		// Out of order on purpose: Score sorts by manifest line.
		Rows: []report.Row{
			{ManifestLine: 3, SourceID: "R-2", State: "review", Reason: "low_confidence", Band: "low", MeanConfidence: 40, Artifact: "artifacts/R-2"},
			{ManifestLine: 2, SourceID: "R-1", State: "done", Band: "high", MeanConfidence: 92, Artifact: "artifacts/R-1"},
			{ManifestLine: 4, SourceID: "R-3", State: "rejected", Reason: "malformed_pdf"},
			{ManifestLine: 5, SourceID: "R-4", State: "rejected", Reason: "not_pdf"},
			{ManifestLine: 6, SourceID: "R-1", State: "duplicate", Band: "high", Artifact: "artifacts/R-1"},
		},
		Truth: map[string]*Truth{
			"R-1": {SourceID: "R-1", ParticipantID: "P-000001", ReferralDate: "2024-01-02",
				Pages: []TruthPage{{Text: "Participant ID: P-000001\nReferral date: 2024-01-02"}, {Text: ""}}},
			"R-2": {SourceID: "R-2", ParticipantID: "P-000002", ReferralDate: "2024-01-03",
				Pages: []TruthPage{{Text: "Participant ID: P-000002 Referral date: 2024-01-03"}}},
			"R-3": {SourceID: "R-3", ParticipantID: "P-000003", ReferralDate: "2024-01-04",
				Pages: []TruthPage{{Text: "Participant ID: P-000003 Referral date: 2024-01-04"}}},
		},
		Texts: map[string][]string{
			"artifacts/R-1": {"Participant ID: P-000001\n\nReferral date: 2024-01-02\n", ""},
			"artifacts/R-2": {"Participant ID: P-0O0002 Referral date: 2024-01-03"},
		},
	}
}

func TestScore(t *testing.T) {
	res, err := Score(fixture())
	if err != nil {
		t.Fatal(err)
	}
	o := res.Outcomes
	if o.Rows != 5 || o.Matched != 4 || o.Mismatched != 1 {
		t.Fatalf("outcomes %d rows, %d match, %d differ; want 5, 4, 1", o.Rows, o.Matched, o.Mismatched)
	}
	m := o.Mismatches()[0]
	if m.ManifestLine != 4 || m.SourceID != "R-3" || m.Got.String() != "rejected/malformed_pdf" || m.Want != "done" {
		t.Errorf("mismatch %+v", m)
	}

	x := res.Text
	// Pages: R-1 p1 (0), R-1 p2 blank read blank (0), R-2 (1 edit / 50),
	// R-3 not read (1).
	if x.Documents != 3 || x.Pages != 4 || x.Unread != 1 {
		t.Fatalf("text %d documents, %d pages, %d unread; want 3, 4, 1", x.Documents, x.Pages, x.Unread)
	}
	r2 := 1.0 / 50
	if want := (0 + 0 + r2 + 1) / 4; math.Abs(x.MeanCER-want) > 1e-12 {
		t.Errorf("mean CER %v, want %v", x.MeanCER, want)
	}
	if x.P95CER != 1 {
		t.Errorf("p95 CER %v, want 1 (the unread page)", x.P95CER)
	}
	if x.CER.Distance != 1+50 || x.CER.N != 3*50 {
		t.Errorf("overall CER %+v", x.CER)
	}
	if x.IDRecall != (Recall{Found: 1, Of: 3, Rate: 1.0 / 3}) {
		t.Errorf("ID recall %+v: R-1 found, R-2 misread, R-3 unread", x.IDRecall)
	}
	if x.DateRecall != (Recall{Found: 2, Of: 3, Rate: 2.0 / 3}) {
		t.Errorf("date recall %+v", x.DateRecall)
	}

	bands := map[outcome.Band]BandScore{}
	for _, b := range res.Calibration {
		bands[b.Band] = b
	}
	if len(res.Calibration) != 4 {
		t.Errorf("calibration has %d bands, want high, medium, low, none", len(res.Calibration))
	}
	if b := bands["high"]; b.Documents != 1 || b.MeanCER != 0 || b.SourceIDs[0] != "R-1" {
		t.Errorf("high band %+v", b)
	}
	if b := bands["medium"]; b.Documents != 0 || len(b.SourceIDs) != 0 {
		t.Errorf("medium band %+v", b)
	}
	if b := bands["low"]; b.Documents != 1 || math.Abs(b.MeanCER-r2) > 1e-12 || b.MeanConfidence != 40 {
		t.Errorf("low band %+v", b)
	}
	if b := bands["none"]; b.Documents != 1 || b.MeanCER != 1 {
		t.Errorf("unread band %+v", b)
	}
}

func TestScoreOutcomes(t *testing.T) {
	exp := func(id string, alts ...Outcome) Expected { return Expected{id, alts} }
	row := func(line int, id string, state outcome.State, reason outcome.Reason) report.Row {
		return report.Row{ManifestLine: line, SourceID: id, State: state, Reason: reason}
	}
	tests := []struct {
		name      string
		expected  []Expected
		rows      []report.Row
		noIDCheck bool
		mismatch  []int // rows (1-based) that differ
	}{
		{"all match", []Expected{exp("A", Outcome{"done", ""})}, []report.Row{row(2, "A", "done", "")}, false, nil},
		{"reason differs", []Expected{exp("A", Outcome{"rejected", "not_pdf"})}, []report.Row{row(2, "A", "rejected", "malformed_pdf")}, false, []int{1}},
		{"either alternative", []Expected{exp("A", Outcome{"done", ""}, Outcome{"review", "low_confidence"}), exp("B", Outcome{"done", ""}, Outcome{"review", "low_confidence"})},
			[]report.Row{row(2, "A", "review", "low_confidence"), row(3, "B", "done", "")}, false, nil},
		{"any reason of the state", []Expected{exp("A", Outcome{"review", "*"})}, []report.Row{row(2, "A", "review", "low_confidence")}, false, nil},
		{"any reason is not any state", []Expected{exp("A", Outcome{"review", "*"})}, []report.Row{row(2, "A", "done", "")}, false, []int{1}},
		{"source_id differs", []Expected{exp("A", Outcome{"done", ""})}, []report.Row{row(2, "B", "done", "")}, false, []int{1}},
		{"a row rejected for a missing source_id", []Expected{exp("", Outcome{"rejected", "missing_field"})}, []report.Row{row(2, "", "rejected", "missing_field")}, false, nil},
		{"report has fewer rows", []Expected{exp("A", Outcome{"done", ""}), exp("B", Outcome{"done", ""})}, []report.Row{row(2, "A", "done", "")}, false, []int{2}},
		{"report has more rows", []Expected{exp("A", Outcome{"done", ""})}, []report.Row{row(2, "A", "done", ""), row(3, "B", "done", "")}, false, []int{2}},
		{"id_not_found is review with the check on", []Expected{exp("A", Outcome{"done", ""})}, []report.Row{row(2, "A", "review", "id_not_found")}, false, []int{1}},
		{"id_not_found scores as done with the check off", []Expected{exp("A", Outcome{"done", ""})}, []report.Row{row(2, "A", "review", "id_not_found")}, true, nil},
		{"low_confidence stays review with the check off", []Expected{exp("A", Outcome{"done", ""})}, []report.Row{row(2, "A", "review", "low_confidence")}, true, []int{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Score(Input{Expected: tc.expected, Rows: tc.rows, NoIDCheck: tc.noIDCheck})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range res.Outcomes.Mismatches() {
				got = append(got, m.Row)
			}
			if !reflect.DeepEqual(got, tc.mismatch) {
				t.Errorf("mismatched rows %v, want %v", got, tc.mismatch)
			}
			if res.Text != nil {
				t.Error("text scored without truth")
			}
		})
	}
}

func TestScoreNeedsTruthForReadableDocuments(t *testing.T) {
	in := fixture()
	delete(in.Truth, "R-2")
	if _, err := Score(in); err == nil || !strings.Contains(err.Error(), "no truth for R-2") {
		t.Errorf("error %v", err)
	}
}

func TestCheck(t *testing.T) {
	res, err := Score(fixture())
	if err != nil {
		t.Fatal(err)
	}
	i := func(v int) *int { return &v }
	f := func(v float64) *float64 { return &v }
	generous := Thresholds{OutcomeMismatchesMax: i(1), MeanCERMax: f(0.5), P95CERMax: f(1), MeanWERMax: f(1),
		IDRecallMin: f(0.3), DateRecallMin: f(0.6), BandMeanCERMax: map[outcome.Band]float64{"high": 0.01}}
	tests := []struct {
		name string
		res  *Result
		t    Thresholds
		want []string // messages, in order
	}{
		{"within every threshold", res, generous, nil},
		{"outcomes gated without a threshold", res, Thresholds{}, []string{"outcome mismatches 1 > threshold 0: line 4 R-3 rejected/malformed_pdf, expected done"}},
		{"every figure regressed", res, Thresholds{OutcomeMismatchesMax: i(1), MeanCERMax: f(0.04), P95CERMax: f(0.1), MeanWERMax: f(0.01),
			IDRecallMin: f(0.99), DateRecallMin: f(0.99), BandMeanCERMax: map[outcome.Band]float64{"low": 0.001}},
			[]string{"mean CER 0.255 > threshold 0.040", "p95 CER 1.000 > threshold 0.100", "mean WER 0.",
				"participant ID recall 0.333 < threshold 0.990 (1 of 3 documents)", "referral date recall 0.667 < threshold 0.990 (2 of 3 documents)",
				"mean CER of the low confidence band 0.020 > threshold 0.001"}},
		{"text gated without truth", &Result{Outcomes: res.Outcomes}, Thresholds{OutcomeMismatchesMax: i(1), MeanCERMax: f(0.04)},
			[]string{"text figures not measured (no --truth given)"}},
		{"a known mismatch is not counted", res, Thresholds{KnownMismatches: []string{"R-3"}}, nil},
		{"a known mismatch does not cover another row", res, Thresholds{KnownMismatches: []string{"R-1"}}, []string{"outcome mismatches 1 > threshold 0: line 4 R-3 rejected/malformed_pdf, expected done"}},
		{"more digits when three look equal", res, Thresholds{OutcomeMismatchesMax: i(1), MeanCERMax: f(0.2549)}, []string{"mean CER 0.2550 > threshold 0.2549"}},
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

func TestReportText(t *testing.T) {
	res, err := Score(fixture())
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReport(res, Thresholds{}, "/tmp/out", map[string]string{"dpi": "150"})
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"5 rows, 4 match, 1 differ", "line 4 R-3", "3 readable documents, 4 pages, 1 not read",
		"mean 0.2550", "participant ID recall", "high", "low", "none", "FAIL, 1 regressed"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// No document text or participant ID in the summary.
	for _, secret := range []string{"P-000001", "Referral date:", "2024-01-02"} {
		if strings.Contains(out, secret) {
			t.Errorf("text holds document data %q", secret)
		}
	}
	t.Log("\n" + out)
}

// TestScoreDoubted: a document expected only in review for its text counts
// in the calibration and its own line, never in the text figures.
func TestScoreDoubted(t *testing.T) {
	in := fixture()
	in.Expected[1] = Expected{"R-2", []Outcome{{"review", "low_confidence"}}}
	res, err := Score(in)
	if err != nil {
		t.Fatal(err)
	}
	x := res.Text
	if x.Documents != 2 || x.Pages != 3 || x.Doubted != 1 || x.IDRecall.Of != 2 {
		t.Fatalf("text %d documents, %d pages, %d doubted, ID recall of %d; want 2, 3, 1, 2", x.Documents, x.Pages, x.Doubted, x.IDRecall.Of)
	}
	if want := 1.0 / 50; math.Abs(x.DoubtedCER-want) > 1e-12 {
		t.Errorf("doubted mean CER %v, want %v", x.DoubtedCER, want)
	}
	var low *BandScore
	for i := range res.Calibration {
		if res.Calibration[i].Band == outcome.BandLow {
			low = &res.Calibration[i]
		}
	}
	if low == nil || low.Documents != 1 || low.SourceIDs[0] != "R-2" {
		t.Errorf("calibration's low band %+v, want R-2 in it", low)
	}
}
