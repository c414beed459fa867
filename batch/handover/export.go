package handover

// This file is `refbatch export`: the deliberate plaintext hand-over of a
// batch's text. Each document is verified as `verify --identity --sources`
// would (artifact against the journal, content hash, provenance, source
// re-hashed) before anything of it is written; batch/export renders the
// files.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/export"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// The formats Export writes, as --format names them.
const (
	FormatPDF  = "pdf"  // <name>.pdf, the source with an invisible text layer
	FormatALTO = "alto" // <name>.alto.xml, ALTO 4.4
	FormatText = "txt"  // <name>.txt, pages separated by form feeds
)

// Where a searchable PDF's title comes from (ExportOptions.TitleFrom).
const (
	TitleSourceID = "source_id" // the document's source_id
	TitleFile     = "file"      // the source file's name without its extension
)

// FindingExportFailed is a document that passed verification but whose
// files could not be made: the child that parses its PDF, for its page
// frames and its searchable PDF, failed on it (an error, a crash, out of
// memory, out of time). Like verify's findings, it is not exported and
// makes export exit 1; the export goes on with the other documents.
const FindingExportFailed = "export_failed"

// ProvenanceFile is each document's provenance in a bag.
const ProvenanceFile = "provenance.json"

// SourceSuffix ends the name of the source file export --straighten
// keeps beside a PDF whose pages it redrew: <name>~source.pdf. No
// source_id's name ends so ("~" comes only before SafeName's hex hash),
// so it meets no other document's file.
const SourceSuffix = "~source.pdf"

var (
	// ErrDestInsideOut: the export would write into the output folder.
	ErrDestInsideOut = errors.New("the export folder is inside the output folder")
	// ErrNeedIdentity: the artifacts are encrypted and no identity was given.
	ErrNeedIdentity = errors.New("the artifacts are encrypted: export decrypts them")
	// ErrStrayPayload: the bag's data folder holds files export did not
	// write this time.
	ErrStrayPayload = errors.New("the bag holds files this export did not write")
)

// ExportOptions configure Export.
type ExportOptions struct {
	// Out and Journal are where the batch is (see layout.Place).
	Out        string
	Journal    string
	Dest       string
	Identities []age.Identity
	// Formats is a subset of FormatPDF, FormatALTO and FormatText.
	Formats []string
	// Bag lays Dest out as a BagIt bag.
	Bag bool
	// States are the states whose documents are exported; done when empty.
	States []outcome.State
	// Withdrawn exports also the documents whose rows were all deleted
	// from their manifest since a run read them (left out otherwise).
	Withdrawn bool
	// FileMode is the mode of the files written, 0600 when 0; folders get
	// it with x added wherever r is set.
	FileMode os.FileMode
	// Progress, when set, is called after each document.
	Progress func(ExportEvent)
	// Now is the clock of Bagging-Date; time.Now when nil.
	Now func() time.Time
	// PDFA makes the searchable PDFs PDF/A-2b where the source allows; a
	// document whose source does not is exported as plain searchable PDF
	// and listed in ExportResult.NotPDFA with the reason.
	PDFA bool
	// TitleFrom is where a PDF's title comes from: TitleSourceID (the
	// default, when empty) or TitleFile.
	TitleFrom string
	// Straighten redraws the searchable PDFs' pages turned in the image
	// or deskewed straight (see export.PDFOptions), and keeps the source
	// of each document it redrew a page of beside its PDF (SourceSuffix).
	Straighten bool

	// Child says how to start the child process that parses the sources
	// (for the page frames of the ALTO and for the searchable PDF), as
	// admission's: Export never parses a PDF in its own process. It is
	// needed for the pdf and alto formats. ChildMemory and ChildTimeout
	// are the child's limits for one document (see export.RendererConfig);
	// 0 means export's defaults.
	Child        layout.Process
	ChildMemory  int64
	ChildTimeout time.Duration
}

func (o ExportOptions) place() layout.Place { return layout.Place{Out: o.Out, Journal: o.Journal} }

// ExportEvent is one document done (exported, or refused with findings).
// It carries IDs and counts only.
type ExportEvent struct {
	Kind     string          `json:"event"` // "exported" or "refused"
	Time     time.Time       `json:"time"`
	SourceID string          `json:"source_id"`
	Written  int             `json:"files_written"`
	Present  int             `json:"files_present"`
	Findings []audit.Finding `json:"findings,omitempty"`
	// NotPDFA says why the document's PDF is plain searchable PDF though
	// PDF/A was asked for.
	NotPDFA string `json:"not_pdfa,omitempty"`
	// Straightened are the pages (1-based) --straighten redrew.
	Straightened []int `json:"straightened_pages,omitempty"`
	Done         int   `json:"done"`
	Total        int   `json:"total"`
}

// ExportResult is what Export did.
type ExportResult struct {
	Dest     string `json:"dest"`
	Bag      bool   `json:"bag"`
	BatchID  string `json:"batch_id"`
	Selected int    `json:"documents"` // documents in the chosen states
	// Withdrawn counts the documents left out because their rows were
	// deleted from the manifest (ExportOptions.Withdrawn exports them).
	Withdrawn int `json:"withdrawn_left_out"`
	Exported  int `json:"exported"`
	// Written counts the files written; Present those already there with
	// the right content (a resumed export), left as they were.
	Written  int             `json:"files_written"`
	Present  int             `json:"files_present"`
	Bytes    int64           `json:"bytes"`
	Findings []audit.Finding `json:"findings"`
	// PDFA counts the PDFs exported as PDF/A-2b (with ExportOptions.PDFA);
	// NotPDFA lists the documents whose source did not allow it, and why.
	PDFA    int       `json:"pdfa"`
	NotPDFA []NotPDFA `json:"not_pdfa"`
	// Straightened counts the pages ExportOptions.Straighten redrew.
	Straightened int `json:"straightened_pages"`
}

// NotPDFA is a document exported as plain searchable PDF though PDF/A was
// asked for, and the reason, in refbatch's words (never the source's
// content).
type NotPDFA struct {
	SourceID string `json:"source_id"`
	Reason   string `json:"reason"`
	// Why and Todo are the reason in words an archivist can act on, and
	// what to do about it (export.PDFAWords).
	Why  string `json:"why"`
	Todo string `json:"todo"`
}

// OK reports whether every selected document was exported.
func (r *ExportResult) OK() bool { return len(r.Findings) == 0 }

// Export verifies every document of the output folder in the chosen
// states and writes its text, ALTO and searchable PDF into Dest (as a bag
// with Bag). A document that fails verification is a finding and is not
// exported; the others are. Files go through a store.Root of Dest (temp
// then rename, no link followed beneath Dest: one is an error naming it); a file already present with the content export would write is
// left alone, so an interrupted export resumes. A bag's manifests are
// written last, after the payload.
func Export(ctx context.Context, o ExportOptions) (*ExportResult, error) {
	if err := checkExportOptions(&o); err != nil {
		return nil, err
	}
	j, p, err := layout.OpenJournal(o.place())
	if err != nil {
		return nil, err
	}
	defer j.Close()
	o.Out = p.Out
	if err := destOutside(o.Out, o.Dest); err != nil {
		return nil, err
	}
	if problems, err := j.IntegrityCheck(); err != nil || len(problems) > 0 {
		return nil, fmt.Errorf("the journal is damaged (run refbatch verify): %v%s", err, strings.Join(problems, "; "))
	}
	if enc, err := j.Meta(layout.MetaEncryption); err != nil {
		return nil, err
	} else if enc == layout.EncryptionAge && len(o.Identities) == 0 {
		return nil, ErrNeedIdentity
	}
	runs, err := j.Runs()
	if err != nil {
		return nil, err
	}
	res := &ExportResult{Dest: o.Dest, Bag: o.Bag, Findings: []audit.Finding{}, NotPDFA: []NotPDFA{}}
	if res.BatchID, err = batchID(j, runs); err != nil {
		return nil, err
	}
	withdrawn, err := j.WithdrawnDocuments()
	if err != nil {
		return nil, err
	}
	var docs []journal.Doc
	err = j.Documents(func(d journal.Doc) error {
		if withdrawn[d.ID] && !o.Withdrawn {
			res.Withdrawn++
			return nil
		}
		if slices.Contains(o.States, d.State) {
			docs = append(docs, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Selected = len(docs)
	st, err := store.OpenReadOnly(filepath.Join(o.Out, layout.ArtifactsDir))
	if err != nil {
		return nil, err
	}
	st.StopWith(ctx)
	x := &exporter{o: o, root: audit.SourceRoot(runs), st: st, res: res, dirMode: dirMode(o.FileMode)}
	if x.history, err = docHistory(j); err != nil {
		return nil, err
	}
	defer func() {
		if x.dest != nil {
			x.dest.Close()
		}
	}()
	if err := x.prepareDest(); err != nil {
		return nil, err
	}
	if slices.Contains(o.Formats, FormatPDF) || slices.Contains(o.Formats, FormatALTO) {
		cfg := export.RendererConfig{Command: o.Child}
		cfg.Memory, cfg.Timeout = o.ChildMemory, o.ChildTimeout
		x.renderer = export.NewRenderer(cfg)
		defer x.renderer.Close()
	}
	exported, err := x.exportAll(ctx, docs)
	if err != nil {
		return nil, err
	}
	for i, n := range res.NotPDFA {
		res.NotPDFA[i].Why, res.NotPDFA[i].Todo = export.PDFAWords(n.Reason)
	}
	if o.Bag {
		if x.metadata, err = metadata(j, exported, x.history); err != nil {
			return nil, err
		}
		if err := x.finishBag(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// exportAll exports docs in turn and returns those exported (the others
// are findings).
func (x *exporter) exportAll(ctx context.Context, docs []journal.Doc) ([]journal.Doc, error) {
	var exported []journal.Doc
	interrupted := func(i int) error {
		return fmt.Errorf("%w: export interrupted after %d of %d documents", layout.ErrIncomplete, i, len(docs))
	}
	for i, d := range docs {
		if ctx.Err() != nil {
			return nil, interrupted(i)
		}
		ev, err := x.document(ctx, d)
		if ctx.Err() != nil {
			return nil, interrupted(i)
		}
		if err != nil {
			return nil, err
		}
		if ev.Kind == "exported" {
			exported = append(exported, d)
		}
		if x.o.Progress != nil {
			ev.Time, ev.SourceID, ev.Done, ev.Total = time.Now().UTC(), d.SourceID, i+1, len(docs)
			x.o.Progress(ev)
		}
	}
	return exported, nil
}

func checkExportOptions(o *ExportOptions) error {
	if len(o.Formats) == 0 {
		return errors.New("no format to export")
	}
	for _, f := range o.Formats {
		if f != FormatPDF && f != FormatALTO && f != FormatText {
			return fmt.Errorf("unknown format %q: want pdf, alto or txt", f)
		}
	}
	if len(o.States) == 0 {
		o.States = []outcome.State{outcome.Done}
	}
	for _, s := range o.States {
		if s != outcome.Done && s != outcome.Review {
			return fmt.Errorf("state %q has no text to export: want done or review", s)
		}
	}
	if o.TitleFrom != "" && o.TitleFrom != TitleSourceID && o.TitleFrom != TitleFile {
		return fmt.Errorf("title from %q: want %s or %s", o.TitleFrom, TitleSourceID, TitleFile)
	}
	if o.FileMode == 0 {
		o.FileMode = 0o600
	}
	if o.FileMode&^0o777 != 0 || o.FileMode&0o600 != 0o600 {
		return fmt.Errorf("file mode %#o: want permission bits that let the owner read and write", o.FileMode)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Child.Path == "" && (slices.Contains(o.Formats, FormatPDF) || slices.Contains(o.Formats, FormatALTO)) {
		return errors.New("the pdf and alto formats need the export's PDF child (ExportOptions.Child)")
	}
	if o.ChildMemory < 0 || o.ChildTimeout < 0 {
		return errors.New("the PDF child's memory and timeout are 0 (the defaults) or more")
	}
	return nil
}

// ExportName is the name export gives a document's files, before the
// extension (<name>.pdf, <name>.txt, <name>.alto.xml): the source_id made
// safe for any file system, as artifacts name it.
func ExportName(sourceID string) string { return layout.SafeName(sourceID) }

// BagFolder is a document's folder in a bag's payload: ExportName, except
// where that would meet the bag's own file there (data/report.json, in any
// case, for a file system that ignores it), which gets a short hash of the
// source_id after "~", as SafeName marks the IDs it changed. No source_id
// makes a folder that meets a file of the bag, so no rerun of an export
// can fail on one.
func BagFolder(sourceID string) string {
	name := ExportName(sourceID)
	if strings.EqualFold(name, report.JSONFile) {
		return name + "~" + export.Sum([]byte(sourceID))[:8]
	}
	return name
}

// dirMode is a folder's mode for files of mode m: x wherever r is set.
func dirMode(m os.FileMode) os.FileMode { return m | (m&0o444)>>2 }

// batchID is the batch's ID from the journal. A journal older than the ID
// gets one derived from its first run, the same at every export.
func batchID(j *journal.Journal, runs []journal.Run) (string, error) {
	id, err := j.Meta(layout.MetaBatchID)
	if err != nil || id != "" || len(runs) == 0 {
		return id, err
	}
	return "refbatch-" + export.Sum([]byte(fmt.Sprint(runs[0].Owner, runs[0].StartedAt.UnixMilli())))[:24], nil
}
