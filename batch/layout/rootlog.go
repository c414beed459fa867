package layout

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/refbatch/refbatch/report"
	"github.com/refbatch/refbatch/report/outcome"
)

// The root log: a file an auditor keeps outside the output folder, to
// which each run appends its final batch root, and against which verify
// checks the journal's custody log.

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
	// Without blocking: a FIFO given as the root log is refused, not
	// waited on.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("root log: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("root log %s: not a regular file", path)
	}
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
