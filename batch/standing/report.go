package standing

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/report"
)

// ReportInfo is what a report needs beyond the journal: the settings the
// batch ran with, and the measurements of a run the journal may not hold
// (yet).
type ReportInfo struct {
	// Manifest restricts the report to one manifest's rows; empty reports
	// every manifest the journal holds.
	Manifest string
	// Started, Finished and CPUSeconds describe the batch when the journal
	// recorded no run.
	Started    time.Time
	Finished   time.Time
	CPUSeconds float64
	// Settings are the batch's; nil when no run recorded any, and the
	// report then shows none and uses the default bands and SLO.
	Settings *layout.Settings
	// Versions are the engines' versions; empty takes the latest a run
	// recorded in the journal.
	Versions     map[string]string
	Encrypted    bool
	PeakInflight int64
	// Now is when the report is made; zero means time.Now().
	Now time.Time
}

// BuildReport reads the runs and the batch's timings from the journal,
// and counts its rows. The report it returns does not hold the rows: its
// RowSource reads them from the journal file again whenever a writer asks,
// one at a time, so that neither building nor writing the report of a
// large batch holds them all. Complete is false while any row is not final
// or a manifest has rows the journal has not seen; InProgress is set while
// a run is going. The batch's times span every run that worked on the
// journal.
func BuildReport(j *journal.Journal, info ReportInfo) (*report.Report, error) {
	return buildReport(context.Background(), j, info)
}

// buildReport is BuildReport, whose report's rows end with ctx's error
// once ctx is done (untilDone).
func buildReport(ctx context.Context, j *journal.Journal, info ReportInfo) (*report.Report, error) {
	now := info.Now
	if now.IsZero() {
		now = time.Now()
	}
	manifests, err := j.Manifests()
	if err != nil {
		return nil, err
	}
	var paths []string
	recorded := map[string]int{}
	for _, m := range manifests {
		if info.Manifest == "" || m.Manifest == info.Manifest {
			paths = append(paths, m.Manifest)
			recorded[m.Manifest] = m.Rows
		}
	}
	if len(paths) == 0 && info.Manifest != "" {
		paths = []string{info.Manifest}
	}
	rows := untilDone(ctx, journalRows(j.Path(), info.Manifest, len(paths) > 1))
	var sum report.Summarizer
	complete := true
	err = rows(func(r report.Row) error {
		sum.Add(r)
		complete = complete && (r.State.Final() || r.Withdrawn)
		return nil
	})
	if err != nil {
		return nil, err
	}
	blankRows := 0
	for _, path := range paths {
		// Rows the journal has not seen yet (an interrupted first pass)
		// are work left; a manifest that cannot be read any more is not
		// counted against the batch.
		total, blank := countManifestRows(path)
		if total > recorded[path] {
			complete = false
		}
		blankRows += blank
	}
	t, err := j.Timings()
	if err != nil {
		return nil, err
	}
	set, shown := layout.Settings{}.WithDefaults(), map[string]string(nil)
	if info.Settings != nil {
		set, shown = *info.Settings, info.Settings.Strings()
	}
	h, err := readHistory(j, now, set.SLO)
	if err != nil {
		return nil, err
	}

	run, err := reportRun(j, info, paths, &h, shown)
	if err != nil {
		return nil, err
	}
	root, err := j.Root()
	if err != nil {
		return nil, err
	}
	var custody *report.Custody
	if root.Hash != "" {
		custody = &report.Custody{Root: root.Hash, Events: root.Events}
	}
	notes, err := readNotifications(j)
	if err != nil {
		return nil, err
	}
	rep := &report.Report{
		Custody:       custody,
		Notifications: notes,
		SchemaVersion: report.SchemaVersion,
		GeneratedAt:   now.UTC(),
		Complete:      complete,
		InProgress:    h.live,
		Run:           run,
		Runs:          h.runs,
		Timeline:      h.timeline,
		RowSource:     rows,
	}
	rep.Summary = summarize(&sum, t, &h, set, info, blankRows)
	return rep, nil
}

// untilDone is rows, ending with ctx's error once ctx is done: the report
// of a large batch stops at Ctrl-C, in BuildReport's pass over the rows or
// a writer's.
func untilDone(ctx context.Context, rows report.RowSource) report.RowSource {
	if ctx.Done() == nil {
		return rows
	}
	return func(fn func(report.Row) error) error {
		return rows(func(r report.Row) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(r)
		})
	}
}

// journalRows is a RowSource over the rows of manifest (of every manifest
// when empty) in the journal at path, naming each row's manifest when many.
// Each call opens the journal read-only for the time it reads, so the
// source holds nothing between calls and outlives the Journal a report was
// built from: a Result's report can still be written after Run closed it.
func journalRows(path, manifest string, many bool) report.RowSource {
	return func(fn func(report.Row) error) error {
		j, err := journal.OpenReadOnly(path)
		if err != nil {
			return err
		}
		defer j.Close()
		history, err := rowHistory(j, manifest)
		if err != nil {
			return err
		}
		return j.ReportRows(manifest, func(r journal.ReportRow) error {
			row := report.Row{
				ManifestLine:   r.Line,
				SourceID:       r.SourceID,
				State:          r.State,
				Reason:         r.Reason,
				SHA256:         r.SHA256,
				Pages:          r.Pages,
				MeanConfidence: Round1(r.MeanConfidence),
				Band:           r.Band,
				Attempts:       r.Attempts,
				Artifact:       r.Artifact,
				TraceID:        r.TraceID,
			}
			if many {
				row.Manifest = r.Manifest
			}
			row.Detail, row.Advice = RejectionDetail(r)
			row.History = history[rowKey{r.Manifest, r.JournalLine}]
			row.Withdrawn = r.Withdrawn
			if r.Decision != nil {
				row.Decision = ReportDecision(*r.Decision)
			}
			if t := r.Transcriptions; t.Made > 0 {
				row.Transcriptions = &report.Transcriptions{Made: t.Made, Withdrawn: t.Withdrawn}
			}
			return fn(row)
		})
	}
}

// latestVersions returns the engine versions the latest run recorded, nil
// when none did.
func latestVersions(j *journal.Journal) map[string]string {
	runs, err := j.Runs()
	if err != nil {
		return nil
	}
	for i := len(runs) - 1; i >= 0; i-- {
		var v map[string]string
		if json.Unmarshal([]byte(runs[i].Versions), &v) == nil && len(v) > 0 {
			return v
		}
	}
	return nil
}

func roundQ(q report.Quantiles) report.Quantiles {
	q.P50, q.P95, q.Max = round3(q.P50), round3(q.P95), round3(q.Max)
	return q
}

// Round1 rounds v to one decimal, as the report, review and the desk
// show confidences and rates.
func Round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// ReportFromJournal builds the report of the batch at p from its journal
// alone, as `refbatch report` does, also while a run is going or after one
// was interrupted (the report says so). It covers every manifest the
// folder took, or only manifestPath when it is not empty. Settings and the
// SLO are the latest run's, as it recorded them; engine versions the latest
// a run recorded, else those of the report.json already in out. Once ctx
// is done, the report's rows end with its error, and so does writing it.
func ReportFromJournal(ctx context.Context, p layout.Place, manifestPath string, now time.Time) (*report.Report, error) {
	j, p, err := layout.OpenJournal(p)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	info := ReportInfo{Manifest: manifestPath, Now: now}
	runs, err := j.Runs()
	if err != nil {
		return nil, err
	}
	// The latest run's settings: the ones the batch goes on with.
	for _, r := range slices.Backward(runs) {
		if s, ok := layout.DecodeSettings(r.Settings); ok {
			info.Settings = &s
			break
		}
	}
	info.Versions = latestVersions(j)
	if len(info.Versions) == 0 {
		// Runs that did not record their engine versions in the journal
		// still named them in the report they wrote.
		if old, err := report.ReadJSON(filepath.Join(p.Out, report.JSONFile)); err == nil {
			info.Versions = old.Run.Versions
		}
	}
	if info.Encrypted, _, err = layout.BatchRecipients(j); err != nil {
		return nil, err
	}
	return buildReport(ctx, j, info)
}

// WriteReport writes report.json, report.csv and report.html into the output
// folder out as one atomic set (store.WriteFiles): a reader sees the old
// report or the new one, never half of one, and a rendering error leaves
// the old files as they were.
func WriteReport(out string, rep *report.Report) error {
	err := store.WriteFiles(out, []string{report.JSONFile, report.CSVFile, report.HTMLFile}, func(ws []io.Writer) error {
		return report.Render(rep, ws[0], ws[1], ws[2])
	})
	if err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return nil
}

// reportRun is the report's account of the runs over the batch: the
// manifests, the time they took, the recipients, the settings shown and
// the versions.
func reportRun(j *journal.Journal, info ReportInfo, paths []string, h *history, shown map[string]string) (report.Run, error) {
	recipients, _, err := j.Recipients()
	if err != nil {
		return report.Run{}, err
	}
	run := report.Run{
		Manifest:    info.Manifest,
		Manifests:   paths,
		StartedAt:   h.started.UTC(),
		FinishedAt:  h.lastActivity.UTC(),
		WallSeconds: round3(h.wall.Seconds()),
		CPUSeconds:  round3(h.cpu),
		Encrypted:   info.Encrypted,
		Recipients:  recipients,
		Settings:    shown,
		Versions:    info.Versions,
	}
	if run.Manifest == "" && len(paths) == 1 {
		run.Manifest = paths[0]
	}
	if len(h.runs) == 0 {
		run.StartedAt, run.FinishedAt = info.Started.UTC(), info.Finished.UTC()
		run.WallSeconds = round3(info.Finished.Sub(info.Started).Seconds())
		run.CPUSeconds = round3(info.CPUSeconds)
	}
	if len(run.Versions) == 0 {
		run.Versions = latestVersions(j)
	}
	return run, nil
}

// summarize completes the rows' summary with the batch's figures: time,
// throughput, memory, the SLO and the bands.
func summarize(sum *report.Summarizer, t journal.Timings, h *history, set layout.Settings, info ReportInfo, blankRows int) report.Summary {
	s := sum.Summary()
	s.BlankRows = blankRows
	s.Documents = h.documents
	s.OCRPageSeconds = roundQ(report.NewQuantiles(t.PageOCR))
	s.OCRPageHistogram = report.NewLogHistogram(t.PageOCR)
	s.QueueAgeSeconds = roundQ(report.NewQuantiles(h.queueAge))
	s.AdmissionToStartSeconds = roundQ(report.NewQuantiles(h.admissionToStart))
	s.TimeBreakdown = h.phases
	s.Retries = t.Retries
	s.PeakInflightBytes = max(info.PeakInflight, h.peakInflight)
	s.PeakParentRSSBytes, s.PeakWorkerRSSBytes = h.peakParentRSS, h.peakWorkerRSS
	s.SLOSeconds = set.SLO.Seconds()
	s.WithinSLO, s.SLOMeasured = h.withinSLO, h.sloMeasured
	s.ConfidenceBands = report.Bands{High: set.HighConfidence, Low: set.LowConfidence}
	// Throughput counts the pages this batch recognised over the time
	// some run was working on it, so a weekend between an interrupted run
	// and its resumption does not count.
	if minutes := h.wall.Minutes(); minutes > 0 && t.Pages > 0 {
		s.PagesPerMinute = Round1(float64(t.Pages) / minutes)
	} else if span := t.LastFinish.Sub(t.FirstAdmission).Minutes(); span > 0 && t.Pages > 0 {
		s.PagesPerMinute = Round1(float64(t.Pages) / span)
	}
	return s
}

// RejectionDetail is what exactly refused a rejected row and the fix
// chosen from it, as report.json has them: both "" when no detail was
// recorded. A row in review has its verdict's detail and no advice (its
// reason's action says what to do).
func RejectionDetail(r journal.ReportRow) (detail, advice string) {
	if r.Detail == "" {
		return "", ""
	}
	return r.Detail, report.Advice(r.Reason, r.Detail)
}

// ReportDecision is a decision as the report and `refbatch review` show
// it.
func ReportDecision(d journal.Decision) *report.Decision {
	return &report.Decision{Action: string(d.Action), User: d.User, Host: d.Host, At: d.At.UTC(), Note: d.Note}
}
