package batch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
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
		if o.Root != "" || o.RootLog != "" {
			return fmt.Errorf("%w: this journal has no custody log (an earlier refbatch wrote it); a run of this build adds one, from then on", ErrNoCustodyLog)
		}
		return nil
	}
	res.Custody = &report.Custody{Root: chain.Root.Hash, Events: chain.Root.Events}
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
	id, err := j.Meta(metaBatchID)
	if err != nil {
		return err
	}
	entries, err := ReadRootLog(o.RootLog, id)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("%w: %s has no entry for batch %s", ErrNoCustodyLog, o.RootLog, id)
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

// ErrRootLogInOut means --root-log names a file inside the output folder,
// which whoever can rewrite the journal can rewrite too.
var ErrRootLogInOut = errors.New("the root log must be kept outside the output folder")

// ErrNoCustodyLog means verify was asked to check a root against a
// journal that has none, or a root log that has no entry for the batch.
var ErrNoCustodyLog = errors.New("no custody log to check")

// RootLogEntry is one line of a root log: a run's final batch root, with
// when it was written and what the batch held. The log is JSON lines,
// appended to, never rewritten.
type RootLogEntry struct {
	Time   time.Time `json:"time"`
	Batch  string    `json:"batch"`
	Root   string    `json:"root"`
	Events int64     `json:"events"`
	// Rows counts the batch's rows per state.
	Rows map[outcome.State]int `json:"rows"`
}

// AppendRootLog appends the batch root of the report to the root log at
// path (created 0600), and syncs it: the log an auditor keeps outside the
// output folder.
func AppendRootLog(path, batch string, rep *report.Report, now time.Time) error {
	if rep.Custody == nil {
		return fmt.Errorf("root log %s: %w", path, ErrNoCustodyLog)
	}
	line, err := json.Marshal(RootLogEntry{Time: now.UTC(), Batch: batch, Root: rep.Custody.Root, Events: rep.Custody.Events, Rows: rep.Summary.States})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("root log: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("root log %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("root log %s: %w", path, err)
	}
	return f.Close()
}

// ReadRootLog returns the entries of the root log at path for batch, in
// the order they were appended. A line that is not an entry is an error
// naming it: a root log is the auditor's, and a damaged one must show.
func ReadRootLog(path, batch string) ([]RootLogEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("root log: %w", err)
	}
	defer f.Close()
	var out []RootLogEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var e RootLogEntry
		if err := json.Unmarshal([]byte(text), &e); err != nil || e.Root == "" {
			return nil, fmt.Errorf("root log %s, line %d: not an entry refbatch wrote", path, n)
		}
		if e.Batch == batch {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("root log %s: %w", path, err)
	}
	return out, nil
}
