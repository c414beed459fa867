package batch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/manifest"
)

// rebind binds the journal's rows of the manifest at path to their
// source_id before a run or a join streams it (journal.Rebind): a row
// that moved (the manifest sorted, rows inserted or deleted above it)
// keeps its verdict and its work at its new line, a row no longer in the
// manifest is withdrawn, one back in it is restored. It holds the
// manifest's admission hold while it moves rows, so that no process
// streams the manifest meanwhile, and waits for it (until ctx ends) when
// another process has it. When every row is where the journal has it, it
// moves nothing and takes no hold: two runs of one manifest work side by
// side as before.
func rebind(ctx context.Context, j *journal.Journal, path string, log *slog.Logger) (journal.Rebinding, error) {
	lines, err := manifestLines(path)
	if err != nil {
		return journal.Rebinding{}, err
	}
	if plan, err := j.PlanRebind(path, lines); err != nil || !plan.Changed() {
		return journal.Rebinding{}, err // the common rerun: nothing moved
	}
	owner := journal.NewOwner()
	for waited := false; ; waited = true {
		ok, err := j.HoldAdmission(path, owner, leaseTTL)
		if err != nil {
			return journal.Rebinding{}, err
		}
		if ok {
			break
		}
		if !waited {
			log.Info("another process is admitting the manifest's rows; waiting to bind them to their source_id")
		}
		select {
		case <-ctx.Done():
			return journal.Rebinding{}, ctx.Err()
		case <-time.After(holdPoll):
		}
	}
	b, err := j.Rebind(path, lines)
	if rerr := j.ReleaseAdmission(path, owner); rerr != nil {
		log.Warn("could not release the admission hold", "error", rerr)
	}
	if err != nil {
		return b, err
	}
	if b.Changed() {
		log.Info("manifest rows bound to their source_id", "moved", len(b.Moved), "withdrawn", len(b.Withdrawn), "restored", len(b.Restored))
	}
	return b, nil
}

// rebindAndCheck binds the rows of o's manifest to their source_id
// (rebind), then refuses, before any work, an edit the journal's verdicts
// forbid (checkEdits).
func rebindAndCheck(ctx context.Context, j *journal.Journal, o Options) (journal.Rebinding, error) {
	b, err := rebind(ctx, j, o.Manifest, o.Logger)
	if err != nil {
		return b, err
	}
	return b, checkEdits(j, o.Manifest, o.Plaintext || len(o.Identities) > 0)
}

// manifestLines reads the line and source_id of every row of the
// manifest at path.
func manifestLines(path string) ([]journal.ManifestLine, error) {
	f, err := manifest.Open(path)
	if err != nil {
		return nil, &manifest.FileError{Msg: "cannot open the manifest", Err: err}
	}
	defer f.Close()
	mr, err := manifest.NewReader(f)
	if err != nil {
		return nil, err
	}
	var out []journal.ManifestLine
	for {
		row, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, journal.ManifestLine{Line: row.Line, SourceID: row.SourceID})
	}
}
