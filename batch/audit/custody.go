package audit

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/report"
)

// FindingJournalRewritten: the journal's custody log, or a table against
// it, shows a rewrite (an event edited, removed, inserted or moved; a row
// edited, deleted or inserted behind the log), or the log does not reach
// a pinned root. The finding names the event or the row.
const FindingJournalRewritten = "journal_rewritten"

// verifyCustody recomputes the journal's custody log, checks every table
// against it, and checks the pinned root and the root log's entries
// against it.
func verifyCustody(j *journal.Journal, o VerifyOptions, res *VerifyResult, dbPath string, add func(kind, file, source, detail string)) error {
	chain, err := j.CheckChain()
	if err != nil {
		add(FindingJournalCorrupt, dbPath, "", err.Error())
		return nil
	}
	if chain.Legacy {
		res.Legacy = true
		if o.Root != "" || o.RootLog != "" {
			return fmt.Errorf("%w: this journal has no custody log (an earlier refbatch wrote it); a run of this build adds one, from then on", layout.ErrNoCustodyLog)
		}
		return nil
	}
	res.Custody = &report.Custody{Root: chain.Root.Hash, Events: chain.Root.Events, Pending: chain.Pending}
	for _, p := range chain.Problems {
		add(FindingJournalRewritten, dbPath, p.SourceID, p.Subject+": "+p.Detail)
	}
	if o.Root != "" {
		if n, ok := chain.Position(o.Root); ok {
			res.PinnedAt = n
		} else {
			add(FindingJournalRewritten, dbPath, "", fmt.Sprintf("the pinned root %s is not in the custody log of %d events: the journal was rewritten up to it, or the root is another batch's",
				o.Root, chain.Root.Events))
		}
	}
	if o.RootLog == "" {
		return nil
	}
	id, err := j.Meta(layout.MetaBatchID)
	if err != nil {
		return err
	}
	entries, err := layout.ReadRootLog(o.RootLog, id)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("%w: %s has no entry for batch %s", layout.ErrNoCustodyLog, o.RootLog, id)
	}
	for i, e := range entries {
		n, ok := chain.Position(e.Root)
		switch {
		case !ok:
			add(FindingJournalRewritten, dbPath, "", fmt.Sprintf("the root log's entry of %s (root %s after %d events) is not in the custody log: the journal was rewritten up to it",
				e.Time.Format(time.RFC3339), e.Root, e.Events))
		case n != e.Events:
			add(FindingJournalRewritten, dbPath, "", fmt.Sprintf("the root log's entry of %s has root %s after %d events, the custody log after %d: events were added or removed before it",
				e.Time.Format(time.RFC3339), e.Root, e.Events, n))
		case i == len(entries)-1:
			res.PinnedAt = n
		}
	}
	return nil
}

// verifyBatch reports a journal of another batch than out's marker, and
// returns the journal's batch ID. A folder with no marker (one an earlier
// refbatch wrote) has nothing to compare.
func verifyBatch(j *journal.Journal, out string, add func(kind, file, source, detail string)) (string, error) {
	id, err := j.Meta(layout.MetaBatchID)
	if err != nil {
		return "", err
	}
	path := filepath.Join(out, layout.MarkerFile)
	marker, err := layout.ReadMarker(out)
	switch {
	case err != nil:
		add(FindingBatchMismatch, path, "", err.Error())
	case marker != "" && marker != id:
		add(FindingBatchMismatch, path, "", fmt.Sprintf("the folder is of batch %s, %s of batch %s", marker, journal.Redact(j.Path()), layout.OrNone(id)))
	}
	return id, nil
}
