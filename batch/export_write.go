package batch

// The writing half of Export: one document at a time, verified, rendered
// in memory (what needs the source PDF in a child, export.Renderer), then
// written as a set through store.WriteFiles.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/refbatch/refbatch/batch/export"
	"github.com/refbatch/refbatch/batch/journal"
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
	bag     *export.Bag
	// renderer parses the sources, in a child; nil when no format needs
	// them.
	renderer *export.Renderer
}

func (x *exporter) prepareDest() error {
	if err := x.mkdir(x.o.Dest); err != nil {
		return err
	}
	if _, err := store.SweepTemp(x.o.Dest); err != nil || !x.o.Bag {
		return err
	}
	x.bag = export.NewBag()
	// Until the export ends the bag is unfinished, and says so by having
	// no tag manifest (and no manifest that could disagree with it).
	for _, name := range []string{export.TagManifestFile, export.ManifestFile} {
		if err := os.Remove(filepath.Join(x.o.Dest, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return x.mkdir(filepath.Join(x.o.Dest, export.PayloadDir))
}

func (x *exporter) mkdir(dir string) error {
	if err := os.MkdirAll(dir, x.dirMode); err != nil {
		return err
	}
	return os.Chmod(dir, x.dirMode)
}

// document verifies one document and, when it passes, writes its files.
func (x *exporter) document(ctx context.Context, d journal.Doc) (ExportEvent, error) {
	var findings []Finding
	add := func(kind, file, source, detail string) {
		findings = append(findings, Finding{Kind: kind, File: file, SourceID: source, Detail: detail})
	}
	refuse := func() (ExportEvent, error) {
		x.res.Findings = append(x.res.Findings, findings...)
		return ExportEvent{Kind: "refused", Findings: findings}, nil
	}
	if d.Artifact == "" {
		add(FindingMissingArtifactEntry, x.o.place().describe(), d.SourceID, "a "+string(d.State)+" document has no artifact recorded")
		return refuse()
	}
	a := verifyArtifact(x.st, d, storeName(d.Artifact), x.o.Identities, &VerifyResult{}, add)
	var src []byte
	if slices.Contains(x.o.Formats, FormatPDF) || slices.Contains(x.o.Formats, FormatALTO) {
		src = readVerifiedSource(x.root, d, add)
	} else {
		verifySource(x.root, d, add)
	}
	if a == nil || len(findings) > 0 {
		if len(findings) == 0 {
			add(FindingArtifactUnreadable, filepath.Join(x.st.Dir(), storeName(d.Artifact)), d.SourceID, "not decrypted")
		}
		return refuse()
	}
	names, contents, err := x.render(ctx, d, a, src)
	var re *export.RenderError
	switch {
	case errors.As(err, &re):
		add(FindingExportFailed, d.Path, d.SourceID, re.Reason)
		return refuse()
	case err != nil:
		return ExportEvent{}, err
	}
	dir, prefix := x.o.Dest, ""
	if x.o.Bag {
		dir = filepath.Join(x.o.Dest, export.PayloadDir, safeName(d.SourceID))
		prefix = export.PayloadDir + "/" + safeName(d.SourceID) + "/"
	}
	written, present, err := x.write(dir, prefix, names, contents)
	if err != nil {
		return ExportEvent{}, err
	}
	x.res.Exported++
	return ExportEvent{Kind: "exported", Written: written, Present: present}, nil
}

// render makes a verified document's files, in memory: at most a source
// PDF and its text at a time, whatever the batch's size. The frames and
// the searchable PDF come from the renderer's child; a document it fails
// on is an *export.RenderError.
func (x *exporter) render(ctx context.Context, d journal.Doc, a *Artifact, src []byte) (names []string, contents [][]byte, err error) {
	base := safeName(d.SourceID)
	prov := export.Provenance{
		SourceID: d.SourceID, ManifestLine: d.Line, SourceSHA256: d.SHA256, SourceSize: d.Size,
		ArtifactSHA256: d.ArtifactSHA256, ContentSHA256: a.ContentSHA256,
		State: string(d.State), Reason: string(d.Reason), Band: string(d.Band), Pages: len(a.Pages),
		Lang: a.Provenance.Lang, Engines: a.Provenance.Engines,
		PolicyVersion: a.Provenance.PolicyVersion, Policy: a.Provenance.Policy,
		ReadAt: a.Provenance.CreatedAt, Producer: "refbatch " + Version(),
	}
	if slices.Contains(x.o.Formats, FormatText) {
		names, contents = append(names, base+".txt"), append(contents, []byte(ContentText(a.Pages)))
	}
	var r *export.Rendered
	if x.renderer != nil {
		if r, err = x.renderer.Render(ctx, src, a.Pages, prov, slices.Contains(x.o.Formats, FormatPDF)); err != nil {
			return nil, nil, err
		}
	}
	if slices.Contains(x.o.Formats, FormatALTO) {
		var buf bytes.Buffer
		if err := export.WriteALTO(&buf, a.Pages, r.Frames, prov); err != nil {
			// The artifact and the source disagree on the page count.
			return nil, nil, &export.RenderError{Reason: err.Error()}
		}
		names, contents = append(names, base+".alto.xml"), append(contents, buf.Bytes())
	}
	if slices.Contains(x.o.Formats, FormatPDF) {
		names, contents = append(names, base+".pdf"), append(contents, r.PDF)
	}
	if x.o.Bag {
		b, err := prov.JSON()
		if err != nil {
			return nil, nil, err
		}
		names, contents = append(names, ProvenanceFile), append(contents, b)
	}
	return names, contents, nil
}

// write puts files into dir as one set, skipping those already there with
// the same content, and records them in the bag under prefix.
func (x *exporter) write(dir, prefix string, names []string, contents [][]byte) (written, present int, err error) {
	if err := x.mkdir(dir); err != nil {
		return 0, 0, err
	}
	if x.o.Bag {
		if _, err := store.SweepTemp(dir); err != nil {
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
		path := filepath.Join(dir, name)
		if sameContent(path, sum, len(contents[i])) {
			present++
			if err := os.Chmod(path, x.o.FileMode); err != nil {
				return 0, 0, err
			}
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) > 0 {
		set := make([]string, len(todo))
		for k, i := range todo {
			set[k] = names[i]
		}
		err := store.WriteFiles(dir, set, func(ws []io.Writer) error {
			for k, i := range todo {
				if _, err := ws[k].Write(contents[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, 0, fmt.Errorf("writing %s: %w", dir, err)
		}
		for _, name := range set {
			if err := os.Chmod(filepath.Join(dir, name), x.o.FileMode); err != nil {
				return 0, 0, err
			}
		}
	}
	x.res.Written += len(todo)
	x.res.Present += present
	return len(todo), present, nil
}

// sameContent reports whether the regular file at path holds n bytes that
// hash to sum.
func sameContent(path, sum string, n int) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(n) {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && export.Sum(b) == sum
}

// finishBag writes data/report.json, then the tag files, the tag manifest
// last.
func (x *exporter) finishBag() error {
	rep, err := os.ReadFile(filepath.Join(x.o.Out, report.JSONFile))
	if errors.Is(err, os.ErrNotExist) {
		rep, err = x.buildReport()
	}
	if err != nil {
		return fmt.Errorf("the batch's report: %w", err)
	}
	if _, _, err := x.write(filepath.Join(x.o.Dest, export.PayloadDir), export.PayloadDir+"/", []string{report.JSONFile}, [][]byte{rep}); err != nil {
		return err
	}
	if err := x.checkPayload(); err != nil {
		return err
	}
	names, contents, tagManifest := x.bag.TagFiles(export.BagInfo{
		ExternalIdentifier: x.res.BatchID, Agent: "refbatch " + Version(),
		Documents: x.res.Exported, Date: x.o.Now(),
	})
	if _, _, err := x.write(x.o.Dest, "", names, contents); err != nil {
		return err
	}
	_, _, err = x.write(x.o.Dest, "", []string{export.TagManifestFile}, [][]byte{tagManifest})
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
	rep, err := ReportFromJournal(context.Background(), x.o.place(), "", time.Now())
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
