package batch

import (
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/report"
)

// ReportInfo is what a report needs beyond the journal: the run's own
// measurements and settings.
type ReportInfo struct {
	Manifest     string
	Started      time.Time
	Finished     time.Time
	CPUSeconds   float64
	Settings     map[string]string
	Versions     map[string]string
	Encrypted    bool
	SLO          time.Duration
	PeakInflight int64
}

// BuildReport reads every row and the batch's timings from the journal.
// Complete is false while any row is not final.
func BuildReport(j *journal.Journal, info ReportInfo) (*report.Report, error) {
	var rows []report.Row
	complete := true
	err := j.ReportRows(info.Manifest, func(r journal.ReportRow) error {
		if !r.State.Final() {
			complete = false
		}
		rows = append(rows, report.Row{
			ManifestLine:   r.Line,
			SourceID:       r.SourceID,
			State:          string(r.State),
			Reason:         r.Reason,
			SHA256:         r.SHA256,
			Pages:          r.Pages,
			MeanConfidence: round1(r.MeanConfidence),
			Band:           r.Band,
			Attempts:       r.Attempts,
			Artifact:       r.Artifact,
			TraceID:        r.TraceID,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	t, err := j.Timings()
	if err != nil {
		return nil, err
	}
	wall := info.Finished.Sub(info.Started).Seconds()
	rep := &report.Report{
		SchemaVersion: report.SchemaVersion,
		GeneratedAt:   time.Now().UTC(),
		Complete:      complete,
		Run: report.Run{
			Manifest:    info.Manifest,
			StartedAt:   info.Started.UTC(),
			FinishedAt:  info.Finished.UTC(),
			WallSeconds: round3(wall),
			CPUSeconds:  round3(info.CPUSeconds),
			Encrypted:   info.Encrypted,
			Settings:    info.Settings,
			Versions:    info.Versions,
		},
		Rows: rows,
	}
	s := report.Summarize(rows)
	s.OCRPageSeconds = report.NewQuantiles(t.PageOCR)
	s.QueueAgeSeconds = report.NewQuantiles(t.QueueAge)
	s.AdmissionToStartSeconds = s.QueueAgeSeconds
	s.Retries = t.Retries
	s.PeakInflightBytes = info.PeakInflight
	s.SLOSeconds = info.SLO.Seconds()
	if admitted := len(t.QueueAge); admitted > 0 {
		within := 0
		for _, v := range t.AdmissionToDone {
			if v <= info.SLO.Seconds() {
				within++
			}
		}
		s.WithinSLO = round3(float64(within) / float64(admitted))
	}
	// Throughput counts the pages this batch recognised over the time it
	// spent recognising them: first admission to last verdict, across
	// every run that worked on it.
	if span := t.LastFinish.Sub(t.FirstAdmission).Minutes(); span > 0 && t.Pages > 0 {
		s.PagesPerMinute = round1(float64(t.Pages) / span)
	}
	rep.Summary = s
	return rep, nil
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
