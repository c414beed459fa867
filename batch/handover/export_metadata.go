package handover

import (
	"bytes"
	"encoding/csv"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/manifest"
)

// MetadataFile is the bag's table of whose letter is whose: one line per
// document exported, with its manifest fields and the decision a person
// made about it. It is in the payload, beside report.json.
const MetadataFile = "metadata.csv"

// metadataHeader are MetadataFile's columns.
var metadataHeader = []string{"source_id", "participant_id", "referral_date", "state", "decision", "decision_note"}

// metadata renders MetadataFile for the documents exported, in their
// order. The participant ID and referral date are read again from the
// row's manifest (the journal keeps neither): empty when the manifest
// cannot be read any more, was read from the standard input, or no
// longer has the row (withdrawn). Export is the deliberate plaintext
// hand-over, and the archive needs to know whose letter each one is.
func metadata(j *journal.Journal, docs []journal.Doc, history map[int64]*provHistory) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(metadataHeader)
	indexes := map[string]*manifest.Index{}
	for _, d := range docs {
		rec := []string{d.SourceID, "", "", string(d.State), "", ""}
		path, line, ok, err := j.OwnerRow(d.ID)
		if err != nil {
			return nil, err
		}
		if ok && line > 0 && path != manifest.Stdin {
			x, seen := indexes[path]
			if !seen {
				x, _ = manifest.NewIndex(path) // nil: unreadable now
				indexes[path] = x
			}
			if x != nil {
				if row, ok, err := x.Row(line); err == nil && ok && row.SourceID == d.SourceID {
					rec[1], rec[2] = row.ParticipantID, row.ReferralDate
				}
			}
		}
		if h := history[d.ID]; h != nil && len(h.decisions) > 0 {
			last := h.decisions[len(h.decisions)-1]
			rec[4], rec[5] = last.Action, last.Note
		}
		w.Write(rec)
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}
