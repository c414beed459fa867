package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/refbatch/refbatch/batch/journal"
	"github.com/refbatch/refbatch/batch/layout"
	"github.com/refbatch/refbatch/manifest"
	"github.com/refbatch/refbatch/report/outcome"
)

// This file validates a document again from its artifact, with no OCR:
// validation is a function of the artifact's text, the manifest row and
// the settings, so a rerun whose validation settings changed
// (--no-id-check, the confidence bands, --coverage-threshold) moves the
// documents in review that no person decided to their new verdict, each
// as a revalidated event.

// Revalidated counts what a run validated again from artifacts.
type Revalidated struct {
	// Documents were validated again; Moved of them changed state or
	// reason.
	Documents int `json:"documents"`
	Moved     int `json:"moved"`
	// Amended counts the rows whose corrected participant_id or
	// referral_date this run validated their documents against.
	Amended int `json:"amended"`
	// NeedIdentity counts the documents in review validated under other
	// settings that this run could not read: their artifacts are
	// encrypted and it was given no identity.
	NeedIdentity int `json:"need_identity"`
}

// revalidation is a runner's state for validating again.
type revalidation struct {
	once    sync.Once
	changed bool // some earlier run validated under other settings
	err     error

	documents, moved, needIdentity, amended atomic.Int64
}

func (rv *revalidation) counts() Revalidated {
	return Revalidated{Documents: int(rv.documents.Load()), Moved: int(rv.moved.Load()), NeedIdentity: int(rv.needIdentity.Load()),
		Amended: int(rv.amended.Load())}
}

// validationKey names the settings validation decides by: the bands, the
// coverage threshold and the checks that run.
func validationKey(s layout.Settings) string {
	return fmt.Sprint(s.HighConfidence, "/", s.LowConfidence, "/", s.CoverageThreshold, "/", s.Validation())
}

// artifactValidationKey is the validationKey an artifact's policy
// records.
func artifactValidationKey(p map[string]any) string {
	var rec struct {
		High       float64 `json:"high_confidence"`
		Low        float64 `json:"low_confidence"`
		Coverage   float64 `json:"coverage_threshold"`
		Validation string  `json:"validation"`
	}
	b, _ := json.Marshal(p)
	if json.Unmarshal(b, &rec) != nil {
		return ""
	}
	return fmt.Sprint(rec.High, "/", rec.Low, "/", rec.Coverage, "/", rec.Validation)
}

// validationReasons are the review reasons validation gives: a document
// in review for one of them has an artifact to validate again.
var validationReasons = []outcome.Reason{outcome.EmptyText, outcome.LowConfidence, outcome.IncompleteText, outcome.IDNotFound, outcome.DateNotFound}

// validationChanged reports whether an earlier run of the batch recorded
// other validation settings than o's: only then may a document in review
// have a verdict o would not give.
func (r *runner) validationChanged(o Options) (bool, error) {
	r.reval.once.Do(func() {
		runs, err := r.j.Runs()
		if err != nil {
			r.reval.err = err
			return
		}
		key := validationKey(o.Settings)
		for _, run := range runs {
			if s, ok := layout.DecodeSettings(run.Settings); ok && validationKey(s.WithDefaults()) != key {
				r.reval.changed = true
			}
		}
	})
	return r.reval.changed, r.reval.err
}

// revalidate validates again, from its artifact, the document of a row in
// review for a validation reason when the run's validation settings
// differ from those it was validated under; it returns the row as it
// then stands. A document whose artifact this run cannot read (encrypted,
// no identity) is counted and left as it is.
func (r *runner) revalidate(o Options, row manifest.Row, st journal.RowStatus) (journal.RowStatus, bool, error) {
	if st.State != outcome.Review || !slices.Contains(validationReasons, st.Reason) {
		return st, true, nil
	}
	if changed, err := r.validationChanged(o); err != nil || !changed {
		return st, true, err
	}
	d, err := r.j.Document(st.DocID)
	if err != nil || d.Artifact == "" {
		return st, true, err
	}
	key := validationKey(o.Settings)
	if last, err := r.j.LatestValidation(d.ID); err != nil || last == key {
		return st, true, err
	}
	if r.st.Encrypted() && len(o.Identities) == 0 {
		r.reval.needIdentity.Add(1)
		return st, true, nil
	}
	a, err := layout.OpenArtifact(r.st, d, o.Identities)
	if err != nil {
		// verify names what is wrong with it; the row stays in review.
		r.log.Warn("cannot read an artifact to validate it again", "line", row.Line, "source_id", row.SourceID, "err", err)
		return st, true, nil
	}
	if artifactValidationKey(a.Provenance.Policy) == key {
		return st, true, nil
	}
	rv := r.verdictFrom(a, d, row, o)
	if err := r.j.Revalidate(o.Manifest, row.Line, journal.EventRevalidated, rv, ""); err != nil {
		if errors.Is(err, journal.ErrVerdictMoved) {
			return r.reread(o, row)
		}
		return st, true, err
	}
	r.reval.documents.Add(1)
	if rv.State != rv.FromState || rv.Reason != rv.FromReason {
		r.reval.moved.Add(1)
	}
	r.log.Info("validated again from its artifact: the validation settings changed", "line", row.Line, "source_id", row.SourceID,
		"was", st.Reason, "now", string(rv.State)+" "+string(rv.Reason))
	return r.reread(o, row)
}

// verdictFrom validates artifact a of document d against row under o.
func (r *runner) verdictFrom(a *layout.Artifact, d journal.Doc, row manifest.Row, o Options) journal.Revalidation {
	id, date := row.ParticipantID, row.ReferralDate
	if o.NoIDCheck {
		id, date = "", ""
	}
	v := validate(a.Pages, id, date, o)
	return journal.Revalidation{FromState: d.State, FromReason: d.Reason, State: v.state, Reason: v.reason,
		MeanConfidence: v.meanConf, Band: v.band, Artifact: d.Artifact, ArtifactSHA256: d.ArtifactSHA256,
		ArtifactSize: d.ArtifactSize, Validation: validationKey(o.Settings), Detail: v.detail, Pages: v.pages}
}

// amendable reports whether the fields changed are all ones validation
// checks (participant_id, referral_date): the document is the same, and
// its artifact can be validated against the corrected row.
func amendable(changed []string) bool {
	for _, f := range changed {
		if f != journal.FieldParticipantID && f != journal.FieldReferralDate {
			return false
		}
	}
	return len(changed) > 0
}

// amend validates the document of a done or review row whose
// participant_id or referral_date was corrected again, from its artifact,
// against the corrected row, and records an amended event: who, which
// fields and their salted digests before and after (fields is the row's
// new digests). handled is false when it could not (no artifact, an
// engine's review reason, an encrypted artifact and no identity, an
// artifact it cannot read): the caller does what it did before.
func (r *runner) amend(o Options, row manifest.Row, st journal.RowStatus, fields string, changed []string) (_ journal.RowStatus, seen, handled bool, err error) {
	if st.State == outcome.Review && !slices.Contains(validationReasons, st.Reason) {
		return st, true, false, nil
	}
	d, err := r.j.Document(st.DocID)
	if err != nil || d.Artifact == "" || (r.st.Encrypted() && len(o.Identities) == 0) {
		return st, true, err != nil, err
	}
	a, err := layout.OpenArtifact(r.st, d, o.Identities)
	if err != nil {
		r.log.Warn("cannot read an artifact to validate a corrected row against it", "line", row.Line, "source_id", row.SourceID, "err", err)
		return st, true, false, nil
	}
	rv := r.verdictFrom(a, d, row, o)
	rv.User, rv.Fields = o.User, changed
	rv.Host, _ = os.Hostname()
	rv.Before, rv.After = digestsOf(st.Fields, changed), digestsOf(fields, changed)
	if err := r.j.Revalidate(o.Manifest, row.Line, journal.EventAmended, rv, fields); err != nil {
		if errors.Is(err, journal.ErrVerdictMoved) {
			st, seen, err = r.reread(o, row)
			return st, seen, true, err
		}
		return st, true, true, err
	}
	r.reval.amended.Add(1)
	r.log.Info("row amended: its document validated again from its artifact", "line", row.Line, "source_id", row.SourceID,
		"fields", changed, "was", string(st.State)+" "+string(st.Reason), "now", string(rv.State)+" "+string(rv.Reason))
	st, seen, err = r.reread(o, row)
	return st, seen, true, err
}

// digestsOf are the digests (a rows.fields value) of the fields named.
func digestsOf(stored string, names []string) map[string]string {
	var all map[string]string
	if json.Unmarshal([]byte(stored), &all) != nil {
		return nil
	}
	out := map[string]string{}
	for _, n := range names {
		out[n] = all[n]
	}
	return out
}
