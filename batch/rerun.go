package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file is what a rerun does with a manifest row the journal has seen
// (README "Rerunning after fixes"):
//
//   - a row refused at parsing or admission is admitted again when its
//     admission key changed: the row as written, the file's stat, or the
//     admission settings. An unchanged key keeps the verdict, so a hostile
//     file is never inspected twice. A conflict is never admitted again.
//   - a row whose document was refused while queued (its file vanished or
//     became unreadable between runs) likewise.
//   - an admitted row whose fields (path, sha256, participant_id,
//     referral_date) changed: a done or review row whose participant_id
//     or referral_date alone changed is amended, its artifact validated
//     again against them (revalidate.go); otherwise its document is read
//     again when it is in review, and a done row (or a duplicate) is
//     refused with a *RowChangedError, before any work.

// RowChangedError is a manifest row that changed in fields that decide its
// document, while the journal holds a verdict that must not be replaced:
// the row is done, or a duplicate. It wraps journal.ErrManifestChanged.
type RowChangedError struct {
	Line     int
	SourceID string
	Fields   []string      // the manifest columns that changed
	State    outcome.State // the row's state in the journal
	// NeedIdentity is set for a done row whose participant_id or
	// referral_date alone changed: an amendment, which reads the
	// artifact, and the batch's are encrypted with no identity given.
	NeedIdentity bool
}

func (e *RowChangedError) Error() string {
	return fmt.Sprintf("manifest line %d (%s, %s) changed in %s since the journal recorded it", e.Line, e.SourceID, e.State, strings.Join(e.Fields, ", "))
}

func (e *RowChangedError) Unwrap() error { return journal.ErrManifestChanged }

// revisit applies the rerun rules above to a row of o's manifest the
// journal has seen as st, before the pass goes on with it. It returns the
// row's status as it now stands; seen is false when the row was removed
// to be admitted as a new row.
func (r *runner) revisit(o Options, row manifest.Row, st journal.RowStatus) (_ journal.RowStatus, seen bool, err error) {
	// A conflict keeps the first document; a person's rejection stands
	// until a person says otherwise.
	if st.State == outcome.Rejected && st.Reason != outcome.Conflict && st.Reason != outcome.RejectedByPerson {
		key := admitKey(o, row)
		switch {
		case st.AdmitKey == key:
			return st, true, nil
		case st.AdmitKey == "" && !readmitUnkeyed(st):
			// Recorded by an earlier build, or by the OCR worker: keep
			// the verdict, and compare with what decided it from now on.
			return st, true, r.j.SetAdmitKey(o.Manifest, row.Line, key)
		}
		if err := r.j.Readmit(st); err != nil {
			if errors.Is(err, journal.ErrNotReadmittable) {
				return r.reread(o, row)
			}
			return st, true, err
		}
		r.log.Info("row admitted again: the row, its file or the admission settings changed", "line", row.Line,
			"source_id", row.SourceID, "was", st.Reason)
		if st.DocID == 0 {
			return journal.RowStatus{}, false, nil
		}
		if st, seen, err = r.reread(o, row); err != nil || !seen {
			return st, seen, err
		}
	}
	if st.DocID == 0 || st.SourceID != row.SourceID {
		return st, true, nil // pass refuses another source_id
	}
	fields, err := r.j.Digest(rowFields(row))
	if err != nil {
		return st, true, err
	}
	if st.Fields == "" {
		return st, true, r.j.SetRowFields(o.Manifest, row.Line, fields)
	}
	changed := journal.ChangedFields(st.Fields, fields)
	switch {
	case len(changed) == 0:
		return r.revalidate(o, row, st)
	case st.State == outcome.Review || st.State == outcome.Queued:
		if st.State == outcome.Review && amendable(changed) {
			if st, seen, handled, err := r.amend(o, row, st, fields, changed); handled {
				return st, seen, err
			}
		}
		if err := r.j.Requeue(o.Manifest, row.Line, fields, changed); err != nil {
			if errors.Is(err, journal.ErrNotReadmittable) {
				return r.reread(o, row)
			}
			return st, true, err
		}
		r.log.Info("row changed: its document is read again", "line", row.Line, "source_id", row.SourceID,
			"fields", strings.Join(changed, ","), "was", st.Reason)
		return r.reread(o, row)
	}
	if st.State == outcome.Done && amendable(changed) {
		if st, seen, handled, err := r.amend(o, row, st, fields, changed); handled {
			return st, seen, err
		}
	}
	if st.State == outcome.Done || st.State == outcome.Duplicate {
		// checkEdits refuses these before any work; a process beside
		// this one may have finished the document since.
		return st, true, &RowChangedError{Line: row.Line, SourceID: st.SourceID, Fields: changed, State: st.State}
	}
	return st, true, nil // rejected for good (a conflict, or the engines' verdict): it stands
}

// checkEdits streams the manifest before a run does any work and refuses
// the first row whose recorded verdict an edit would contradict: a done
// row or a duplicate whose fields changed (*RowChangedError), or an
// admitted row that now names another source_id. It writes nothing.
//
// A done row whose participant_id or referral_date alone changed is an
// amendment (revalidate.go), not refused, when the run can read its
// artifact (canRead: a plaintext batch, or identities given).
func checkEdits(j *journal.Journal, path string, canRead bool) error {
	if salt, err := j.Meta("field_salt"); err != nil || salt == "" {
		return err // no row has digests yet
	}
	f, err := manifest.Open(path)
	if err != nil {
		return &manifest.FileError{Msg: "cannot open the manifest", Err: err}
	}
	defer f.Close()
	mr, err := manifest.NewReader(f)
	if err != nil {
		return err
	}
	for {
		row, err := mr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		st, seen, err := j.Row(path, row.Line)
		if err != nil || !seen || st.DocID == 0 {
			if err != nil {
				return err
			}
			continue
		}
		if st.SourceID != row.SourceID {
			return fmt.Errorf("line %d: journal has source_id %q, manifest %q: %w", row.Line, st.SourceID, row.SourceID, journal.ErrManifestChanged)
		}
		if st.State != outcome.Done && st.State != outcome.Duplicate {
			continue
		}
		fields, err := j.Digest(rowFields(row))
		if err != nil {
			return err
		}
		changed := journal.ChangedFields(st.Fields, fields)
		amend := st.State == outcome.Done && amendable(changed)
		if len(changed) > 0 && !(amend && canRead) {
			return &RowChangedError{Line: row.Line, SourceID: st.SourceID, Fields: changed, State: st.State, NeedIdentity: amend}
		}
	}
}

func (r *runner) reread(o Options, row manifest.Row) (journal.RowStatus, bool, error) {
	return r.j.Row(o.Manifest, row.Line)
}

// rowFields are the row's values its field digests cover.
func rowFields(row manifest.Row) journal.RowFields {
	return journal.RowFields{Path: row.Path, SHA256: row.SHA256, ParticipantID: row.ParticipantID, ReferralDate: row.ReferralDate}
}

// readmitUnkeyed reports whether a rejected row recorded without an
// admission key is admitted again all the same. Its key is unknown (an
// earlier build, or the OCR worker refused the file), so whether anything
// changed is too: a verdict found without parsing the file (the row itself,
// the path, the file's size or bytes) is cheap to find again, while one
// that parsing found stands, so a hostile file is not parsed again.
func readmitUnkeyed(st journal.RowStatus) bool {
	switch st.Reason {
	case outcome.Encrypted, outcome.MalformedPDF, outcome.TooManyPages, outcome.PageTooLarge, outcome.UnparseablePDF:
		return false
	}
	// A document refused by the OCR worker for an engine's verdict has
	// no key either; those reasons are the parse ones above.
	return true
}

// admitKey is the row's admission key: a SHA-256 over what decided its
// verdict. A row the manifest parser refused is decided by what it says
// alone. Any other by that, the file's stat (device, inode, size, mode and
// modification time, or the kind of error stat gave), and the settings
// admission applies: the root, the byte and page caps, the page policy's
// resolution and pixel cap, and the admission children's memory and time,
// as o sets them.
func admitKey(o Options, row manifest.Row) string {
	h := sha256.New()
	put := func(s string) { h.Write([]byte(strconv.Itoa(len(s)) + ":" + s + ";")) }
	put("admit-key/1")
	for _, v := range row.Raw {
		put(v)
	}
	if row.Err == nil {
		lim := o.Limits().WithDefaults()
		put(statKey(o.Root, row.Path))
		put(fmt.Sprint(o.Root, lim.MaxBytes, lim.MaxPages, lim.Page.DPI, lim.Page.MinDPI, lim.Page.MaxPagePixels,
			o.AdmitMemory, o.AdmitTimeout))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// statKey is what stat says of the file a manifest path names, joined to
// root as written (no symlink is resolved: stat follows them, and the key
// only has to change when the file does).
func statKey(root, path string) string {
	if path == "" {
		return "empty"
	}
	p := filepath.Clean(path)
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	case errors.Is(err, fs.ErrPermission):
		return "denied"
	case err != nil:
		return "error"
	}
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprint(fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
	}
	return fmt.Sprint(s.Dev, s.Ino, s.Size, fi.Mode(), s.Mtim.Nano(), s.Ctim.Nano())
}
