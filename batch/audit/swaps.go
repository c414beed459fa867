package audit

// This file turns verify's hash mismatches into the finding that names
// the fault: two artifacts swapped are one finding, not two mismatches.

import (
	"errors"

	"github.com/refbatch/refbatch/batch/store"
)

// hashMismatch is an artifact whose bytes (got) are not those the journal
// recorded for it (want).
type hashMismatch struct{ file, got, want string }

// foldSwaps replaces, in findings, each pair of hash mismatches whose
// artifacts hold each other's recorded bytes with one artifacts_swapped
// finding naming both: the fault is one swap, not two alterations.
func foldSwaps(findings []Finding, ms []hashMismatch) []Finding {
	byWant := map[string]hashMismatch{}
	for _, m := range ms {
		byWant[m.want] = m
	}
	swapped := map[string]string{} // file: the file it was swapped with
	for _, m := range ms {
		o, ok := byWant[m.got]
		if ok && o.got == m.want && o.file != m.file && swapped[m.file] == "" && swapped[o.file] == "" {
			swapped[m.file], swapped[o.file] = o.file, m.file
		}
	}
	if len(swapped) == 0 {
		return findings
	}
	sources := map[string]string{}
	for _, f := range findings {
		if f.Kind == FindingArtifactHash {
			sources[f.File] = f.SourceID
		}
	}
	var out []Finding
	for _, f := range findings {
		other, ok := swapped[f.File]
		switch {
		case !ok || f.Kind != FindingArtifactHash:
			out = append(out, f)
		case f.File < other:
			out = append(out, Finding{Kind: FindingArtifactsSwapped, File: f.File, SourceID: f.SourceID,
				OtherFile: other, OtherSourceID: sources[other], Detail: "each holds the bytes the journal recorded for the other"})
		}
	}
	return out
}

// sizeMismatch is an artifact refused unread because its size (got) is
// not the one the journal recorded for it (want, with the hash wantSHA).
type sizeMismatch struct {
	name, file, sourceID string
	got, want            int64
	wantSHA              string
}

// noteSizeMismatch keeps the artifact name (at file) when err refused it
// for its size, for unsizeSwaps.
func (r *VerifyResult) noteSizeMismatch(err error, name, file, sourceID, wantSHA string) {
	var se *store.SizeError
	if errors.As(err, &se) {
		r.sizeMismatches = append(r.sizeMismatches, sizeMismatch{name, file, sourceID, se.Size, se.Want, wantSHA})
	}
}

// unsizeSwaps finds, among the artifacts refused for their size, the
// pairs each of which is the size the journal recorded for the other:
// each is then read, bounded by that recorded size, and when each holds
// the bytes recorded for the other, their two size findings become two
// hash mismatches, which foldSwaps folds into one artifacts_swapped.
func (r *VerifyResult) unsizeSwaps(st *store.Store, findings []Finding) []Finding {
	swapped := map[string]bool{}
	for i, a := range r.sizeMismatches {
		for _, b := range r.sizeMismatches[i+1:] {
			if swapped[a.file] || swapped[b.file] || a.got != b.want || b.got != a.want {
				continue
			}
			sa, errA := st.HashSized(a.name, store.Exactly(a.got))
			sb, errB := st.HashSized(b.name, store.Exactly(b.got))
			if errA != nil || errB != nil || sa != b.wantSHA || sb != a.wantSHA {
				continue
			}
			swapped[a.file], swapped[b.file] = true, true
			r.mismatches = append(r.mismatches, hashMismatch{a.file, sa, a.wantSHA}, hashMismatch{b.file, sb, b.wantSHA})
		}
	}
	if len(swapped) == 0 {
		return findings
	}
	out := findings[:0]
	for _, f := range findings {
		if swapped[f.File] && (f.Kind == FindingArtifactOversized || f.Kind == FindingArtifactUndersized) {
			f.Kind, f.Detail = FindingArtifactHash, ""
		}
		out = append(out, f)
	}
	return out
}
