package eval

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/refbatch/refbatch/report/outcome"
)

// Format names eval.json's schema.
const Format = "refbatch-eval/1"

// Regression is one figure that crossed its threshold. Figure is stable
// (outcomes, mean_cer, p95_cer, mean_wer, participant_id_recall,
// referral_date_recall, band_mean_cer.<band>, faint_unflagged,
// column_page_cer, coverage_false_alarms); Message says it for people,
// e.g. "mean CER 0.052 > threshold 0.040".
type Regression struct {
	Figure  string `json:"figure"`
	Message string `json:"message"`
}

// shownMismatches is how many mismatched rows a regression message names.
const shownMismatches = 5

// Check returns the figures of r that cross t, in a fixed order. Outcome
// mismatches are gated even when t sets no maximum (none allowed). A text
// threshold with nothing to measure (no truth, or no readable page) is a
// regression too: a gate must not pass because its input went missing.
func (r *Result) Check(t Thresholds) []Regression {
	var out []Regression
	add := func(figure, format string, args ...any) {
		out = append(out, Regression{Figure: figure, Message: fmt.Sprintf(format, args...)})
	}
	maxMismatch := 0
	if t.OutcomeMismatchesMax != nil {
		maxMismatch = *t.OutcomeMismatchesMax
	}
	known := map[string]bool{}
	for _, id := range t.KnownMismatches {
		known[id] = true
	}
	var unexpected []RowOutcome
	for _, m := range r.Outcomes.Mismatches() {
		if !known[m.SourceID] {
			unexpected = append(unexpected, m)
		}
	}
	if n := len(unexpected); n > maxMismatch {
		var rows []string
		for _, m := range unexpected {
			if len(rows) == shownMismatches {
				rows = append(rows, fmt.Sprintf("and %d more", n-shownMismatches))
				break
			}
			rows = append(rows, describeMismatch(m))
		}
		add("outcomes", "outcome mismatches %d > threshold %d: %s", n, maxMismatch, strings.Join(rows, "; "))
	}
	if !t.textGated() {
		return out
	}
	if r.Text == nil || r.Text.Pages == 0 {
		why := "no --truth given"
		if r.Text != nil {
			why = "no readable document in expected.csv"
		}
		add("text", "text figures not measured (%s) but thresholds.json gates them", why)
		return out
	}
	x := r.Text
	above := func(figure, name string, got float64, limit *float64) {
		if limit != nil && got > *limit {
			a, b := pair(got, *limit)
			add(figure, "%s %s > threshold %s", name, a, b)
		}
	}
	below := func(figure, name string, rc Recall, limit *float64) {
		if limit != nil && (rc.Of == 0 || rc.Rate < *limit) {
			a, b := pair(rc.Rate, *limit)
			add(figure, "%s %s < threshold %s (%d of %d documents)", name, a, b, rc.Found, rc.Of)
		}
	}
	above("mean_cer", "mean CER", x.MeanCER, t.MeanCERMax)
	above("p95_cer", "p95 CER", x.P95CER, t.P95CERMax)
	above("mean_wer", "mean WER", x.MeanWER, t.MeanWERMax)
	below("participant_id_recall", "participant ID recall", x.IDRecall, t.IDRecallMin)
	below("referral_date_recall", "referral date recall", x.DateRecall, t.DateRecallMin)
	var prev *BandScore
	for i, b := range r.Calibration {
		if limit, ok := t.BandMeanCERMax[b.Band]; ok && b.Documents > 0 {
			above("band_mean_cer."+string(b.Band), "mean CER of the "+string(b.Band)+" confidence band", b.MeanCER, &limit)
		}
		if least, ok := t.BandDocumentsMin[b.Band]; ok && b.Documents < least {
			add("band_documents."+string(b.Band), "documents in the %s confidence band %d < threshold %d", b.Band, b.Documents, least)
		}
		if !t.BandsOrdered || b.Band == BandNone || b.Documents == 0 {
			continue
		}
		if prev != nil && b.MeanCER <= prev.MeanCER {
			a, c := pair(b.MeanCER, prev.MeanCER)
			add("bands_ordered", "mean CER of the %s confidence band %s is not above the %s band's %s", b.Band, a, prev.Band, c)
		}
		prev = &r.Calibration[i]
	}
	r.checkCoverage(t, add)
	checkHandwriting(r.Handwriting, t, add)
	return out
}

// checkCoverage adds the regressions of r's coverage figures, when t gates
// them.
func (r *Result) checkCoverage(t Thresholds, add func(figure, format string, args ...any)) {
	c := r.Coverage
	if c == nil || !t.coverageGated() {
		return
	}
	notMeasured := func(figure, what string) {
		add(figure, "%s not measured (%s) but thresholds.json gates it", figure, what)
	}
	switch limit := t.FaintUnflaggedMax; {
	case limit == nil:
	case c.FaintDocuments == 0:
		notMeasured("faint_unflagged", "no readable document has faint print in its truth")
	case c.FaintUnflagged > *limit:
		add("faint_unflagged", "documents done reading under %.0f%% of their faint print %d > threshold %d (%s)",
			100*FaintReadRecall, c.FaintUnflagged, *limit, idList(c.FaintUnflaggedIDs))
	}
	switch limit := t.ColumnPageCERMax; {
	case limit == nil:
	case c.ColumnPages == 0:
		notMeasured("column_page_cer", "no readable page has columns in its truth")
	case c.ColumnMaxCER > *limit:
		a, b := pair(c.ColumnMaxCER, *limit)
		add("column_page_cer", "worst column page CER %s > threshold %s (%s page %d)", a, b, c.ColumnMaxSource, c.ColumnMaxPage)
	}
	switch limit := t.CoverageFalseAlarmsMax; {
	case limit == nil:
	case c.CleanDocuments == 0:
		notMeasured("coverage_false_alarms", "no readable document without faint print")
	case c.FalseAlarms > *limit:
		add("coverage_false_alarms", "documents without faint print in review %s %d > threshold %d (%s)",
			outcome.IncompleteText, c.FalseAlarms, *limit, idList(c.FalseAlarmIDs))
	}
}

// idList names up to shownMismatches source IDs.
func idList(ids []string) string {
	if len(ids) <= shownMismatches {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:shownMismatches], ", "), len(ids)-shownMismatches)
}

func describeMismatch(m RowOutcome) string {
	where := fmt.Sprintf("row %d", m.Row)
	if m.ManifestLine > 0 {
		where = fmt.Sprintf("line %d", m.ManifestLine)
	}
	want := m.Want
	if want == "" {
		want = "no row"
	}
	return fmt.Sprintf("%s %s %s, expected %s", where, m.SourceID, m.Got, want)
}

// pair formats a figure and its threshold with three decimals, or more
// when three would print them equal ("0.040 > threshold 0.040").
func pair(a, b float64) (string, string) {
	for prec := 3; prec < 8; prec++ {
		sa, sb := strconv.FormatFloat(a, 'f', prec, 64), strconv.FormatFloat(b, 'f', prec, 64)
		if sa != sb {
			return sa, sb
		}
	}
	return strconv.FormatFloat(a, 'g', -1, 64), strconv.FormatFloat(b, 'g', -1, 64)
}

// Report is eval.json: what was scored, under which run settings and
// thresholds, and whether it passed.
type Report struct {
	Format      string    `json:"format"`
	GeneratedAt time.Time `json:"generated_at"`
	// Out is the output folder scored; Settings are its run's settings
	// from report.json (dpi, workers, policy version...).
	Out        string            `json:"out"`
	Settings   map[string]string `json:"settings"`
	Thresholds Thresholds        `json:"thresholds"`
	Result
	Regressions []Regression `json:"regressions"`
	Passed      bool         `json:"passed"`
}

// NewReport checks res against t and wraps both for eval.json.
func NewReport(res *Result, t Thresholds, out string, settings map[string]string) *Report {
	regs := res.Check(t)
	if regs == nil {
		regs = []Regression{}
	}
	return &Report{
		Format:      Format,
		GeneratedAt: time.Now().UTC(),
		Out:         out,
		Settings:    settings,
		Thresholds:  t,
		Result:      *res,
		Regressions: regs,
		Passed:      len(regs) == 0,
	}
}

// WriteText prints the evaluation as a short table: outcomes (and every
// mismatched row), the text figures, the calibration table and the
// verdict. It prints source IDs and figures, never text.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	o := r.Outcomes
	fmt.Fprintf(tw, "outcomes\t%d rows, %d match, %d differ", o.Rows, o.Matched, o.Mismatched)
	if r.NoIDCheck {
		fmt.Fprint(tw, " (participant ID check off: review id_not_found or date_not_found scored as done)")
	}
	fmt.Fprintln(tw)
	for _, m := range o.Mismatches() {
		fmt.Fprintf(tw, "  differs\t%s\n", describeMismatch(m))
	}
	if x := r.Text; x != nil {
		fmt.Fprintf(tw, "text\t%d readable documents, %d pages", x.Documents, x.Pages)
		if x.Unread > 0 {
			fmt.Fprintf(tw, ", %d not read (scored as empty)", x.Unread)
		}
		fmt.Fprintln(tw)
		fmt.Fprintf(tw, "  CER\tmean %.4f  p95 %.4f  overall %.4f (%d edits / %d chars)\n", x.MeanCER, x.P95CER, x.CER.Rate, x.CER.Distance, x.CER.N)
		fmt.Fprintf(tw, "  WER\tmean %.4f  overall %.4f (%d edits / %d words)\n", x.MeanWER, x.WER.Rate, x.WER.Distance, x.WER.N)
		fmt.Fprintf(tw, "  participant ID recall\t%s\n", recallText(x.IDRecall))
		fmt.Fprintf(tw, "  referral date recall\t%s\n", recallText(x.DateRecall))
		if x.Doubted > 0 {
			fmt.Fprintf(tw, "doubted\t%d documents expected in review for their text (calibration only): mean CER %.4f\n", x.Doubted, x.DoubtedCER)
		}
		fmt.Fprintln(tw, "calibration\tband\tdocs\tpages\tmean conf\tmean CER")
		for _, b := range r.Calibration {
			if b.Documents == 0 {
				fmt.Fprintf(tw, "\t%s\t0\t0\t-\t-\n", b.Band)
				continue
			}
			conf := strconv.FormatFloat(b.MeanConfidence, 'f', 1, 64)
			if b.Band == BandNone {
				conf = "-" // never read, so no confidence
			}
			fmt.Fprintf(tw, "\t%s\t%d\t%d\t%s\t%.4f\n", b.Band, b.Documents, b.Pages, conf, b.MeanCER)
		}
		if s := r.SuggestedBands; s != nil {
			high := "none"
			if s.High > 0 {
				high = fmt.Sprintf("%s (mean CER %.4f < %s)", strconv.FormatFloat(s.High, 'f', -1, 64), s.HighMeanCER, strconv.FormatFloat(HighBandCER, 'f', -1, 64))
			}
			fmt.Fprintf(tw, "  suggested	high from %s; low under %s (%d documents on the wrong side of CER %.2f)\n",
				high, strconv.FormatFloat(s.Low, 'f', -1, 64), s.Misplaced, ReviewCER)
		}
		r.writeCoverage(tw)
		r.writeHandwriting(tw)
		if c := r.SuggestedCover; c != nil {
			fmt.Fprintf(tw, "  suggested	cover confidence %s: %.1f%% of the characters of words read right are under it, %.1f%% of those misread at or above (%d and %d characters)\n",
				strconv.FormatFloat(c.Conf, 'f', -1, 64), 100*c.RightUnder, 100*c.WrongAbove, c.RightChars, c.WrongChars)
		}
		r.writeCascade(tw)
	} else {
		fmt.Fprintln(tw, "text\tnot scored (no --truth)")
	}
	if r.Passed {
		fmt.Fprintln(tw, "gate\tPASS")
	} else {
		fmt.Fprintf(tw, "gate\tFAIL, %d regressed\n", len(r.Regressions))
		for _, g := range r.Regressions {
			fmt.Fprintf(tw, "  regressed\t%s\n", g.Message)
		}
	}
	return tw.Flush()
}

// writeCoverage prints the coverage figures, each with its threshold when
// one is set.
func (r *Report) writeCoverage(w io.Writer) {
	c := r.Coverage
	if c == nil || (c.Documents == 0 && c.FaintDocuments == 0 && c.ColumnPages == 0 && c.FalseAlarms == 0 && r.SuggestedCoverage == nil) {
		return
	}
	limit := func(v any) string {
		switch v := v.(type) {
		case *int:
			if v != nil {
				return fmt.Sprintf(" (threshold %d)", *v)
			}
		case *float64:
			if v != nil {
				return fmt.Sprintf(" (threshold %s)", strconv.FormatFloat(*v, 'f', -1, 64))
			}
		}
		return ""
	}
	t := r.Thresholds
	var bands []string
	for _, b := range append(outcome.Bands(), BandNone) {
		if n := c.Bands[b]; n > 0 {
			bands = append(bands, fmt.Sprintf("%s %d", b, n))
		}
	}
	fmt.Fprintf(w, "coverage\t%d documents scored apart (faint print, columns, or allowed to end %s): mean CER %.4f; %s\n",
		c.Documents, outcome.IncompleteText, c.MeanCER, strings.Join(bands, ", "))
	if c.FaintDocuments > 0 {
		fmt.Fprintf(w, "  faint print\t%d documents: %d read %.0f%% or more of it, %d in review %s, %d done reading less%s; words read %s\n",
			c.FaintDocuments, c.FaintRead, 100*FaintReadRecall, c.FaintFlagged, outcome.IncompleteText, c.FaintUnflagged, limit(t.FaintUnflaggedMax), recallWords(c.FaintWords))
		if len(c.FaintUnflaggedIDs) > 0 {
			fmt.Fprintf(w, "    done, unread\t%s\n", strings.Join(c.FaintUnflaggedIDs, " "))
		}
	}
	if c.ColumnPages > 0 {
		fmt.Fprintf(w, "  column pages\t%d: CER mean %.4f, max %.4f (%s page %d)%s\n",
			c.ColumnPages, c.ColumnMeanCER, c.ColumnMaxCER, c.ColumnMaxSource, c.ColumnMaxPage, limit(t.ColumnPageCERMax))
	}
	fmt.Fprintf(w, "  false alarms\t%d of %d documents without faint print in review %s%s",
		c.FalseAlarms, c.CleanDocuments, outcome.IncompleteText, limit(t.CoverageFalseAlarmsMax))
	if len(c.FalseAlarmIDs) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(c.FalseAlarmIDs, " "))
	}
	fmt.Fprintln(w)
	s := r.SuggestedCoverage
	switch {
	case s == nil:
	case s.MustFlag == 0:
		fmt.Fprintf(w, "  suggested\tno document reads under %.0f%% of its faint print; documents without it reach uncovered share %s at most (%d documents)\n",
			100*FaintReadRecall, shareText(s.CleanMax), s.Clean)
	default:
		fmt.Fprintf(w, "  suggested\t%s from uncovered share %s: flags %d of %d documents with faint print unread (%d of them by their share before the second reading, least %s), %d of %d without faint print (most %s; and %d of %d reading it)\n",
			outcome.IncompleteText, shareText(s.Threshold), s.MustFlag, s.MustFlag, s.Recovered, shareText(s.MustMin), s.CleanFlagged, s.Clean, shareText(s.CleanMax), s.FaintReadFlagged, s.FaintRead)
	}
}

func recallWords(r Recall) string {
	if r.Of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d of %d (%.4f)", r.Found, r.Of, r.Rate)
}

func recallText(r Recall) string {
	if r.Of == 0 {
		return "- (no document holds it)"
	}
	return fmt.Sprintf("%.4f (%d of %d documents)", r.Rate, r.Found, r.Of)
}
