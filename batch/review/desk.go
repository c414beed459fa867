package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/admit"
	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/ocr/result"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is what the review desk (refbatch desk) reads of a batch: the
// queue of rows needing a person, one document with everything a person
// needs to decide it, and its source's bytes for the page images. It only
// reads, like ListReview, also while a run goes on.

// DeskRow is one row of the desk's queue: a document in review, or a row
// rejected with its reason.
type DeskRow struct {
	SourceID     string         `json:"source_id"`
	Manifest     string         `json:"manifest"`
	ManifestLine int            `json:"manifest_line"`
	State        outcome.State  `json:"state"`
	Reason       outcome.Reason `json:"reason"`
	Explanation  string         `json:"explanation"`
	Pages        int            `json:"pages"`
	Band         outcome.Band   `json:"band"`
	// Detail is what exactly a review verdict found, when it says (for
	// handwriting, the pages of the note not transcribed).
	Detail string `json:"detail,omitempty"`
	// Rejection is a rejected row's detail and status, nil in review.
	Rejection *DeskRejection `json:"rejection,omitempty"`
}

// DeskRejection is what the desk shows of a rejected row: what refused
// it and the fix, as report.json has them, and whether it still needs a
// person or was dismissed.
type DeskRejection struct {
	Detail string `json:"detail,omitempty"`
	Advice string `json:"advice,omitempty"`
	// Open is true while the row needs a person: rejected for a reason
	// that asks for action and not dismissed (report.Row.Open).
	Open bool `json:"open"`
	// Dismissal is the person's dismissal, nil if none.
	Dismissal *report.Decision `json:"dismissal,omitempty"`
	// Version is the source_id's latest event: a dismissal made with it
	// is refused when the row changed since (DecideOptions.Since).
	Version int64 `json:"version"`
}

// deskRejection is r's rejection as the desk shows it, nil when r is not
// rejected; versions are SourceVersions.
func deskRejection(r journal.ReportRow, versions map[string]int64) *DeskRejection {
	if r.State != outcome.Rejected {
		return nil
	}
	dismissed := r.Decision != nil && r.Decision.Action == journal.Dismiss
	out := &DeskRejection{Open: outcome.Open(r.State, r.Reason, dismissed), Version: versions[r.SourceID]}
	out.Detail, out.Advice = standing.RejectionDetail(r)
	if dismissed {
		out.Dismissal = standing.ReportDecision(*r.Decision)
	}
	return out
}

// DeskQueue lists the rows in review, the rows rejected and the documents
// a person sent back to be read again (state queued, as QueuedRetries
// counts them: in no lane until the next run) in the batch at p, in
// manifest order.
func DeskQueue(p layout.Place) ([]DeskRow, error) {
	j, _, err := layout.OpenJournal(p)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	versions, err := j.SourceVersions()
	if err != nil {
		return nil, err
	}
	rows := []DeskRow{}
	err = j.ReportRows("", func(r journal.ReportRow) error {
		retried := r.State == outcome.Queued && r.Decision != nil && r.Decision.Action == journal.Retry
		if r.State != outcome.Review && r.State != outcome.Rejected && !retried || r.Withdrawn {
			return nil
		}
		rows = append(rows, DeskRow{SourceID: r.SourceID, Manifest: filepath.Base(r.Manifest), ManifestLine: r.Line, State: r.State,
			Reason: r.Reason, Explanation: report.Explain(r.Reason), Pages: r.Pages, Band: r.Band, Detail: reviewDetail(r),
			Rejection: deskRejection(r, versions)})
		return nil
	})
	return rows, err
}

// DeskDoc is one document as the desk shows it. It holds the document's
// text and the manifest's fields: it is for the person deciding, never for
// a log.
type DeskDoc struct {
	SourceID       string         `json:"source_id"`
	Manifest       string         `json:"manifest"`
	ManifestLine   int            `json:"manifest_line"`
	State          outcome.State  `json:"state"`
	Reason         outcome.Reason `json:"reason"`
	Explanation    string         `json:"explanation"`
	Pages          int            `json:"pages"`
	MeanConfidence float64        `json:"mean_confidence"`
	Band           outcome.Band   `json:"band"`
	Attempts       int            `json:"attempts"`
	// SourcePath is the row's path as the manifest says it now, read
	// again from the manifest ("" when the manifest cannot be read).
	SourcePath string `json:"source_path"`
	// Fields are the manifest's fields the text is checked against, and
	// where on the pages they were found.
	Fields []DeskField `json:"fields"`
	// ManifestChanged names the fields of the manifest's row that are not
	// what was admitted (by the salted digests the journal holds): the
	// manifest was edited since, and what Fields shows is not what the
	// text was checked against. ManifestError says why the row could not
	// be read, "" when it was.
	ManifestChanged []string    `json:"manifest_changed,omitempty"`
	ManifestError   string      `json:"manifest_error,omitempty"`
	History         []DeskEvent `json:"history"`
	// Version is the document's latest event: a decision made with it
	// is refused when the document changed since (DecideOptions.Since).
	Version int64 `json:"version"`
	// Text is the artifact's pages, nil when there is none or it cannot
	// be read (ArtifactError says why).
	Text          []result.PageResult `json:"pages_read"`
	ArtifactError string              `json:"artifact_error,omitempty"`
	// Transcriptions are what people typed for regions of the pages;
	// WithdrawnTranscriptions those of them withdrawn since.
	Transcriptions          []layout.Transcription `json:"transcriptions"`
	WithdrawnTranscriptions []layout.Transcription `json:"withdrawn_transcriptions,omitempty"`
	// Detail is what exactly a review verdict found (DeskRow's Detail);
	// for id_not_found and date_not_found, what the text holds instead,
	// named (Said).
	Detail string `json:"detail,omitempty"`
	// Said are the IDs shaped like the manifest's, or the dates, the text
	// holds where the manifest's are not found (readSaid).
	Said []Said `json:"said,omitempty"`
	// Rejection is a rejected document's detail and status, nil when it
	// is not rejected.
	Rejection *DeskRejection `json:"rejection,omitempty"`
}

// DeskField is one manifest field and where the text has it.
type DeskField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Found bool   `json:"found"`
	// Changed is true when the field is not what was admitted.
	Changed bool   `json:"changed,omitempty"`
	Page    int    `json:"page"`
	Box     [4]int `json:"box"`
}

// DeskEvent is one event of a document's history.
type DeskEvent struct {
	ID   int64             `json:"id"`
	At   time.Time         `json:"at"`
	Kind journal.EventKind `json:"kind"`
	// Decision is the decision an EventDecision records.
	Decision *journal.Decision `json:"decision,omitempty"`
	// To is the state and reason the event left the document in, when
	// it says.
	To string `json:"to,omitempty"`
}

// ErrNoDeskDocument means no document of the batch has the source_id
// asked for (a row rejected at admission has none).
var ErrNoDeskDocument = errors.New("no document in this batch has that source_id")

// DeskDocument reads the document with sourceID for the desk: its row,
// its history, its manifest fields read again from the manifest, and its
// artifact decrypted with ids (checked as Show checks it).
// Its reads of the artifact stop when ctx ends.
func DeskDocument(ctx context.Context, p layout.Place, sourceID string, ids []age.Identity) (*DeskDoc, error) {
	j, p, err := layout.OpenJournal(p)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	d, ok, err := j.DocumentBySource(sourceID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", sourceID, ErrNoDeskDocument)
	}
	out := &DeskDoc{SourceID: d.SourceID, ManifestLine: d.Line, State: d.State, Reason: d.Reason, Explanation: report.Explain(d.Reason),
		Pages: d.Pages, MeanConfidence: standing.Round1(d.MeanConfidence), Band: d.Band, Attempts: d.Attempts, History: []DeskEvent{},
		Transcriptions: []layout.Transcription{}}
	err = j.DocumentEvents(d.ID, func(e journal.Event) error {
		out.Version = e.ID
		if out.Manifest == "" && e.Manifest != "" {
			out.Manifest = e.Manifest
		}
		out.History = append(out.History, deskEvent(e))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if d.Artifact != "" {
		st, err := store.OpenReadOnly(filepath.Join(p.Out, layout.ArtifactsDir))
		if err == nil {
			st.StopWith(ctx)
			var a *layout.Artifact
			if a, err = layout.OpenArtifact(st, d, ids); err == nil {
				out.Text, out.Transcriptions, out.WithdrawnTranscriptions = a.Pages, a.Transcriptions, a.WithdrawnTranscriptions
			}
		}
		if err != nil {
			out.ArtifactError = err.Error()
		}
	}
	out.readManifest(j, d.Line)
	if d.State == outcome.Rejected || d.State == outcome.Review {
		if out.Detail, out.Rejection, err = docDetail(j, out.Manifest, d.Line); err != nil {
			return nil, err
		}
		out.readSaid()
	}
	out.Manifest = filepath.Base(out.Manifest)
	return out, nil
}

// docDetail is the review detail and the rejection of the row at line of
// manifest, as the queue shows them.
func docDetail(j *journal.Journal, manifest string, line int) (string, *DeskRejection, error) {
	versions, err := j.SourceVersions()
	if err != nil {
		return "", nil, err
	}
	var detail string
	var rej *DeskRejection
	err = j.ReportRows(manifest, func(r journal.ReportRow) error {
		if r.Line == line && !r.Withdrawn {
			detail, rej = reviewDetail(r), deskRejection(r, versions)
		}
		return nil
	})
	return detail, rej, err
}

// reviewDetail is r's verdict's detail when r is in review, "" otherwise
// (a rejection's is in its DeskRejection).
func reviewDetail(r journal.ReportRow) string {
	if r.State != outcome.Review {
		return ""
	}
	return r.Detail
}

// deskEvent is e as the desk shows it: its kind and time, the decision
// it records, the state it left; never its custody record.
func deskEvent(e journal.Event) DeskEvent {
	de := DeskEvent{ID: e.ID, At: e.At.UTC(), Kind: e.Kind}
	var data struct {
		journal.Decision
		State  outcome.State  `json:"state"`
		Reason outcome.Reason `json:"reason"`
	}
	if json.Unmarshal(e.Data, &data) != nil {
		return de
	}
	if e.Kind == journal.EventDecision {
		dec := data.Decision
		dec.Settings = nil
		dec.At = e.At.UTC()
		de.Decision = &dec
	}
	if data.State != "" {
		de.To = strings.TrimSpace(string(data.State) + " " + string(data.Reason))
	}
	return de
}

// DeskSource names the source of the document with sourceID by its
// admitted SHA-256, and returns read, which reads it under admission's
// rules (inside the batch's root, a regular file, at most its admitted
// size) and returns its bytes only when they still hash to that SHA-256.
func DeskSource(p layout.Place, sourceID string) (sum string, read func() ([]byte, error), err error) {
	j, _, err := layout.OpenJournal(p)
	if err != nil {
		return "", nil, err
	}
	defer j.Close()
	d, ok, err := j.DocumentBySource(sourceID)
	if err == nil && !ok {
		err = fmt.Errorf("%s: %w", sourceID, ErrNoDeskDocument)
	}
	if err != nil {
		return "", nil, err
	}
	runs, err := j.Runs()
	if err != nil {
		return "", nil, err
	}
	root := audit.SourceRoot(runs)
	return d.SHA256, func() ([]byte, error) {
		data, err := admit.ReadSource(root, d.Path, d.Size)
		if err != nil {
			return nil, fmt.Errorf("reading the source of %s: %w", sourceID, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != d.SHA256 {
			return nil, fmt.Errorf("the source of %s changed since it was admitted", sourceID)
		}
		return data, nil
	}, nil
}
