package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// write puts the corpus below o.Out. It refuses to write over an earlier
// corpus, because stale documents left from a larger run would be mixed
// into the new one.
func (c *corpus) write(out string) error {
	for _, name := range []string{"manifest.csv", "expected.csv", "docs", "truth"} {
		if _, err := os.Lstat(filepath.Join(out, name)); err == nil {
			return fmt.Errorf("%s already holds a corpus (%s exists); remove it or choose another --out", out, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checking the output folder: %w", err)
		}
	}
	for _, d := range []string{"docs", "truth"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return fmt.Errorf("creating the output folder: %w", err)
		}
	}
	for _, f := range c.Files {
		p := filepath.Join(out, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("creating the folder of %s: %w", f.Path, err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	for _, t := range c.Truth {
		data, err := json.MarshalIndent(t, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the truth of %s: %w", t.SourceID, err)
		}
		if err := os.WriteFile(filepath.Join(out, "truth", t.SourceID+".json"), append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("writing the truth of %s: %w", t.SourceID, err)
		}
	}
	expected := [][]string{{"source_id", "state", "reason"}}
	for _, r := range c.Rows {
		expected = append(expected, []string{r.SourceID, r.State, r.Reason})
	}
	manifest, err := c.manifest()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "manifest.csv"), manifest, 0o644); err != nil {
		return fmt.Errorf("writing manifest.csv: %w", err)
	}
	return writeCSV(filepath.Join(out, "expected.csv"), expected)
}

// manifest encodes manifest.csv. With Quirks it is written the way
// spreadsheet exports on another system come: a UTF-8 byte order mark,
// CRLF line ends, header names in another case, an extra notes column
// whose values hold commas and quotes, a blank line, and one record cut
// short.
func (c *corpus) manifest() ([]byte, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	header := []string{"source_id", "participant_id", "referral_date", "consent", "path", "sha256"}
	if c.Quirks {
		b.WriteString("\ufeff")
		w.UseCRLF = true
		header = []string{"Source_ID", "Participant_ID", "Referral_Date", "Consent", "Path", "SHA256", "Notes"}
	}
	if err := w.Write(header); err != nil {
		return nil, fmt.Errorf("encoding manifest.csv: %w", err)
	}
	// The blank line's place is reckoned without the hard and coverage
	// rows, which are appended to a manifest that is otherwise unchanged.
	base := 0
	for _, r := range c.Rows {
		if !r.Hard && !r.Coverage {
			base++
		}
	}
	for i, r := range c.Rows {
		rec := []string{r.SourceID, r.ParticipantID, r.ReferralDate, r.Consent, r.Path, r.SHA256}
		if c.Quirks {
			rec = append(rec, r.Notes)
			if r.Short {
				rec = rec[:3]
			}
			if i == base/2 {
				// A blank line, as hand edits leave; readers skip it.
				w.Flush()
				b.WriteString("\r\n")
			}
		}
		if err := w.Write(rec); err != nil {
			return nil, fmt.Errorf("encoding manifest.csv: %w", err)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("encoding manifest.csv: %w", err)
	}
	return []byte(b.String()), nil
}

func writeCSV(path string, records [][]string) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(records); err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}
