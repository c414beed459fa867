package handover

// The writing half of Export: one document at a time, verified, rendered
// in memory (what needs the source PDF in a child, export.Renderer), then
// written as a set through the destination's store.Root, so that nothing
// is written through a link planted in it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/refbatch/refbatch/batch/audit"
	"github.com/refbatch/refbatch/batch/export"
	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/standing"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/report"
)

// exporter writes one export.
type exporter struct {
	o       ExportOptions
	root    string
	st      *store.Store
	res     *ExportResult
	dirMode os.FileMode
	// dest is Dest, held open: every name written is beneath it.
	dest *store.Root
	bag  *export.Bag
	// renderer parses the sources, in a child; nil when no format needs
	// them.
	renderer *export.Renderer
	// history holds each document's decisions and amendments, for its
	// provenance.
	history map[int64]*provHistory
	// metadata is a bag's MetadataFile.
	metadata []byte
}

// prepareDest opens Dest (openDest) and readies it: the temp files of an
// interrupted export swept, and a bag's manifests removed.
func (x *exporter) prepareDest() (err error) {
	if x.dest, err = x.openDest(); err != nil {
		return err
	}
	if _, err := x.dest.SweepTemp("."); err != nil || !x.o.Bag {
		return err
	}
	x.bag = export.NewBag()
	// Until the export ends the bag is unfinished, and says so by having
	// no tag manifest (and no manifest that could disagree with it).
	for _, name := range []string{export.TagManifestFile, export.ManifestFile} {
		if err := x.dest.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return x.mkdir(export.PayloadDir)
}

// mkdir makes the folder dir beneath Dest, and gives it the mode of
// export's folders if it was there.
func (x *exporter) mkdir(dir string) error {
	if err := x.dest.MkdirAll(dir, x.dirMode); err != nil {
		return err
	}
	return x.dest.Chmod(dir, x.dirMode)
}

// document verifies one document and, when it passes, writes its files.
func (x *exporter) document(ctx context.Context, d journal.Doc) (ExportEvent, error) {
	var findings []audit.Finding
	add := func(kind, file, source, detail string) {
		findings = append(findings, audit.Finding{Kind: kind, File: file, SourceID: source, Detail: detail})
	}
	refuse := func() (ExportEvent, error) {
		x.res.Findings = append(x.res.Findings, findings...)
		return ExportEvent{Kind: "refused", Findings: findings}, nil
	}
	if d.Artifact == "" {
		add(audit.FindingMissingArtifactEntry, x.o.place().Describe(), d.SourceID, "a "+string(d.State)+" document has no artifact recorded")
		return refuse()
	}
	a := audit.VerifyArtifact(x.st, d, x.res.BatchID, x.o.Identities, add)
	var src []byte
	if slices.Contains(x.o.Formats, FormatPDF) || slices.Contains(x.o.Formats, FormatALTO) {
		src = audit.ReadVerifiedSource(x.root, d, add)
	} else {
		audit.VerifySource(x.root, d, add)
	}
	if a == nil || len(findings) > 0 {
		if len(findings) == 0 {
			add(audit.FindingArtifactUnreadable, filepath.Join(x.st.Dir(), layout.StoreName(d.Artifact)), d.SourceID, "not decrypted")
		}
		return refuse()
	}
	names, contents, r, err := x.render(ctx, d, a, src)
	var re *export.RenderError
	switch {
	case errors.As(err, &re):
		add(FindingExportFailed, d.Path, d.SourceID, re.Reason)
		return refuse()
	case err != nil:
		return ExportEvent{}, err
	}
	dir, prefix := ".", ""
	if x.o.Bag {
		dir = path.Join(export.PayloadDir, BagFolder(d.SourceID))
		prefix = export.PayloadDir + "/" + BagFolder(d.SourceID) + "/"
	}
	written, present, err := x.write(dir, prefix, names, contents)
	if err != nil {
		return ExportEvent{}, err
	}
	x.res.Exported++
	x.res.Straightened += len(r.Straightened)
	notPDFA := r.NotPDFA
	if notPDFA != "" {
		x.res.NotPDFA = append(x.res.NotPDFA, NotPDFA{SourceID: d.SourceID, Reason: notPDFA})
	} else if x.o.PDFA && slices.Contains(x.o.Formats, FormatPDF) {
		x.res.PDFA++
	}
	return ExportEvent{Kind: "exported", Written: written, Present: present, NotPDFA: notPDFA, Straightened: r.Straightened}, nil
}

// render makes a verified document's files, in memory: at most a source
// PDF and its text at a time, whatever the batch's size. The frames and
// the searchable PDF come from the renderer's child; a document it fails
// on is an *export.RenderError. r is what the child said (empty without
// one): why the PDF is not PDF/A though asked, the pages straightened.
func (x *exporter) render(ctx context.Context, d journal.Doc, a *layout.Artifact, src []byte) (names []string, contents [][]byte, r export.Rendered, err error) {
	base := layout.SafeName(d.SourceID)
	prov := export.Provenance{
		SourceID: d.SourceID, ManifestLine: d.Line, SourceSHA256: d.SHA256, SourceSize: d.Size,
		ArtifactSHA256: d.ArtifactSHA256, ContentSHA256: a.ContentSHA256,
		State: string(d.State), Reason: string(d.Reason), Band: string(d.Band), Pages: len(a.Pages),
		Lang: a.Provenance.Lang, Engines: a.Provenance.Engines,
		PolicyVersion: a.Provenance.PolicyVersion, Policy: a.Provenance.Policy,
		ReadAt: a.Provenance.CreatedAt, Producer: "refbatch " + layout.Version(),
	}
	if h := x.history[d.ID]; h != nil {
		prov.Decisions, prov.Amendments = h.decisions, h.amendments
	}
	if slices.Contains(x.o.Formats, FormatText) {
		names, contents = append(names, base+".txt"), append(contents, []byte(layout.ContentText(a.Pages)+TranscriptionsText(a.Transcriptions)))
	}
	if x.renderer != nil {
		var opt *export.PDFOptions
		if slices.Contains(x.o.Formats, FormatPDF) {
			opt = &export.PDFOptions{PDFA: x.o.PDFA, Title: x.title(d), Transcriptions: exportTranscriptions(a.Transcriptions),
				Straighten: x.o.Straighten}
		}
		rr, err := x.renderer.Render(ctx, src, a.Pages, prov, opt)
		if err != nil {
			return nil, nil, r, err
		}
		r = *rr
	}
	if slices.Contains(x.o.Formats, FormatALTO) {
		var buf bytes.Buffer
		if err := export.WriteALTO(&buf, a.Pages, r.Frames, prov, exportTranscriptions(a.Transcriptions)); err != nil {
			// The artifact and the source disagree on the page count.
			return nil, nil, r, &export.RenderError{Reason: err.Error()}
		}
		names, contents = append(names, base+".alto.xml"), append(contents, buf.Bytes())
	}
	if slices.Contains(x.o.Formats, FormatPDF) {
		names, contents = append(names, base+".pdf"), append(contents, r.PDF)
		if len(r.Straightened) > 0 {
			// The pages redrawn are new images: the source's stay beside
			// them, byte for byte.
			names, contents = append(names, base+SourceSuffix), append(contents, src)
		}
	}
	if x.o.Bag {
		b, err := prov.JSON()
		if err != nil {
			return nil, nil, r, err
		}
		names, contents = append(names, ProvenanceFile), append(contents, b)
	}
	return names, contents, r, nil
}

// title is document d's PDF title, as TitleFrom says.
func (x *exporter) title(d journal.Doc) string {
	if x.o.TitleFrom == TitleFile {
		base := filepath.Base(d.Path)
		return strings.TrimSuffix(base, filepath.Ext(base))
	}
	return d.SourceID
}

// write puts files into dir (beneath Dest) as one set, skipping those
// already there with the same content, and records them in the bag under
// prefix.
func (x *exporter) write(dir, prefix string, names []string, contents [][]byte) (written, present int, err error) {
	if err := x.mkdir(dir); err != nil {
		return 0, 0, err
	}
	if x.o.Bag {
		if _, err := x.dest.SweepTemp(dir); err != nil {
			return 0, 0, err
		}
	}
	var todo []int
	for i, name := range names {
		sum := export.Sum(contents[i])
		if x.bag != nil && prefix != "" {
			x.bag.Add(prefix+name, sum, int64(len(contents[i])))
		}
		x.res.Bytes += int64(len(contents[i]))
		same, err := x.present(path.Join(dir, name), sum, len(contents[i]))
		if err != nil {
			return 0, 0, err
		}
		if same {
			present++
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) > 0 {
		set := make([]string, len(todo))
		for k, i := range todo {
			set[k] = names[i]
		}
		err := x.dest.WriteFiles(dir, set, x.o.FileMode, func(ws []io.Writer) error {
			for k, i := range todo {
				if _, err := ws[k].Write(contents[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, 0, fmt.Errorf("writing %s: %w", x.dest.Path(dir), err)
		}
	}
	x.res.Written += len(todo)
	x.res.Present += present
	return len(todo), present, nil
}

// present reports whether name, beneath Dest, is a regular file of its
// own (no other link to it) that holds n bytes hashing to sum, and if so
// gives it export's mode. Anything else there, a link included, is
// replaced by write, never written through.
func (x *exporter) present(name, sum string, n int) (bool, error) {
	f, err := x.dest.Open(name)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(n) {
		return false, nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink != 1 {
		return false, nil // a hard link: its other names are not export's
	}
	b, err := io.ReadAll(f)
	if err != nil || export.Sum(b) != sum {
		return false, nil
	}
	return true, f.Chmod(x.o.FileMode)
}

// finishBag writes data/report.json, then the tag files, the tag manifest
// last.
func (x *exporter) finishBag() error {
	rep, err := readBeneath(x.o.Out, report.JSONFile)
	if errors.Is(err, os.ErrNotExist) {
		rep, err = x.buildReport()
	}
	if err != nil {
		return fmt.Errorf("the batch's report: %w", err)
	}
	if _, _, err := x.write(export.PayloadDir, export.PayloadDir+"/", []string{report.JSONFile, MetadataFile}, [][]byte{rep, x.metadata}); err != nil {
		return err
	}
	if err := x.checkPayload(); err != nil {
		return err
	}
	names, contents, tagManifest := x.bag.TagFiles(export.BagInfo{
		ExternalIdentifier: x.res.BatchID, Agent: "refbatch " + layout.Version(),
		Documents: x.res.Exported, Date: x.o.Now(), Metadata: MetadataFile,
	})
	if _, _, err := x.write(".", "", names, contents); err != nil {
		return err
	}
	_, _, err = x.write(".", "", []string{export.TagManifestFile}, [][]byte{tagManifest})
	return err
}

// checkPayload refuses to seal a bag whose data folder holds a file this
// export did not write (left by an earlier export of other states, or put
// there by hand): the bag would not validate, and export deletes nothing.
func (x *exporter) checkPayload() error {
	var stray []string
	err := filepath.WalkDir(filepath.Join(x.o.Dest, export.PayloadDir), func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(x.o.Dest, path)
		if err != nil {
			return err
		}
		if !x.bag.Has(filepath.ToSlash(rel)) {
			stray = append(stray, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(stray) > 0 {
		return fmt.Errorf("%w: %d files in the bag's payload were not written by this export, the first %s; the bag is left without manifests", ErrStrayPayload, len(stray), stray[0])
	}
	return nil
}

// buildReport is report.json as `refbatch report` would write it, for an
// output folder that has none.
func (x *exporter) buildReport() ([]byte, error) {
	rep, err := standing.ReportFromJournal(context.Background(), x.o.place(), "", time.Now())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readBeneath reads the file name in dir, refusing a link in its place:
// a report.json planted as a link would put another file into the bag.
func readBeneath(dir, name string) ([]byte, error) {
	r, err := store.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// TranscriptionsHeading marks a person's transcriptions after a
// document's recognised text, in show's output and the export's text.
const TranscriptionsHeading = "[" + export.TranscribedLabel + "]"

// TranscriptionsText is ts as they follow a document's text, marked as a
// person's (TranscriptionsHeading, then one line each); "" when there are
// none, so a document without any is its text alone.
func TranscriptionsText(ts []layout.Transcription) string {
	if len(ts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n" + TranscriptionsHeading + "\n")
	for _, t := range ts {
		what := ""
		if t.Field != "" {
			what = " (" + t.Field + ")"
		}
		fmt.Fprintf(&b, "page %d, region %d,%d-%d,%d%s, by %s@%s at %s: %s\n", t.Page+1, t.Box[0], t.Box[1], t.Box[2], t.Box[3],
			what, t.User, t.Host, t.At.Format(time.RFC3339), t.Text)
	}
	return b.String()
}

// exportTranscriptions are ts as the exports take them.
func exportTranscriptions(ts []layout.Transcription) []export.Transcription {
	out := make([]export.Transcription, 0, len(ts))
	for _, t := range ts {
		out = append(out, export.Transcription{Page: t.Page, Box: t.Box, Field: t.Field, Text: t.Text, User: t.User, Host: t.Host, At: t.At})
	}
	return out
}
