package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/batch/store"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/ocr"
)

// This file is `refbatch join`: another process, on this machine or any
// other that reaches the journal and mounts the batch's folders at the
// same paths, works on a batch a run started. It claims documents of
// every manifest of the batch, reads each under the settings the latest
// run of its manifest recorded, and streams each manifest again once no
// other process is (which admits what a run that died did not reach).

// JoinOptions configure a Join: where the batch is, and what this process
// brings to it. Everything else (the page policy, the caps, the
// recipients) is the batch's, as its runs recorded it.
type JoinOptions struct {
	layout.Place
	// Workers is the number of OCR workers of this process; default the
	// number of CPUs.
	Workers int
	// Worker and Admission start the child processes, as a Run's.
	Worker    layout.Process
	Admission layout.Process
	Logger    *slog.Logger
	Progress  Progress
}

// Join works on the batch at o.Place until no document of it is left
// that this process can take, then writes the report; it returns what
// Run returns. It refuses a journal that holds no batch (ErrNoBatch).
func Join(ctx context.Context, o JoinOptions) (*Result, error) {
	started := time.Now()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = NopProgress{}
	}
	if err := layout.CheckShared(o.Journal); err != nil {
		return nil, err
	}
	j, p, err := layout.OpenJournalRW(ctx, o.Place)
	if err != nil {
		// No journal.db in the folder, or a PostgreSQL database (or
		// schema) no run made a journal of.
		if errors.Is(err, layout.ErrNoJournal) {
			return nil, fmt.Errorf("%w: %v", layout.ErrNoBatch, err)
		}
		return nil, err
	}
	defer j.Close()
	if p.Shared() {
		if p.Out, err = layout.PinOut(j, p.Out); err != nil {
			return nil, err
		}
	}
	batchID, err := j.Meta(layout.MetaBatchID)
	if err != nil {
		return nil, err
	}
	manifests, main, err := joinManifests(j, o)
	switch {
	case err != nil:
		return nil, err
	case batchID == "" || len(manifests) == 0:
		return nil, fmt.Errorf("%w: no run recorded one in %s", layout.ErrNoBatch, p.Describe())
	}
	if _, err := layout.ClaimFolder(j, p.Out); err != nil {
		return nil, err
	}
	if manifests, err = present(j, manifests, o.Logger); err != nil {
		return nil, err
	}
	for _, m := range manifests {
		m.o.Out, m.o.Journal, m.o.batchID = p.Out, p.Journal, batchID
		if err := m.o.Validate(); err != nil {
			return nil, fmt.Errorf("the settings recorded for %s: %w", m.o.Manifest, err)
		}
		if err := ocr.CheckLanguages(m.o.Lang, !m.o.NoOrientation); err != nil {
			return nil, err
		}
		// Read the whole manifest before any work, as a run does.
		if err := checkManifest(m.o.Manifest, o.Logger); err != nil {
			return nil, err
		}
		if _, err := rebindAndCheck(ctx, j, m.o); err != nil {
			return nil, err
		}
	}
	main.Out, main.Journal, main.batchID = p.Out, p.Journal, batchID
	recipients, err := layout.Recipients(j)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(p.Out, layout.ArtifactsDir), recipients)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	owner := journal.NewOwner()
	if err := sweepAtStart(j, st, p.Out, owner, o.Logger); err != nil {
		return nil, err
	}
	runID, err := j.StartRun(owner, main.Settings.EncodeRun("", true), "{}")
	if err != nil {
		return nil, err
	}
	o.Logger.Info("joined the batch", "journal", p.Describe(), "out", p.Out, "workers", main.Workers, "manifests", len(manifests))

	inspector := main.inspector()
	defer inspector.Close()
	r := &runner{o: main, j: j, st: st, owner: owner, log: o.Logger, engines: newEngineFactory(main), inspector: inspector,
		budget: newByteBudget(main.MaxInflightBytes), pages: newPageQueue(), manifests: manifests}
	cpu, runErr := r.session(ctx, runID, sessionEnd{events: func(err error) []journal.RunEnd {
		var ends []journal.RunEnd
		for _, m := range manifests {
			ends = append(ends, runEnd(ctx, batchID, m.o.Manifest, err))
		}
		return ends
	}})
	// The report covers every manifest of the batch.
	rep, err := r.writeReport("", started, cpu)
	if err != nil {
		return nil, diskFull(errors.Join(runErr, err))
	}
	o.Logger.Info("join ended", "complete", rep.Complete, "wall", time.Since(started).Round(time.Millisecond), "cpu_s", cpu)
	return &Result{Report: rep, Out: p.Out, Complete: rep.Complete}, diskFull(runErr)
}

// joinManifests returns the batch's manifests, each under the options of
// the latest run that streamed it, and the options of the batch's latest
// run, which the join records as its own: o's workers and processes, the
// batch's settings. A manifest only an earlier build's run recorded rows
// of takes the latest run's settings.
func joinManifests(j *journal.Journal, o JoinOptions) ([]*manifestWork, Options, error) {
	runs, err := j.Runs()
	if err != nil {
		return nil, Options{}, err
	}
	options := func(s layout.Settings, manifest string) Options {
		s = s.WithDefaults()
		s.Workers = o.Workers
		if s.Workers == 0 {
			s.Workers = runtime.NumCPU()
		}
		opt := Options{Manifest: manifest, Settings: s, Worker: o.Worker, Admission: o.Admission,
			Plaintext: !s.Encrypted, Logger: o.Logger, Progress: o.Progress}.withDefaults()
		opt.Encrypted = s.Encrypted // the batch's recipients, which the store has
		return opt
	}
	var main Options
	found := false
	byManifest := map[string]Options{}
	var order []string
	for _, r := range slices.Backward(runs) {
		s, ok := layout.DecodeSettings(r.Settings)
		if !ok {
			continue
		}
		if !found {
			main, found = options(s, ""), true
		}
		if rec, ok := layout.DecodeRun(r.Settings); ok && rec.Manifest != "" {
			if _, seen := byManifest[rec.Manifest]; !seen {
				byManifest[rec.Manifest] = options(s, rec.Manifest)
				order = append(order, rec.Manifest)
			}
		}
	}
	if !found {
		return nil, Options{}, nil
	}
	recorded, err := j.Manifests()
	if err != nil {
		return nil, Options{}, err
	}
	for _, m := range recorded {
		if _, seen := byManifest[m.Manifest]; !seen {
			byManifest[m.Manifest] = options(main.Settings, m.Manifest)
			order = append(order, m.Manifest)
		}
	}
	slices.Sort(order)
	var out []*manifestWork
	for _, m := range order {
		out = append(out, &manifestWork{o: byManifest[m]})
	}
	return out, main, nil
}

// present leaves out of ms the manifests whose file is gone and whose
// documents are all final: a batch's finished manifest may be moved away
// without stopping its joins. One with work left must be there.
func present(j *journal.Journal, ms []*manifestWork, log *slog.Logger) ([]*manifestWork, error) {
	var out []*manifestWork
	for i, m := range ms {
		if m.o.Manifest == manifest.Stdin {
			if err := stdinLeft(j, m); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := os.Stat(m.o.Manifest); err == nil {
			out = append(out, m)
			continue
		}
		left := 0
		if err := j.QueuedOf([]string{m.o.Manifest}, func(journal.Doc) error { left++; return nil }); err != nil {
			return nil, err
		}
		if left > 0 {
			out = append(out, m) // its check says what is wrong
			continue
		}
		// The manifest's path is not logged: it names the sources' folder.
		log.Warn("a manifest of the batch is gone and its documents are final: leaving it out", "manifest", i+1, "of", len(ms))
	}
	return out, nil
}

// ErrStdinManifest means a join would work on documents of a manifest a
// run read from its standard input, which no other process can read again.
var ErrStdinManifest = errors.New("the batch has documents left of a manifest read from the standard input (-), which a join cannot read again")

// stdinLeft refuses a join of a batch whose manifest from the standard
// input has documents left: only `run -` given the same bytes reads it.
// One with none left is left out.
func stdinLeft(j *journal.Journal, m *manifestWork) error {
	left := 0
	if err := j.QueuedOf([]string{m.o.Manifest}, func(journal.Doc) error { left++; return nil }); err != nil {
		return err
	}
	if left > 0 {
		return fmt.Errorf("%w: %d documents", ErrStdinManifest, left)
	}
	return nil
}
