package review

import (
	"slices"
	"strings"
	"unicode"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/ocr/result"
)

// readManifest fills the source path and the fields from the manifest's
// row at line, read now, and compares them with what was admitted (the
// salted digests of the row j recorded): a field edited since is named
// in ManifestChanged, so that the desk never shows an edited row as if it
// were the admitted one. A manifest that cannot be read leaves them
// empty and says why in ManifestError. The manifest is read as
// manifest.RowAt reads it: a regular file only, never blocking on a FIFO,
// and no further than the row.
func (d *DeskDoc) readManifest(j *journal.Journal, line int) {
	d.Fields = []DeskField{}
	if d.Manifest == "" {
		return
	}
	row, ok, err := manifest.RowAt(d.Manifest, line)
	if err == nil && !ok {
		d.ManifestError = "the manifest has no row at this line any more"
	}
	if err != nil {
		d.ManifestError = err.Error()
	}
	if err != nil || !ok {
		return
	}
	d.SourcePath = row.Path
	d.ManifestChanged = changedFields(j, d.Manifest, row)
	for _, f := range []DeskField{{Name: manifest.ColParticipantID, Value: row.ParticipantID}, {Name: manifest.ColReferralDate, Value: row.ReferralDate}} {
		if f.Value != "" {
			f.Page, f.Box, f.Found = locate(d.Text, f.Value)
		}
		f.Changed = slices.Contains(d.ManifestChanged, f.Name)
		d.Fields = append(d.Fields, f)
	}
}

// changedFields names the fields of row whose digests are not those j
// recorded when the row at its line of path was admitted; none when the
// journal recorded no digests (an earlier build) or they cannot be
// computed (a journal opened read-only with no salt yet).
func changedFields(j *journal.Journal, path string, row manifest.Row) []string {
	st, ok, err := j.Row(path, row.Line)
	if err != nil || !ok || st.Fields == "" {
		return nil
	}
	if st.SourceID != row.SourceID {
		return []string{manifest.ColSourceID}
	}
	now, err := j.Digest(journal.RowFields{Path: row.Path, SHA256: row.SHA256, ParticipantID: row.ParticipantID, ReferralDate: row.ReferralDate})
	if err != nil {
		return nil
	}
	return journal.ChangedFields(st.Fields, now)
}

// locate finds value among the words of pages, compared on letters and
// digits only: the page (from 0) and the word's box.
func locate(pages []result.PageResult, value string) (int, [4]int, bool) {
	want := alnum(value)
	if want == "" {
		return 0, [4]int{}, false
	}
	for _, p := range pages {
		for _, w := range p.Words {
			if strings.Contains(alnum(w.Text), want) {
				return p.Index, w.Box, true
			}
		}
	}
	return 0, [4]int{}, false
}

func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}
